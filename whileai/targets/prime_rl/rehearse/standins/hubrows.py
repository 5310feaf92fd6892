"""Local rows cached under a hub dataset's id, the way `datasets` caches a dataset it has
loaded: `<cache>/<owner>___<name>/<config>/0.0.0/rehearsal/` with `dataset_info.json` and one
Arrow file per split. With `HF_DATASETS_OFFLINE=1`, `load_dataset("<owner>/<name>", "<config>",
split=...)` then reads these rows ("Using the latest cached version of the dataset since ... couldn't
be found on the Hugging Face Hub (offline mode is enabled)"). Runs in the prime-rl environment
(its `datasets` writes the files, so they are in the layout that version reads):

    python hubrows.py DATASETS_CACHE SPEC.json   # SPEC: [{"dataset", "config", "splits": {split: rows}}]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def write(cache: Path, dataset: str, config: str, splits: dict[str, list[dict[str, object]]]) -> Path:
    import datasets
    from datasets.arrow_writer import ArrowWriter
    from datasets.naming import camelcase_to_snakecase

    owner, name = dataset.split("/")
    folder = cache / f"{owner}___{camelcase_to_snakecase(name)}" / config / "0.0.0" / "rehearsal"
    folder.mkdir(parents=True, exist_ok=True)
    first = next(iter(splits.values()))
    features = datasets.Features({k: datasets.Value("string") for k in first[0]})
    infos = datasets.SplitDict(dataset_name=name)
    for split, rows in splits.items():
        with ArrowWriter(features=features, path=str(folder / f"{name}-{split}.arrow")) as w:
            for r in rows:
                w.write(r)
            n, size = w.finalize()
        infos.add(datasets.SplitInfo(name=split, num_examples=n, num_bytes=size, dataset_name=name))
    info = datasets.DatasetInfo(features=features, splits=infos, config_name=config, dataset_name=name)
    info.write_to_directory(str(folder))
    return folder


def main() -> None:
    cache, spec = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    for d in spec:
        print(write(cache, d["dataset"], d["config"], d["splits"]))


if __name__ == "__main__":
    main()
