"""A pytest plugin for scripts/measure_suite.py: each `real_tool` test's outcome, as JSON.

    WHILEAI_MEASURE_OUT=out.json python -m pytest -p measure_plugin   # scripts/ on PYTHONPATH

Writes {node id: "passed" | "failed" | "skipped"} for the tests marked `real_tool` (tests/conftest.py
marks them), so the README can say how many of them ran and how many skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_OUTCOMES: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "real_tool" not in report.keywords:
        return
    was = _OUTCOMES.get(report.nodeid)
    if report.failed or was == "failed":
        _OUTCOMES[report.nodeid] = "failed"
    elif report.skipped:
        _OUTCOMES[report.nodeid] = "skipped"
    elif report.when == "call":
        _OUTCOMES[report.nodeid] = "passed"


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("WHILEAI_MEASURE_OUT")
    if out:
        Path(out).write_text(json.dumps(_OUTCOMES, indent=1, sort_keys=True) + "\n", encoding="utf-8")
