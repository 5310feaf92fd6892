"""A rehearsal's verdict as lines, whatever the target: per stage `ok` with one line per step
(the target's own `step_line` says which facts), or `failed` with the first cause, quoted with
the log it came from; then what the stage's copy replaced.

    lines(result, step_line)    # step_line(step facts) -> "    step 1: ..."
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whileai.rehearse.verdict import Result


def lines(result: Result, step_line: Callable[[dict[str, Any]], str]) -> list[str]:
    out: list[str] = []
    for name, subs, v in zip(result.stages, result.subs, result.verdicts, strict=False):
        head = "ok" if v.ok else "failed"
        out.append(
            f"{head}: {name}: {v.summary.split(': ', 1)[-1] if v.ok else v.summary.removeprefix('failed: ')}"
        )
        out += [step_line(s) for s in v.steps]
        if v.cause is not None:
            out.append(f"  cause ({v.cause.file}:{v.cause.line}): {v.cause.text}")
        out += [f"  replaced: {s}" for s in subs]
    skipped = result.stages[len(result.verdicts) :]
    out += [f"not rehearsed: {n} (an earlier stage failed)" for n in skipped]
    verdict = "ok" if result.ok else "failed"
    out.append(
        f"{verdict}: rehearsal of {len(result.stages)} stage(s); logs in {result.folder}"
        if not result.ok or result.folder
        else verdict
    )
    return out
