"""Tasks from a local JSONL file (the spec's `data`), for targets that train from files (TRL).

One JSON object per line: a `prompt` (text, or a list of chat messages with `role` and
`content`) plus any fields the method reads (OPSD's privileged key, e.g. `answer`; the
columns a GRPO reward takes). Rows with `"split": "test"` are the holdout; without any, the
last tenth of the rows is (at least one).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from whileai.errors import SpecError, raw

Row = dict[str, Any]


class LocalTasks(NamedTuple):
    path: str
    train: list[Row]
    test: list[Row]
    fields: tuple[str, ...]  # present in every row, besides prompt


def load(path: str) -> LocalTasks:
    """The tasks in `path`; SpecError naming the line for anything TRL could not train on."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        raise SpecError("data", path, "a readable JSONL file of tasks",
                        hint=e.strerror or str(e)) from None
    return _load(str(p.resolve()), st.st_mtime_ns, st.st_size)


LIMIT = 256 << 20  # a task file whileai copies into a run directory


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (datasets cannot load it)")


@lru_cache(maxsize=8)
def _load(path: str, _mtime: int, _size: int) -> LocalTasks:
    from whileai.spec.load import read_text

    text = read_text(path, "data", LIMIT, "JSONL file")  # a FIFO or device is refused
    rows: list[Row] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, parse_constant=_constant)
        except json.JSONDecodeError as e:
            raise SpecError("data", raw(f"{path} line {n}"), "one JSON object per line",
                            hint=e.msg) from None
        except (ValueError, RecursionError) as e:
            raise SpecError("data", raw(f"{path} line {n}"), "one JSON object per line",
                            hint=str(e) if isinstance(e, ValueError) else "nested too deeply") \
                from None
        problem = _problem(row)
        if not problem and rows and isinstance(row["prompt"], str) != isinstance(rows[0]["prompt"], str):
            problem = "every prompt in one form: all text or all chat messages (TRL loads one column type)"
        if problem:
            raise SpecError("data", raw(f"{path} line {n}"), problem)
        rows.append(row)
    if len(rows) < 2:
        raise SpecError("data", path, "at least two tasks (one to train on, one to hold out)")
    test = [r for r in rows if r.get("split") == "test"]
    train = [r for r in rows if r.get("split") != "test"]
    if not test:
        cut = max(1, len(rows) // 10)
        train, test = rows[:-cut], rows[-cut:]
    if not train:
        raise SpecError("data", path, "at least one task that is not \"split\": \"test\"")
    strip = [{k: v for k, v in r.items() if k != "split"} for r in train + test]
    fields = set.intersection(*(set(r) for r in strip)) - {"prompt"}
    return LocalTasks(path, strip[: len(train)], strip[len(train):], tuple(sorted(fields)))


def _problem(row: Any) -> str:
    if not isinstance(row, dict):
        return "each line must be a JSON object"
    prompt = row.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return ""
    if isinstance(prompt, list) and prompt and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in prompt
    ):
        return ""
    return "a 'prompt': non-empty text, or a list of {role, content} chat messages"


def display(path: str) -> str:
    """How the report names the file: relative when it is under the working directory."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return path
