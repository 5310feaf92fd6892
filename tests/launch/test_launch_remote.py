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
    if "--dry-run" in args:
        print("dry run ok"); sys.exit(int(os.environ.get("FAKE_RL_CODE", "0")))
    run = pathlib.Path("outputs/reverse-text--m--abc")
    run.mkdir(parents=True)
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
        ev.mkdir(parents=True)
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


def job(teacher: str | None = None, port: int | None = None) -> dict[str, object]:
    return {"run_id": "tg-opd", "arm": "opd", "files": {"rl.toml": "max_steps = 2\n"},
            "main": "rl.toml", "teacher": teacher, "teacher_port": port}


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
    assert inf == teacher_argv("T/teacher", port)[1:]
    assert inf[inf.index("--vllm.gpu-memory-utilization") + 1] == "0.4"
    assert rl[-2:] == ["@", str(tmp_path / "work" / "tg-opd" / "rl.toml")]

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
