"""Which prompts to inspect, and the teacher's version of each (OPSD's privileged hint).

Tasks come from the spec's `data` JSONL when it has one, else from a taskset whose data
whileai generates locally (reverse-text); any other taskset is an error that says to pass
`data`. N rows are drawn without replacement with the given seed, so a rerun inspects the
same prompts.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from whileai.errors import SpecError
from whileai.spec.run import RunSpec
from whileai.tasksets import local
from whileai.tasksets.builtin import BUILTIN, name_of, needs_data, rows

Prompt = str | list[dict[str, Any]]


class Task(NamedTuple):
    row: int  # row number in its split
    prompt: Prompt  # what the student sees
    teacher_prompt: Prompt  # what the teacher sees
    privileged: str | None  # the hint's text (OPSD), else None


def source(run: RunSpec) -> str:
    if run.data is not None:
        return local.display(run.data)
    return f"built-in taskset {name_of(run.taskset)}"


def sample(run: RunSpec, n: int, *, seed: int, split: str,
           privileged: tuple[str, str] | None) -> list[Task]:
    """`n` tasks of the spec's data (all of them if there are fewer)."""
    if run.data is None and name_of(run.taskset) not in BUILTIN:
        raise SpecError("taskset", run.taskset, needs_data("whileai inspect"))
    train, holdout = rows(run)
    table = train if split == "train" else holdout
    picked = sorted(random.Random(seed).sample(range(len(table)), min(n, len(table))))
    return [task(i, table[i], privileged) for i in picked]


def task(i: int, row: dict[str, Any], privileged: tuple[str, str] | None) -> Task:
    prompt: Prompt = row["prompt"]
    if privileged is None:
        return Task(i, prompt, prompt, None)
    key, template = privileged
    hint = lookup(row, key)
    if hint is None:
        raise SpecError("method.privileged", key,
                        f"a field of every task (row {i} has {', '.join(sorted(row)) or 'none'})")
    text = stringify(hint)
    return Task(i, prompt, with_hint(prompt, template.format(demonstration=text)), text)


def lookup(row: dict[str, Any], key: str) -> Any:
    """The task's `key`: from its info, then its top-level fields (as prime-rl reads demo_key)."""
    info = row.get("info")
    if isinstance(info, dict) and key in info:
        return info[key]
    return row.get(key)


def stringify(value: Any) -> str:
    """A privileged value as text: chat messages joined by newlines, as TRL's SDFT does."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        return "\n".join(str(m.get("content", "")) for m in value if m.get("content"))
    return str(value)


def with_hint(prompt: Prompt, hint: str) -> Prompt:
    """The teacher's prompt: the last user text, a blank line, then the rendered hint; earlier
    messages (the system prompt) unchanged. The TRL target compiles OPSD to this same form
    (teacher_prompt_template '{prompt}\\n\\n<template>'), which TRL's SDFT applies this way."""
    if isinstance(prompt, str):
        return f"{prompt}\n\n{hint}"
    last = next((m for m in reversed(prompt) if m.get("role") == "user"), prompt[-1])
    return [*prompt[:-1], {"role": "user", "content": f"{last.get('content', '')}\n\n{hint}"}]
