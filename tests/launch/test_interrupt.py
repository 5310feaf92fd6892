"""Ctrl-C on the offline recipe with stand-in arms (a sleeping process each, no torch): one line,
no traceback, every arm it started stopped, the manifest whole; then `--collect` refuses to
compare while an arm never ran, and `--partial` writes a comparison marked partial."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from whileai.launch import ArmSpec, LocalExecutor, plan

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "04-train" / "trl" / "run.py"
STAND_IN = """
import runpy, sys
import whileai.cli.recipe as r, whileai.launch as launch, whileai.targets.trl.launch as trl
r.build_models = lambda *a: None  # no tiny models: the stand-in arms need none
trl.needs_extras = lambda validate: None  # nor torch, TRL or the results extra
launch.call_argv = lambda target, **kw: [sys.executable, "-c", "import time; time.sleep(600)"]
sys.argv = [{recipe!r}, *sys.argv[1:]]
runpy.run_path({recipe!r}, run_name="__main__")
"""


def recipe(*args: str, **kw: object) -> subprocess.Popen[str]:
    """The recipe in a session of its own, so a test's teardown can end it and all it started."""
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", STAND_IN.format(recipe=str(RECIPE)), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True, **kw)  # type: ignore[call-overload]


@pytest.fixture
def reaped() -> Iterator[list[int]]:
    """Process groups the test started (the recipe's session, each arm's): killed at teardown,
    passed or failed, so no `sleep 600` outlives a test."""
    groups: list[int] = []
    yield groups
    for group in groups:
        if group not in (0, os.getpgrp()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)


def group_of(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return 0


def stopped(pids: list[int], within: float = 30.0) -> bool:
    """Whether every pid has stopped within `within` seconds (a SIGKILLed process under load
    takes a moment to go)."""
    end = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < end:
        time.sleep(0.1)
    return not any(alive(pid) for pid in pids)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state  # a zombie has stopped


def test_ctrl_c_stops_the_arms_and_collect_then_refuses(tmp_path: Path, reaped: list[int]) -> None:
    args = ["--arms", "grpo,opd", "--jobs", "2", "--steps", "2", "--holdout", "4",
            "--out", str(tmp_path), "--tag", "t", "--no-preflight"]
    p = recipe(*args)
    reaped.append(p.pid)
    out = tmp_path / "t"
    pids: list[int] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(pids) < 2:
        pids = [int(f.read_text()) for f in out.glob("*/pid") if f.read_text().strip()]
        time.sleep(0.2)
    reaped.extend(group_of(pid) for pid in pids)  # each arm's runner leads a session of its own
    assert len(pids) == 2, p.stderr.read() if p.poll() is not None else "arms did not start"
    assert all(alive(pid) for pid in pids)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr + stdout and "KeyboardInterrupt" not in stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert lines[-1].startswith("interrupted: stopped arm(s) grpo, opd")
    assert "nothing half-written" in lines[-1]
    assert stopped(pids)  # no arm trains on, detached
    manifest = json.loads((out / "manifest.json").read_text())
    assert {a["state"] for a in manifest["arms"].values()} == {"planned"}
    assert not [f for f in out.rglob("*") if ".whileai-" in f.name]  # no temporary file left
    # --collect: an arm of the plan never ran -> non-zero, naming them; no results.json
    c = recipe("--collect", "--out", str(tmp_path), "--tag", "t")
    reaped.append(c.pid)
    _, err = c.communicate(timeout=120)
    assert c.returncode == 2 and "none launched" in err  # everything was stopped: nothing to collect


def sleepers(tmp_path: Path, *names: str) -> dict[str, ArmSpec]:
    return {n: ArmSpec(name=n, method="grpo", argv=[sys.executable, "-c", "import time; time.sleep(600)"])
            for n in names}


def test_a_ctrl_c_between_an_arms_start_and_its_record_stops_and_names_it(tmp_path: Path) -> None:
    """launch() records an arm as pending just after spawn() returns: a Ctrl-C in between left
    that arm out of the stopped list (the recipe's line named one arm of two under load)."""
    from whileai.launch.interrupt import stop_local

    m = plan(sleepers(tmp_path, "grpo", "opd"), "t", tmp_path)
    be = LocalExecutor()
    try:
        for arm in m.arms.values():
            arm.handle = be.spawn(arm)
        m.arms["grpo"].state = "pending"  # opd's record never came: Ctrl-C
        e = stop_local(m, be)
        assert sorted(e.stopped) == ["grpo", "opd"]
        assert {a.state for a in m.arms.values()} == {"planned"}
        assert not be.stop()  # nothing left running
    finally:
        be.stop(grace=0)


def test_a_ctrl_c_while_an_arm_starts_leaves_it_registered_to_stop(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt just after the arm's process started, before the executor recorded it,
    left that process detached (stop() knew nothing of it); now it comes after the record."""
    import whileai.launch.local as local

    started: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def interrupted(*a: object, **kw: object) -> subprocess.Popen[bytes]:
        started.append(real(*a, **kw))  # type: ignore[call-overload]
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, delivered at the next bytecode
        for _ in range(100):
            time.sleep(0.001)
        return started[-1]

    monkeypatch.setattr(local.subprocess, "Popen", interrupted)
    m = plan(sleepers(tmp_path, "grpo"), "t", tmp_path)
    be = LocalExecutor()
    try:
        with pytest.raises(KeyboardInterrupt):
            be.spawn(m.arms["grpo"])
        assert be.stop(grace=1) == [m.arms["grpo"].dir]
        assert started[0].wait(10) is not None
    finally:
        for p in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)


def test_collect_names_missing_arms_and_partial_marks_results(tmp_path: Path) -> None:
    from whileai.launch import load_manifest
    from whileai.launch.interrupt import EXIT_MISSING, EXIT_RUNNING, collect_gate, mark_partial
    from whileai.targets.run import Metrics

    p = recipe("--arms", "grpo,opd", "--steps", "2", "--holdout", "4", "--dry-run",
               "--out", str(tmp_path), "--tag", "t")
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 0, stderr
    assert "(not written)" not in stdout and f"trl config: {tmp_path / 't' / 'grpo'}" in stdout
    m = load_manifest(tmp_path / "t")
    m.arms["grpo"].state, m.arms["grpo"].result = "done", Metrics(status="ok", per_task={"a": 1.0})
    assert collect_gate(m, partial=False) == (EXIT_MISSING, "not collected: never ran: opd (launch "
                                              "them: rerun without --collect); --partial writes a "
                                              "comparison of the finished arms, marked partial")
    m.arms["opd"].state = "pending"
    code, line = collect_gate(m, partial=False)
    assert code == EXIT_RUNNING and line and "still running: opd" in line
    code, line = collect_gate(m, partial=True)
    assert code == 0 and line and line.startswith("partial comparison (--partial)")
    res = mark_partial({"warnings": []}, m)
    assert res["partial"] == {"missing": ["opd"], "states": {"opd": "pending"}}
    assert res["warnings"] == ["partial comparison: opd (pending) left out"]


def test_an_unwritable_out_is_one_line_before_any_work(tmp_path: Path) -> None:
    for script in (RECIPE, ROOT / "recipes" / "04-train" / "prime-rl" / "run.py"):
        p = subprocess.run([sys.executable, str(script), "--dry-run", "--out", "/proc/whileai-x"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert p.returncode == 2 and p.stdout == "", (script, p.stderr)
        assert p.stderr.startswith("error: --out: '/proc/whileai-x/") and len(p.stderr.splitlines()) == 1
        assert "Traceback" not in p.stderr and ".tmp" not in p.stderr
