"""SFT on teacher samples for verl: the steps between verl's two jobs.

Written by whileai beside run.sh as convert.py; run.sh calls it twice:

    python3 convert.py prompts data/train.jsonl data/prompts.parquet --rows N --seed S \
        [--holdout data/test.jsonl --holdout-rows M]
    python3 -m verl.trainer.main_generation_server ...   # writes samples/responses.parquet
    python3 convert.py messages samples/responses.parquet data/sft.parquet [--val data/sft_val.parquet]
    torchrun ... -m verl.trainer.sft_trainer ...          # reads its `messages` column

`prompts`: verl's generation server reads parquet only (pd.read_parquet, main_generation_server.py:
150-152) with a chat `prompt` column; N prompts of the training rows, cycled in a fresh seeded
order each pass, so every step of SFT trains on prompts it has not seen more often than needed;
with --holdout, the first M holdout rows follow (column `split`: train or test), so the teacher
answers them in the same job.
`messages`: each prompt's `responses` (the teacher's n completions) become n rows of chat
messages, the prompt followed by the teacher's answer: the `messages` column verl's SFT trainer
reads (sft_trainer_engine.yaml: data.messages_key); with --val the holdout's rows go there (the
validation set). The generation server keeps a thinking teacher's `<think>...</think>` in its
answers; it is stripped here (the answer is the text after `</think>`), so the SFT target is the
teacher's final answer whatever the student's template (verl's per-turn tokenisation would drop
it for a Qwen3-family student and keep it as plain text for another). Needs pandas and pyarrow
(both come with verl).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any


def prompts(source: Path, out: Path, rows: int, seed: int, holdout: Path | None = None,
            holdout_rows: int = 0) -> int:
    tasks = _read(source)
    if not tasks:
        raise SystemExit(f"convert.py: {source} has no rows")
    rng, picked = random.Random(seed), list[dict[str, Any]]()
    while len(picked) < rows:
        order = list(range(len(tasks)))
        rng.shuffle(order)
        picked += [tasks[i] for i in order[: rows - len(picked)]]
    chosen = [(t, "train") for t in picked]
    if holdout is not None:  # the first holdout rows, answered in the same job for validation
        chosen += [(t, "test") for t in _read(holdout)[:holdout_rows]]
    _write(out, [{"data_source": t.get("data_source", ""), "prompt": t["prompt"], "split": split}
                 for t, split in chosen])
    return len(chosen)


def _read(source: Path) -> list[dict[str, Any]]:
    if source.suffix == ".parquet":  # verl's own gsm8k rows
        import pandas as pd

        return [{"data_source": t["data_source"], "prompt": [dict(m) for m in t["prompt"]]}
                for t in pd.read_parquet(source).to_dict("records")]
    return [json.loads(line) for line in source.read_text().splitlines() if line.strip()]


def messages(source: Path, out: Path, val: Path | None = None) -> int:
    import pandas as pd

    frame = pd.read_parquet(source)
    rows: dict[str, list[dict[str, Any]]] = {"train": [], "test": []}
    unclosed = 0
    for _, row in frame.iterrows():
        chat = [{"role": str(m["role"]), "content": str(m["content"])} for m in row["prompt"]]
        split = str(row["split"]) if "split" in row else "train"
        for answer in row["responses"]:
            text, open_think = final_answer(str(answer))
            unclosed += open_think
            rows[split].append({"messages": [*chat, {"role": "assistant", "content": text}]})
    if unclosed:
        print(f"convert.py messages: {unclosed} answers open a <think> block they never close (cut "
              "at max_tokens?): kept as written", file=sys.stderr)
    _write(out, rows["train"])
    if val is not None:
        _write(val, rows["test"])
        print(f"convert.py messages: wrote {len(rows['test'])} rows to {val}", file=sys.stderr)
    return len(rows["train"])


def final_answer(answer: str) -> tuple[str, bool]:
    """The teacher's answer without its `<think>...</think>` (the text after the last `</think>`,
    as Qwen3's chat template renders a past assistant turn), and whether a `<think>` is left open."""
    if "</think>" in answer:
        return answer.split("</think>")[-1].lstrip("\n"), False
    return answer, "<think>" in answer


def _write(out: Path, rows: list[dict[str, Any]]) -> None:
    import pandas as pd

    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=["prompts", "messages"])
    ap.add_argument("source", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--rows", type=int, default=0, help="prompts: how many to write")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--holdout", type=Path, help="prompts: holdout rows to answer too (split test)")
    ap.add_argument("--holdout-rows", type=int, default=0)
    ap.add_argument("--val", type=Path, help="messages: where the holdout's rows go")
    args = ap.parse_args(argv)
    if args.step == "prompts":
        n = prompts(args.source, args.out, args.rows, args.seed, args.holdout, args.holdout_rows)
    else:
        n = messages(args.source, args.out, args.val)
    print(f"convert.py {args.step}: wrote {n} rows to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
