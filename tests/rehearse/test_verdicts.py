"""Every verdict a rehearsal can give, offline, on short recorded logs (tests/fixtures/rehearse/
verdicts.json): prime-rl's (whileai.targets.prime_rl.rehearse.logs.read) and verl's
(whileai.targets.verl.rehearse.run.verdict): ok, a run that exits 0 after fewer steps than asked,
each place a cause is quoted from (in the order they are looked for), no cause, a timeout; and a
rehearsal's Result, ok only when every stage was rehearsed and passed. No process is started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai.rehearse.verdict import Result, Verdict
from whileai.targets.prime_rl.rehearse import logs
from whileai.targets.verl.rehearse import run

CASES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "rehearse" / "verdicts.json").read_text())


def _check(v: Verdict, case: dict[str, Any]) -> None:
    assert v.ok is case["ok"] and v.timed_out is case.get("timed_out", False), v
    assert v.summary == case["summary"]
    got = None if v.cause is None else [v.cause.file, v.cause.line, v.cause.text]
    assert got == case["cause"]


@pytest.mark.parametrize("name", sorted(CASES["prime-rl"]))
def test_prime_rl_verdict(tmp_path: Path, name: str) -> None:
    case = CASES["prime-rl"][name]
    (tmp_path / "calls").mkdir()
    for rel, text in case["files"].items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    v = logs.read(tmp_path, steps=2, rc=case["rc"], seconds=case.get("seconds", 30),
                  policy_ports={8000}, teacher_ports={8001})
    _check(v, case)


@pytest.mark.parametrize("name", sorted(CASES["verl"]))
def test_verl_verdict(tmp_path: Path, name: str) -> None:
    case = CASES["verl"][name]
    log = tmp_path / "0-opd" / "inside.log"
    log.parent.mkdir()
    log.write_text(case["log"])
    _check(run.verdict(log, tmp_path, case["rc"], case.get("seconds", 30)), case)


def test_every_verdict_is_among_the_cases() -> None:
    """Each way a reader ends has a case: ok, exit 0 short of the steps, a cause from each place
    looked at, none, the timeout."""
    prime = {c["summary"].split(":")[0] + (f" {c['cause'][0].split('/')[-1]}" if c["cause"] else "")
             for c in CASES["prime-rl"].values()}
    assert {"ok", "failed", "failed rl.log", "failed trainer.log", "failed orchestrator.log",
            "failed env.log", "failed inference.log", "failed teacher-8001.log"} <= prime
    assert any("exited 0 after 1 of 2" in c["summary"] for c in CASES["prime-rl"].values())
    assert any(c["rc"] is None for c in CASES["prime-rl"].values())
    verl = {c["summary"].split(":")[0] for c in CASES["verl"].values()}
    assert verl == {"ok", "failed"} and any(c["rc"] is None for c in CASES["verl"].values())
    assert any("exit 0 after" in c["summary"] for c in CASES["verl"].values())


def test_a_result_is_ok_only_when_every_stage_passed() -> None:
    ok, bad = Verdict(True, 1.0), Verdict(False, 1.0)
    assert Result(["sft", "grpo"], [ok, ok]).ok
    assert not Result(["sft", "grpo"], [ok]).ok  # stopped before the second stage
    assert not Result(["sft", "grpo"], [ok, bad]).ok and not Result(["sft"], []).ok
