"""`whileai preflight`: before a GPU is paid for, probe every server, model and machine fact a
run will touch, from what the spec already says (docs/preflight.md).

    from whileai.preflight import preflight
    report = preflight(run, target="prime-rl", timeout=10)
    print("\\n".join(report.lines())); sys.exit(report.exit_code)

One module per probe family: `http` (stdlib HTTP with a hard deadline), `endpoint` (a teacher
or student server, probed the way the target calls it), `tokens` (the student's local
tokenizer), `machine` (GPUs, disk, models, memory, the prime-rl checkout), `report` (the checks
as data, one line each or JSON), `run` (which checks a spec needs, all within the deadline) and
`command` (the CLI command, registered in whileai.cli). Importing the package is cheap: the
names below load on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Check", "Report", "preflight"]


def __getattr__(name: str) -> Any:
    if name == "preflight":
        from whileai.preflight.run import preflight

        return preflight
    if name in ("Check", "Report"):
        from whileai.preflight import report

        return getattr(report, name)
    raise AttributeError(name)
