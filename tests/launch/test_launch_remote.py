"""The container-side body (no modal): a fake `uv` on PATH stands in for prime-rl."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from pathlib import Path

import pytest

from whileai.targets.prime_rl.launch import teacher_argv, train_job, validate_job
from whileai.targets.prime_rl.metrics import parse_metrics_jsonl
from whileai.targets.run import read_metrics

FAKE_UV = r'''#!PY
import http.server, json, os, sys, pathlib
args = sys.argv[1:]
with open(os.environ["FAKE_UV_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
cmd = args[args.index("--project") + 2]
if cmd == "inference":
    port = int(args[args.index("--server.port") + 1])
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.end_headers(); self.wfile.write(b'{"data": []}')
        def log_message(self, *a): pass
    http.server.HTTPServer(("localhost", port), H).serve_forever()
if cmd == "rl":
    pathlib.Path("rl.pid").write_text(str(os.getpid()))
    if "--dry-run" in args:
        print("dry run ok"); sys.exit(int(os.environ.get("FAKE_RL_CODE", "0")))
    name = args[args.index("--run.name") + 1] if "--run.name" in args else "reverse-text--m--abc"
    run = pathlib.Path("outputs") / name
    if run.exists() and "--resume" not in args and "--clean" not in args:
        sys.exit("FileExistsError: run directory has artifacts from a previous run")
    run.mkdir(parents=True, exist_ok=True)
    if "--ckpt.interval" in args:
        (run / "checkpoints" / "step_1").mkdir(parents=True, exist_ok=True)
    if os.environ.get("FAKE_RL_HANG") and "--resume" not in args:
        import time; time.sleep(60)
    rows = [{"step": 1, "time": 0, "train/agg/all/agent/reward/mean": 0.2, "ref_kl/mean": 0.9,
             "progress/total_rollouts": 256, "progress/output_tokens": 1000},
            {"step": 2, "time": 0, "eval/reverse-text/all/agent/avg@1": 0.4,
             "eval/reverse-text/all/agent/reward/mean": 0.41},
            {"step": 2, "time": 0, "train/agg/all/agent/reward/mean": 0.3, "ref_kl/mean": 0.5,
             "progress/total_rollouts": 512, "progress/output_tokens": 900},
            {"step": 2, "time": 0, "loss/mean": 0.7, "entropy/all/mean": 1.5}]
    (run / "metrics.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n{broken\n")
    for step in (0, 2):
        ev = run / "rollouts" / f"step_{step}" / "eval" / "all"
        ev.mkdir(parents=True, exist_ok=True)
        recs = [{"task": {"id": f"t{i}"}, "reward": 0.1 * i + step} for i in range(3)]
        recs.append({"example_id": "t9", "traces": [{"reward": 1.0}, {"reward": 0.0}]})
        (ev / "traces.jsonl").write_text("\n".join(map(json.dumps, recs)) + "\n")
    print("training"); sys.exit(int(os.environ.get("FAKE_RL_CODE", "0")))
'''


@pytest.fixture
def fake_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uv = bin_dir / "uv"
    uv.write_text(FAKE_UV.replace("#!PY", "#!" + sys.executable))
    uv.chmod(uv.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "uv.log"
    monkeypatch.setenv("FAKE_UV_LOG", str(log))
    return log


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def serve(teacher: str, port: int) -> str:
    """compile's serve line for a teacher beside the policy (the teacher's plan)."""
    return (f"CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model {teacher} --server.port {port} "
            "--vllm.gpu-memory-utilization 0.4 --vllm.max-model-len 10241")


def job(teacher: str | None = None, port: int | None = None) -> dict[str, object]:
    return {"run_id": "tg-opd", "arm": "opd", "files": {"rl.toml": "max_steps = 2\n"},
            "main": "rl.toml", "teacher": teacher, "teacher_port": port,
            "teacher_serve": serve(teacher, port or 0) if teacher else None}


def calls(log: Path) -> list[list[str]]:
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def test_train_job_serves_teacher_parses_and_writes_volume(fake_uv: Path, tmp_path: Path) -> None:
    port = free_port()
    commits: list[int] = []
    rec = train_job(job("T/teacher", port), tmp_path / "vol" / "tg-opd", tmp_path / "work",
                    commit=lambda: commits.append(1), gpu="H100 x2", image="img",
                    teacher_timeout=30)
    assert rec["status"] == "ok", rec
    assert rec["series"] == {"train_reward": [[1, 0.2], [2, 0.3]], "eval_reward": [[2, 0.4]],
                             "teacher_kl": [[1, 0.9], [2, 0.5]], "train_loss": [[2, 0.7]],
                             "entropy": [[2, 1.5]]}
    usage = rec["usage"]
    assert usage["rollouts"] == 512 and usage["sampled_tokens"] == 1900
    assert usage["gpu_seconds"] == pytest.approx(2 * usage["train_seconds"], abs=0.11)
    assert "progress/total_rollouts" in rec["usage_source"]["rollouts"]
    assert "2 GPUs" in rec["usage_source"]["gpu_seconds"]
    assert rec["per_task"] == {"t0": 2.0, "t1": 2.1, "t2": 2.2, "t9": 0.5}  # last eval step
    assert commits == [1]
    assert read_metrics(tmp_path / "vol" / "tg-opd" / "metrics.json").per_task["t9"] == 0.5
    inf, rl = calls(fake_uv)
    assert inf == teacher_argv(serve("T/teacher", port))[0][1:]
    assert inf[inf.index("--vllm.gpu-memory-utilization") + 1] == "0.4"
    assert inf[inf.index("--vllm.max-model-len") + 1] == "10241"  # compile's line, not a second one
    at = rl.index("@")
    assert rl[at - 1:at + 2] == ["rl", "@", str(tmp_path / "work" / "tg-opd" / "rl.toml")]
    assert rl[rl.index("--run.name") + 1] == "tg-opd" and "--ckpt.interval" in rl

    # a restarted (preempted) container returns the finished metrics without training again
    again = train_job(job("T/teacher", port), tmp_path / "vol" / "tg-opd", tmp_path / "work2")
    assert again == rec and len(calls(fake_uv)) == 2


def test_train_job_failure_is_a_record(fake_uv: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_RL_CODE", "1")
    rec = train_job(job(), tmp_path / "vol", tmp_path / "work")
    assert rec["status"] == "error" and rec["error"] == "rl exited with code 1"
    assert "training" in rec["log_tail"] and rec["series"]["eval_reward"] == [[2, 0.4]]
    assert read_metrics(tmp_path / "vol" / "metrics.json").status == "error"


def test_train_job_exception_is_a_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no uv at all
    rec = train_job(job(), tmp_path / "vol", tmp_path / "work")
    assert rec["status"] == "error" and "FileNotFoundError" in rec["error"]


def test_validate_job(fake_uv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok = validate_job(job(), tmp_path / "w")
    assert ok["ok"] and "dry run ok" in ok["output"] and calls(fake_uv)[-1][-1] == "--dry-run"
    monkeypatch.setenv("FAKE_RL_CODE", "2")
    assert validate_job(job(), tmp_path / "w")["returncode"] == 2


def test_metrics_parser_prefers_avg_and_skips_junk() -> None:
    rows = ['{"step": 3, "eval/x/all/a/reward/mean": 0.1}', "not json", '{"no": "step"}',
            '{"step": 4, "eval/x/all/a/avg@4": 0.5, "eval/x/all/a/reward/mean": 0.2}']
    assert parse_metrics_jsonl(rows) == {"eval_reward": [(4, 0.5)]}


def interrupt_after(seconds: int, how: str) -> None:
    """What modal does to a running input: a preemption is SIGINT, a KeyboardInterrupt in the main
    thread (modal.exception.simulate_preemption, modal's own stand-in); a cancelled call raises
    InputCancellation from a signal handler (modal/_container_entrypoint.py:255-258)."""
    import signal

    mx = pytest.importorskip("modal.exception", reason="the modal extra")
    if how == "preempted":
        mx.simulate_preemption(seconds)
        return

    def cancel(signum: int, frame: object) -> None:
        raise mx.InputCancellation("Input was cancelled by user")

    signal.signal(signal.SIGALRM, cancel)
    signal.alarm(seconds)


@pytest.mark.parametrize("how", ["preempted", "cancelled"])
def test_a_stopped_input_stops_rl_and_a_restart_resumes(fake_uv: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    import signal

    monkeypatch.setenv("FAKE_RL_HANG", "1")
    folder = tmp_path / "runs" / "tg-opd"  # the arm's folder on the volume: it works there
    old = signal.getsignal(signal.SIGALRM)
    try:
        interrupt_after(2, how)
        with pytest.raises(BaseException) as stopped:
            train_job(job(), folder, tmp_path / "runs")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    want = "KeyboardInterrupt" if how == "preempted" else "InputCancellation"
    assert type(stopped.value).__name__ == want
    pid = int((folder / "rl.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # rl's process group was stopped with the input
    assert not (folder / "metrics.json").exists()  # no failure recorded
    assert (folder / "outputs" / "tg-opd" / "checkpoints" / "step_1").is_dir()

    rec = train_job(job(), folder, tmp_path / "runs")  # Modal restarts the input: same folder
    assert rec["status"] == "ok", rec
    first, again = [c for c in calls(fake_uv) if "rl" in c]
    assert "--resume" not in first and "--resume" in again and "--clean" not in again
    log = (folder / "rl.log").read_text()
    assert "attempt 2 in this folder: restarted" in log and "checkpoint step 1" in log
    assert "restarted" in rec["usage_source"]["train_seconds"]
