"""Real rehearsals: prime-rl's own `rl` launcher, orchestrator and env servers for 2 steps on
this CPU, with whileai's stand-in servers and trainer. Needs the rehearsal environment
(docs/rehearse.md); each takes one to four minutes on 2 cores, one at a time (they share ports).

    WHILEAI_REHEARSE_PYTHON=/path/to/prime-rl/.venv/bin/python \
        python -m pytest tests/rehearse/test_rehearse_real.py

$WHILEAI_REHEARSE_KEEP (a folder) keeps each case's folder there, for
`python scripts/gen_rehearse_fixture.py --from FOLDER`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rehearse_cases import BROKEN, GOOD, ROOT, Case

PYTHON = os.environ.get("WHILEAI_REHEARSE_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not PYTHON, reason="needs the rehearsal environment: set WHILEAI_REHEARSE_PYTHON to "
                       "the python of a prime-rl checkout at the pin after `uv sync`, prepared once with "
                       "`whileai rehearse --setup DIR` (docs/rehearse.md)"),
]


def _rehearse(case: Case, tmp_path: Path) -> tuple[dict, float]:  # type: ignore[type-arg]
    root = Path(os.environ["WHILEAI_REHEARSE_KEEP"]) if os.environ.get("WHILEAI_REHEARSE_KEEP") else tmp_path
    keep = root / case.name
    cmd = [sys.executable, "-m", "whileai", "rehearse", *case.args(tmp_path), "--keep", str(keep), "--json",
           "--timeout", "900"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1000,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.monotonic() - t0
    assert r.stdout.strip(), r.stderr[-3000:]
    verdict = json.loads(r.stdout)
    assert r.returncode == (0 if verdict["ok"] else 1), r.stderr[-2000:]
    print(f"{case.name}: {'ok' if verdict['ok'] else 'failed'} in {seconds:.0f} s")
    return verdict, seconds


@pytest.mark.parametrize("case", GOOD, ids=[c.name for c in GOOD])
def test_rehearsal_passes(case: Case, tmp_path: Path) -> None:
    verdict, _ = _rehearse(case, tmp_path)
    assert verdict["ok"], json.dumps(verdict, indent=1)[-3000:]
    for stage in verdict["stages"]:
        steps = stage["steps"]
        assert [s["step"] for s in steps] == [1, 2]
        assert all(s["samples"] > 0 and s["trained_tokens"] > 0 for s in steps)
        if case.name in ("opd", "opsd", "grpo", "sft"):  # the bundled arms train LoRA adapters
            assert sum(s["adapters_loaded"] for s in steps) >= 1
    if case.name == "mixture":
        envs = {e for s in verdict["stages"][0]["steps"] for e in s["envs"]}
        assert envs == {"reverse-text-grpo", "reverse-text-opd"}
        assert sum(s["weight_updates"] for s in verdict["stages"][0]["steps"]) >= 1  # full weights
    if case.name in ("opd", "sft", "mixture"):
        assert sum(s["teacher_calls"] for s in verdict["stages"][-1]["steps"]) > 0
    if case.name == "kuhn-poker":  # 2 groups of 8 hands, 2 trainable traces (seats) per hand
        assert [s["samples"] for s in verdict["stages"][0]["steps"]] == [32, 32]
    if case.name in ("gsm8k-opd", "llama-3.1", "qwen2.5"):
        subs = " ".join(verdict["stages"][0]["substitutions"])
        tiny = {"gsm8k-opd": "qwen3", "llama-3.1": "llama", "qwen2.5": "qwen2"}[case.name]
        assert f"a tiny {tiny} model" in subs
        assert case.name != "gsm8k-opd" or "(openai/gsm8k)" in subs
    if case.name == "twostage":
        assert [s["name"] for s in verdict["stages"]] == ["twostage-1-sft", "twostage-2-opd"]


@pytest.mark.parametrize("case", BROKEN, ids=[c.name for c in BROKEN])
def test_broken_rehearsal_ends_in_its_cause(case: Case, tmp_path: Path) -> None:
    verdict, _ = _rehearse(case, tmp_path)
    assert not verdict["ok"]
    stage = verdict["stages"][-1]
    assert stage["cause"] and case.expect in stage["cause"]["text"], json.dumps(stage, indent=1)[-3000:]
