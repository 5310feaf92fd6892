"""Preflight as the recipes run it before they launch: every distinct arm checked, one line per
check, and a verdict (`--no-preflight` in the recipes skips it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from whileai.errors import SpecError


def gate(compiled: Mapping[str, Any], target: str, *, where: str = "here", cpu: bool = False,
         output_dir: str | None = None, timeout: float = 10.0,
         say: Callable[[str], None] = print) -> bool:
    """True when no check of any arm fails. compiled: arm name -> Compiled (its `run`); arms
    with the same run (repeats) are checked once."""
    from whileai.files.names import arm_group
    from whileai.preflight.run import preflight

    seen: set[str] = set()
    good = True
    for name, c in compiled.items():
        key = c.run.model_dump_json()
        if key in seen:
            continue
        seen.add(key)
        try:
            report = preflight(c.run, target=target, spec=name, timeout=timeout, where=where,
                               cpu=cpu, output_dir=output_dir, name=arm_group(name))
        except SpecError as e:
            say(f"FAIL {name}: preflight: {e}")
            good = False
            continue
        for line in report.lines():
            say(line)
        good = good and not report.failed
    if not good:
        say("preflight failed: fix each FAIL above, or pass --no-preflight to launch anyway")
    return good


__all__ = ["gate"]
