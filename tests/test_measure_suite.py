"""scripts/measure_suite.py counts the tests against the real tools apart: its plugin records each
`real_tool` test's outcome in a real pytest run, and the README's sentence adds them up."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import ROOT


def measure():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("measure_suite", ROOT / "scripts" / "measure_suite.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plugin_records_each_real_tool_tests_outcome_and_no_other(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "@pytest.mark.real_tool\ndef test_ran(): pass\n"
        "@pytest.mark.real_tool\ndef test_skipped(): pytest.skip('no tool here')\n"
        "@pytest.mark.real_tool\ndef test_broke(): assert False\n"
        "def test_offline(): pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    real_tool: x\n")
    out = tmp_path / "outcomes.json"
    env = dict(os.environ, WHILEAI_MEASURE_OUT=str(out),
               PYTHONPATH=os.pathsep.join([str(ROOT / "scripts"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "measure_plugin", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout[-2000:]  # test_broke
    got = {k.rsplit("::", 1)[1]: v for k, v in json.loads(out.read_text()).items()}
    assert got == {"test_ran": "passed", "test_skipped": "skipped", "test_broke": "failed"}
    assert measure().split(json.loads(out.read_text())) == "1 passed, 1 failed, 1 skipped"


def test_the_block_says_how_many_run_against_the_real_tools() -> None:
    m = measure()
    text = m.block(2400, 570, "Not timed yet.")
    assert m.COUNT.search(text).group(1) == "2,400" and m.REAL.search(text).group(1) == "570"  # type: ignore[union-attr]
