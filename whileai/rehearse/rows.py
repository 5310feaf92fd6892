"""What a rehearsal does with each source's taskset, so that nothing is read from a hub:

- `ROWS`: a taskset that takes its dataset as an argument (`dataset_name`) reads local rows from a
  folder of JSON lines the rehearsal writes (reverse-text).
- `CACHED`: a taskset that loads a fixed hub dataset with no argument to point elsewhere reads
  local rows the rehearsal caches under that dataset's id in its own `HF_HOME`, where `datasets`
  in offline mode finds them (gsm8k: `load_dataset("openai/gsm8k", "main", split=...)`).
- `HUB`: a taskset that loads a hub dataset whileai has no rows for is refused up front, naming it.
- any other taskset runs as it is: it reads no hub data (kuhn-poker, wordle, ... generate their
  tasks from seeds); if it fails offline, the verdict quotes prime-rl's or verifiers' cause.

Read from each taskset's `load()` at verifiers a60a606 (environments/<name>/<name>/taskset.py,
verifiers/v1/tasksets/). Standard library only.

    how(taskset_id, env_table)   # "rows" | "cached" | "as-is", or raises SpecError via `refuse`
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _reverse_text(n: int) -> list[dict[str, Any]]:
    from whileai.tasksets.reverse_text import phrases

    return [{"prompt": p} for p in phrases(n)]  # PrimeIntellect/Reverse-Text-RL's column


_NAMES = ("Ava", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Ida")
_THINGS = ("apples", "pencils", "stickers", "marbles", "books", "cookies")


def _gsm8k(n: int) -> list[dict[str, Any]]:
    """openai/gsm8k's columns: `question`, and `answer` with the worked steps and `#### N` last."""
    out = []
    for i in range(n):
        who, what = _NAMES[i % len(_NAMES)], _THINGS[i % len(_THINGS)]
        a, b, c = 3 + i % 17, 2 + i % 11, 1 + i % 5
        total = (a + b) * c
        out.append(
            {
                "question": f"{who} has {a} {what} and gets {b} more. Then {who} makes {c} "
                f"equal piles like that. How many {what} are there in all?",
                "answer": f"{who} has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} {what} in one pile.\n"
                f"{c} piles hold {a + b} * {c} = <<{a + b}*{c}={total}>>{total} {what}.\n#### {total}",
            }
        )
    return out


# taskset id -> local rows in its dataset's columns, read through its `dataset_name` argument
ROWS: dict[str, Callable[[int], list[dict[str, Any]]]] = {"reverse-text": _reverse_text}
# taskset id -> (hub dataset id, config, splits, rows): cached under that id in the rehearsal's HF_HOME
CACHED: dict[str, tuple[str, str, tuple[str, ...], Callable[[int], list[dict[str, Any]]]]] = {
    "gsm8k": ("openai/gsm8k", "main", ("train", "test"), _gsm8k),
}
# taskset id -> the hub dataset its load() reads, which whileai has no rows for
HUB = {
    "alphabet-sort": "kalomaze/alphabetic-arxiv-authors-it1",
    "wiki-search": "willcb/wiki-trivia-questions-v4 and willcb/rare-wiki-pages",
    "lean": "the hub dataset of its `dataset` argument",
}


def key(taskset: Any) -> str:
    """The id the loader resolves: owner/ and @version dropped."""
    return str(taskset).split("/")[-1].split("@")[0]


def how(taskset: Any) -> str:
    """'rows', 'cached' or 'as-is' for a taskset a rehearsal runs; 'hub' for one it refuses."""
    k = key(taskset)
    if "/" not in str(taskset) and k in ROWS:
        return "rows"
    if "/" not in str(taskset) and k in CACHED:
        return "cached"
    return "hub" if k in HUB else "as-is"


def refusal(taskset: Any) -> str:
    """What the refusal allows, for a taskset `how` calls 'hub'."""
    return (
        f"a taskset that reads no hub dataset whileai lacks rows for: {key(taskset)} loads "
        f"{HUB[key(taskset)]} from the hub, which a rehearsal never reaches (refused: "
        f"{', '.join(sorted(HUB))}; local rows: {', '.join(sorted([*ROWS, *CACHED]))}; any other "
        "runs as it is)"
    )


def write_rows(sources: list[dict[str, Any]], n: int = 64) -> None:
    """Each `rows` source's local rows, `<rows>/<dataset_split>.jsonl` (what `load_dataset(folder,
    split=...)` reads)."""
    from whileai.files.atomic import atomic_write

    for s in sources:
        if s.get("how") != "rows":
            continue
        folder = Path(s["rows"])
        folder.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(r) + "\n" for r in ROWS[key(s["taskset"])](n))
        atomic_write(folder / f"{s['dataset_split']}.jsonl", text, durable=False)


def cache_spec(sources: list[dict[str, Any]], n: int = 48) -> list[dict[str, Any]]:
    """What `standins/hubrows.py` writes into the rehearsal's datasets cache: per cached dataset,
    its id, config and each split's rows (once per dataset, whatever the number of sources)."""
    out: dict[str, dict[str, Any]] = {}
    for s in sources:
        if s.get("how") == "cached":
            dataset, config, splits, rows = CACHED[key(s["taskset"])]
            out[dataset] = {"dataset": dataset, "config": config,
                            "splits": {sp: rows(n) for sp in splits}}
    return list(out.values())
