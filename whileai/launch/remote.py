"""What runs inside a Modal container, without modal: testable with a fake `uv` on PATH.

`train_job` serves the OPD teacher when there is one, runs `uv run rl @ cfg.toml`, parses
prime-rl's metric logs into per-step series and writes `metrics.json` to the volume folder. It
never raises: failures come back as an error record, also written to the volume. A restarted
(preempted) container that finds an ok `metrics.json` returns it without training again.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
import traceback
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.launch.manifest import SLIM_MARK
from whileai.launch.metrics import (
    Metrics,
    collect_prime_rl,
    error_record,
    metric_lines,
    parse_usage,
    read_metrics,
    write_metrics,
)
from whileai.launch.runner import describe_returncode, tail

PRIME_RL_DIR = "/opt/prime-rl"
TEACHER_MEMORY = 0.4


def job_payload(arm: Any) -> dict[str, Any]:
    """The JSON-able job for one arm (an ArmRecord): what the remote functions receive."""
    s = arm.spec
    files = {k: (Path(arm.dir) / k).read_text() if v.startswith(SLIM_MARK) else v
             for k, v in s.files.items()}  # large files live in the arm's folder
    return {"run_id": arm.run_id, "arm": s.name, "files": files, "main": s.main,
            "teacher": s.teacher, "teacher_port": s.teacher_port}


def teacher_argv(model: str, port: int) -> list[str]:
    """prime-rl's inference entry point (flags from inference.schema.json at the pin)."""
    return ["uv", "run", "--project", PRIME_RL_DIR, "inference", "--vllm.model", model,
            "--server.port", str(port), "--vllm.gpu-memory-utilization", str(TEACHER_MEMORY)]


def rl_argv(config: Path, *, dry_run: bool = False) -> list[str]:
    return ["uv", "run", "--project", PRIME_RL_DIR, "rl", "@", str(config)] + (
        ["--dry-run"] if dry_run else [])


def wait_for_models(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Block until http://localhost:<port>/v1/models answers 200, the server dies, or timeout."""
    url = f"http://localhost:{port}/v1/models"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"teacher server {describe_returncode(proc.returncode)}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"teacher server did not answer {url} within {timeout:.0f} s")


def write_files(job: dict[str, Any], work: Path) -> Path:
    """The job's files under `work` (sub-folders made); returns its main file's path."""
    for name, text in job["files"].items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    return work / (job.get("main") or next(iter(job["files"])))


def finished(out: Path) -> dict[str, Any] | None:
    """The ok record an earlier attempt left at `out` (a preempted container's restart returns
    it instead of training again); None when there is none."""
    try:
        prev = read_metrics(out) if out.exists() else None
    except ValueError:
        return None
    return prev.model_dump(mode="json") if prev is not None and prev.status == "ok" else None


def save(out: Path, record: dict[str, Any], commit: Callable[[], None]) -> dict[str, Any]:
    """Write the record to the volume; a volume problem is added to its error, never raised."""
    try:
        write_metrics(out, record)
        commit()
    except Exception as e:
        record["error"] = (record.get("error") or "") + f" (volume write failed: {e})"
    return record


def train_job(
    job: dict[str, Any],
    volume_dir: Path,
    work_root: Path,
    *,
    commit: Callable[[], None] = lambda: None,
    gpu: str | None = None,
    image: str | None = None,
    teacher_timeout: float = 900.0,
) -> dict[str, Any]:
    """Run one arm; return (and write to `volume_dir/metrics.json`) its metrics record."""
    out = volume_dir / "metrics.json"
    if (prev := finished(out)) is not None:
        return prev
    start = time.monotonic()
    work = work_root / job["run_id"]
    teacher: subprocess.Popen[bytes] | None = None
    log_path = work / "rl.log"
    try:
        cfg = write_files(job, work)
        if job.get("teacher"):
            port = int(job.get("teacher_port") or 8001)
            tlog = open(work / "teacher.log", "ab")  # noqa: SIM115 (closed with the process)
            teacher = subprocess.Popen(
                teacher_argv(job["teacher"], port), cwd=work, stdout=tlog,
                stderr=subprocess.STDOUT, env=dict(os.environ, CUDA_VISIBLE_DEVICES="0"),
                start_new_session=True,
            )
            wait_for_models(port, teacher_timeout, teacher)
        rl_start = time.monotonic()
        with open(log_path, "ab") as log:
            code = subprocess.run(rl_argv(cfg), cwd=work, stdout=log,
                                  stderr=subprocess.STDOUT).returncode
        rl_seconds = round(time.monotonic() - rl_start, 1)
        series, per_task = collect_prime_rl(work)
        usage, how = parse_usage(metric_lines(work))
        usage["train_seconds"], how["train_seconds"] = rl_seconds, "wall clock of `rl`"
        if (n := gpu_count(gpu)) is not None:
            usage["gpu_seconds"] = round(rl_seconds * n, 1)
            how["gpu_seconds"] = f"wall clock of `rl` x {n} GPUs held by the container"
        m = Metrics(series=series, per_task=per_task, returncode=code,
                    seconds=round(time.monotonic() - start, 1), gpu=gpu, image=image,
                    usage=usage, usage_source=how)
        if code != 0:
            m = m.model_copy(update={"status": "error", "error": f"rl {describe_returncode(code)}",
                                     "log_tail": tail(log_path)})
        record = m.model_dump(mode="json")
    except Exception as e:
        record = error_record(f"{type(e).__name__}: {e}",
                              seconds=round(time.monotonic() - start, 1), gpu=gpu, image=image,
                              log_tail=tail(log_path) or traceback.format_exc()[-4000:])
    finally:
        if teacher is not None:
            teacher.terminate()
            try:
                teacher.wait(30)
            except subprocess.TimeoutExpired:
                teacher.kill()
    return save(out, record, commit)


def gpu_count(label: str | None) -> int | None:
    """'NVIDIA H100 80GB HBM3 x2' → 2 (the label _gpu_name gives); None when unknown."""
    m = re.search(r" x(\d+)$", label or "")
    return int(m.group(1)) if m else None


def validate_job(job: dict[str, Any], work_root: Path) -> dict[str, Any]:
    """`uv run rl @ cfg.toml --dry-run`; returns {ok, returncode, output} and never raises."""
    try:
        cfg = write_files(job, work_root / job["run_id"])
        p = subprocess.run(rl_argv(cfg, dry_run=True), cwd=cfg.parent, capture_output=True,
                           text=True, timeout=900)
        return {"arm": job["arm"], "ok": p.returncode == 0, "returncode": p.returncode,
                "output": (p.stdout + p.stderr)[-4000:]}
    except Exception as e:
        return {"arm": job["arm"], "ok": False, "returncode": None,
                "output": f"{type(e).__name__}: {e}"}
