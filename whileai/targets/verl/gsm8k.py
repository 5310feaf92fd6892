"""openai/gsm8k as verl's rows: written by whileai beside run.sh as gsm8k_rows.py, run once by it.

    python3 gsm8k_rows.py data        # data/train.parquet (7,473 rows), data/test.parquet (1,319)

The rows have the columns verl's own examples/data_preprocess/gsm8k.py writes (verl's repository,
not its wheel): data_source "openai/gsm8k" (what verl's built-in gsm8k scorer is chosen by:
utils/reward_score/__init__.py:44-47), the question with verl's instruction to end with "####" as
a one-message chat `prompt`, ability "math", reward_model {style "rule", ground_truth: the number
after "####" in the answer, commas removed} and extra_info {split, index, answer, question}.

The hub dataset is loaded at a pinned revision (REVISION), not whatever `main` is on the day of the
run, and the split sizes are checked. Nothing is downloaded but the dataset itself: no script is
fetched from a URL. Needs `datasets` (it comes with verl); `rows` needs nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DATA_SOURCE = "openai/gsm8k"
CONFIG = "main"
# a commit of the hub repository openai/gsm8k with the parquet files main/train-00000-of-00001.parquet
# and main/test-00000-of-00001.parquet (see docs/verl.md, "gsm8k", for where it was seen)
REVISION = "740312add88f781978c0658806c59bc2815b9866"
SIZES = {"train": 7473, "test": 1319}
INSTRUCTION = 'Let\'s think step by step and output the final answer after "####".'  # verl's own
_FINAL = re.compile(r"#### (\-?[0-9\.\,]+)")  # verl's extract_solution, the same pattern


def solution(answer: str) -> str:
    """The final number of a gsm8k answer ("... #### 1,234" -> "1234"), as verl's script reads it."""
    found = _FINAL.search(answer)
    if found is None:
        raise ValueError(f"a gsm8k answer without '#### <number>': {answer[-80:]!r}")
    return found.group(1).replace(",", "")


def row(example: Mapping[str, Any], split: str, index: int) -> dict[str, Any]:
    """One gsm8k record ({"question", "answer"}) as verl's RL row."""
    question, answer = str(example["question"]), str(example["answer"])
    return {"data_source": DATA_SOURCE,
            "prompt": [{"role": "user", "content": f"{question} {INSTRUCTION}"}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": solution(answer)},
            "extra_info": {"split": split, "index": index, "answer": answer, "question": question}}


def rows(examples: Iterable[Mapping[str, Any]], split: str) -> list[dict[str, Any]]:
    return [row(e, split, i) for i, e in enumerate(examples)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the folder for train.parquet and test.parquet")
    args = ap.parse_args(argv)
    import datasets

    loaded = datasets.load_dataset(DATA_SOURCE, CONFIG, revision=REVISION)
    args.out.mkdir(parents=True, exist_ok=True)
    for split, size in SIZES.items():
        if len(loaded[split]) != size:
            raise SystemExit(f"gsm8k_rows.py: {DATA_SOURCE}@{REVISION[:12]} {split} has "
                             f"{len(loaded[split])} rows, not {size}")
        datasets.Dataset.from_list(rows(loaded[split], split)).to_parquet(args.out / f"{split}.parquet")
        print(f"gsm8k_rows.py: wrote {size} rows to {args.out / split}.parquet", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
