"""LocalExecutor with real subprocesses: done, crashed, killed, and a Python function."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from whileai.launch import (
    EXIT_DONE,
    EXIT_RUNNING,
    ArmSpec,
    LocalExecutor,
    call_argv,
    collect,
    launch,
    load_manifest,
    plan,
)
from whileai.results import build, write_results

TRAIN = """\
import json, os, sys
reward = float(sys.argv[1])
tasks = {f"t{i}": reward + 0.01 * (i % 3) for i in range(8)}
json.dump({"series": {"eval_reward": [[0, 0.1], [10, reward]], "train_reward": [[1, 0.2]]},
           "per_task": tasks, "gpu": "none"}, open(os.environ["WHILEAI_METRICS"], "w"))
"""


def tiny_metrics(reward: float) -> dict[str, object]:
    """A 'training function' run in a subprocess by the runner's call mode."""
    return {"series": {"eval_reward": [[5, reward]]},
            "per_task": {f"t{i}": reward for i in range(6)}}


def arms(tmp_path: Path) -> dict[str, ArmSpec]:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    py = sys.executable
    return {
        "grpo": ArmSpec(name="grpo", method="grpo", argv=[py, str(script), "0.5"]),
        "opd": ArmSpec(name="opd", method="opd", argv=[py, str(script), "0.7"]),
        "crash": ArmSpec(name="crash", method="opsd",
                         argv=[py, "-c", "import sys; print('oops'); sys.exit(3)"]),
        "sleepy": ArmSpec(name="sleepy", method="opsd",
                          argv=[py, "-c", "import time; time.sleep(60)"]),
        "fn": ArmSpec(name="fn", method="opd",
                      argv=call_argv("test_launch_local:tiny_metrics", reward=0.6)),
    }


def wait_until(pred, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_local_backend_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("numpy", reason="the results extra (pip install -e '.[results]'): results.json")
    out = tmp_path / "runs"
    m = plan(arms(tmp_path), "loc", out)
    b = LocalExecutor(env={"PYTHONPATH": str(Path(__file__).parent)})
    launch(m, b, log=lambda _: None)
    sleepy = Path(m.arms["sleepy"].dir)
    wait_until(lambda: (sleepy / "pid").exists())
    # wait for the others, then kill the sleeper: it must read as failed, the rest as done
    others = [Path(a.dir) / "exit_code" for n, a in m.arms.items() if n != "sleepy"]
    wait_until(lambda: all(p.exists() for p in others))
    assert collect(m, b, log=lambda _: None) == EXIT_RUNNING
    os.kill(int((sleepy / "pid").read_text()), signal.SIGKILL)
    wait_until(lambda: (sleepy / "exit_code").exists())

    # collect from a fresh process' point of view: manifest from disk, a new backend object
    m = load_manifest(out)
    assert collect(m, LocalExecutor(), log=lambda _: None) == EXIT_DONE
    st = {n: a.state for n, a in m.arms.items()}
    assert st == {"grpo": "done", "opd": "done", "crash": "failed", "sleepy": "failed",
                  "fn": "done"}
    assert "exited with code 3" in (m.arms["crash"].error or "")
    assert "oops" in (m.arms["crash"].error or "")  # the log tail comes with the reason
    assert "killed by signal 9 (SIGKILL)" in (m.arms["sleepy"].error or "")
    r = m.arms["opd"].result
    assert r is not None and r.returncode == 0 and r.seconds is not None
    assert r.series["eval_reward"][-1] == (10, 0.7) and len(r.per_task) == 8
    assert m.arms["fn"].result is not None and m.arms["fn"].result.per_task["t0"] == 0.6

    # collect twice gives the same results.json
    first = write_results(out / "results.json", build(m)).read_bytes()
    m2 = load_manifest(out)
    assert collect(m2, LocalExecutor(), log=lambda _: None) == EXIT_DONE
    second = write_results(out / "results2.json", build(load_manifest(out))).read_bytes()
    assert first == second
    res = build(m2)
    assert res["vs_grpo"]["opd"]["paired"] and res["vs_grpo"]["opd"]["verdict"] == "better"
    assert any("sleepy is failed" in w for w in res["warnings"])


def test_relaunch_failed_runs_again(tmp_path: Path) -> None:
    flag = tmp_path / "second"
    script = tmp_path / "flaky.py"
    script.write_text(
        "import json, os, pathlib, sys\n"
        f"p = pathlib.Path({str(flag)!r})\n"
        "if not p.exists():\n    p.touch(); sys.exit(1)\n"
        "json.dump({'per_task': {'a': 1.0}}, open(os.environ['WHILEAI_METRICS'], 'w'))\n")
    m = plan({"grpo": ArmSpec(name="grpo", method="grpo", argv=[sys.executable, str(script)])},
             "r", tmp_path / "runs")
    b = LocalExecutor()
    launch(m, b, log=lambda _: None)
    b.wait(30)
    assert collect(m, b, log=lambda _: None) == EXIT_DONE and m.arms["grpo"].state == "failed"
    launch(m, b, relaunch_failed=True, log=lambda _: None)
    b.wait(30)
    assert collect(m, b, log=lambda _: None) == EXIT_DONE
    assert m.arms["grpo"].state == "done" and m.arms["grpo"].attempts == 2


def test_metrics_then_nonzero_exit_is_failed_with_series(tmp_path: Path) -> None:
    code = ("import json, os; json.dump({'series': {'eval_reward': [[1, 0.3]]}}, "
            "open(os.environ['WHILEAI_METRICS'], 'w')); raise SystemExit(2)")
    m = plan({"a": ArmSpec(name="a", method="grpo", argv=[sys.executable, "-c", code])}, "x",
             tmp_path)
    b = LocalExecutor()
    launch(m, b, log=lambda _: None)
    b.wait(30)
    collect(m, b, log=lambda _: None)
    a = m.arms["a"]
    assert a.state == "failed" and a.error == "exited with code 2"
    assert a.result is not None and a.result.series["eval_reward"] == [(1, 0.3)]


def test_missing_program_is_failed(tmp_path: Path) -> None:
    m = plan({"a": ArmSpec(name="a", method="grpo", argv=["/nonexistent/prog"])}, "x", tmp_path)
    b = LocalExecutor()
    launch(m, b, log=lambda _: None)
    b.wait(30)
    collect(m, b, log=lambda _: None)
    assert m.arms["a"].state == "failed" and "code 127" in (m.arms["a"].error or "")
