"""What runs inside a verl arm's Modal container, without modal: testable with stand-in scripts.

`train_verl_job` writes the arm's run folder (run.sh and the files beside it, as `whileai compile
-b verl` wrote them), runs `bash run.sh` as written, then `bash eval.sh` where the arm has one
(the SFT arm: its final model scored on the holdout by verl's own validation), reads verl's own
logs (whileai.launch.verl_metrics) and writes `metrics.json` to the volume folder. verl itself
starts the OPD teacher on its own GPU pool, so nothing is served here. It never raises: a failure
comes back as an error record, also written to the volume; a restarted (preempted) container
that finds an ok `metrics.json` returns it without training again.
"""

from __future__ import annotations

import os
import subprocess
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.launch.metrics import Metrics, error_record
from whileai.launch.remote import finished, gpu_count, save, write_files
from whileai.launch.runner import describe_returncode, tail
from whileai.launch.verl_metrics import parse_val_dump, parse_verl_jsonl

EVAL = "eval.sh"  # the SFT arm's scoring step (whileai.launch.verl_eval)
VAL_DIR = "outputs/val"  # trainer.validation_data_dir, under the folder its run.sh works in
TRAIN_LOG, EVAL_LOG = "verl_train.jsonl", "verl_eval.jsonl"  # $VERL_FILE_LOGGER_PATH of each


def _bash(script: str, work: Path, logger: Path, log: Path) -> int:
    env = dict(os.environ, VERL_FILE_LOGGER_PATH=str(logger))
    with open(log, "ab") as out:
        return subprocess.run(["bash", script], cwd=work, stdout=out, stderr=subprocess.STDOUT,
                              env=env).returncode


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []


def read_run(work: Path, *, scored: bool) -> tuple[dict[str, list[tuple[int, float]]], dict[str, float]]:
    """Series and per-task holdout scores of a finished verl arm folder. An arm scored by
    eval.sh (SFT) gets its eval point at its last training step."""
    series = parse_verl_jsonl(_lines(work / TRAIN_LOG))
    if not scored:
        return series, parse_val_dump(work / VAL_DIR)[1]
    last = max((s for points in series.values() for s, _ in points), default=0)
    evals = parse_verl_jsonl(_lines(work / EVAL_LOG)).get("eval_reward", [])
    if evals:
        series["eval_reward"] = [(last, evals[-1][1])]
    return series, parse_val_dump(work / "eval" / VAL_DIR)[1]


def train_verl_job(
    job: dict[str, Any],
    volume_dir: Path,
    work_root: Path,
    *,
    commit: Callable[[], None] = lambda: None,
    gpu: str | None = None,
    image: str | None = None,
) -> dict[str, Any]:
    """Run one verl arm; return (and write to `volume_dir/metrics.json`) its metrics record."""
    out = volume_dir / "metrics.json"
    if (prev := finished(out)) is not None:
        return prev
    start = time.monotonic()
    work = work_root / job["run_id"]
    log = work / "run.log"
    try:
        write_files(job, work)
        code = _bash(job.get("main") or "run.sh", work, work / TRAIN_LOG, log)
        train_seconds = round(time.monotonic() - start, 1)
        scored = EVAL in job["files"]
        step = "run.sh"
        if code == 0 and scored:
            step = EVAL
            code = _bash(EVAL, work, work / EVAL_LOG, log)
        series, per_task = read_run(work, scored=scored)
        usage = {"train_seconds": train_seconds}
        how = {"train_seconds": "wall clock of `bash run.sh`"}
        if (n := gpu_count(gpu)) is not None:
            usage["gpu_seconds"] = round(train_seconds * n, 1)
            how["gpu_seconds"] = f"wall clock of `bash run.sh` x {n} GPUs held by the container"
        m = Metrics(series=series, per_task=per_task, returncode=code, gpu=gpu, image=image,
                    seconds=round(time.monotonic() - start, 1), usage=usage, usage_source=how)
        if code != 0:
            m = m.model_copy(update={"status": "error", "error": f"{step} {describe_returncode(code)}",
                                     "log_tail": tail(log)})
        elif not per_task:
            m = m.model_copy(update={"status": "error", "log_tail": tail(log), "error": "verl wrote no "
                                     f"holdout scores ({VAL_DIR}/<step>.jsonl): nothing to compare"})
        record = m.model_dump(mode="json")
    except Exception as e:
        record = error_record(f"{type(e).__name__}: {e}", seconds=round(time.monotonic() - start, 1),
                              gpu=gpu, image=image, log_tail=tail(log) or traceback.format_exc()[-4000:])
    return save(out, record, commit)


__all__ = ["EVAL", "VAL_DIR", "read_run", "train_verl_job"]
