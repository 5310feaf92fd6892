"""verl 0.9.1's own logs → the metrics record every arm writes (whileai.targets.run.Metrics).

Two things a verl run leaves, both from verl's code at the pin:

- its file logger (`trainer.logger` with "file"; `utils/tracking.py` FileLogger) writes one JSON
  line per step, `{"step": n, "data": {key: value, ...}}`, to `$VERL_FILE_LOGGER_PATH`;
- its validation dump (`trainer.validation_data_dir`; `trainer/ppo/v1/trainer_base.py`
  `_write_generations`) writes `<dir>/<step>.jsonl`, one line per sample: `input` (the prompt
  as the model saw it), `output`, `gts`, `score`, `step`.

The holdout task of a sample is its prompt: every arm shares the student (and so its chat
template) and the holdout rows, so the same task reads the same `input` in every arm; its id
here is a short digest of that text (and of the ground truth, for two tasks with one prompt).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whileai.targets.run import Point

VAL_DIR = "outputs/val"  # trainer.validation_data_dir, under the folder its run.sh works in
TRAIN_LOG, EVAL_LOG = "verl_train.jsonl", "verl_eval.jsonl"  # $VERL_FILE_LOGGER_PATH of each

# verl metric keys at the pin: validation `val-core/<data_source>/<acc|reward>/mean@<n>`
# (trainer_base.py _val_metrics_update; a data source may hold '/', e.g. openai/gsm8k), the
# batch's score `critic/score/mean` (ppo/metric_utils.py), the distillation loss
# `actor/distillation/loss` (trainer/distillation/losses.py:225, prefixed `actor/` by
# trainer_base.py:1861; k1 with the policy gradient: the surrogate of the per-token reverse-KL
# estimate, which at ratio 1 is its mean), the actor's `actor/pg_loss` and `actor/entropy`,
# sft_trainer's `train/loss` and `val/loss`.
# A series takes its first pattern found in a log: OPD's training loss is the distillation loss.
# With use_task_rewards off verl still logs `actor/pg_loss` for the task-reward loss it then
# zeroes (losses.py:214-217), so a GRPO log alone is read at `actor/pg_loss`.
_DISTILL = re.compile(r"^(actor/)?distillation/loss$")
VERL_SERIES: dict[str, tuple[re.Pattern[str], ...]] = {
    "eval_reward": (re.compile(r"^val-core/.+/(acc|reward)/mean@\d+$"),),
    "train_reward": (re.compile(r"^critic/score/mean$"),),
    "teacher_kl": (_DISTILL,),
    "train_loss": (_DISTILL, re.compile(r"^actor/pg_loss$"), re.compile(r"^train/loss$")),
    "entropy": (re.compile(r"^actor/entropy$"),),
    "val_loss": (re.compile(r"^val/loss$"),),
}


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def parse_verl_jsonl(lines: Iterable[str]) -> dict[str, list[Point]]:
    """File-logger lines → series. Several keys of one series at a step (two data sources) are
    averaged; a step logged twice keeps its last values; unreadable lines are skipped."""
    found: dict[str, dict[int, dict[int, list[float]]]] = {n: {} for n in VERL_SERIES}
    for line in lines:
        try:
            row = json.loads(line)
            step, data = int(row["step"]), row["data"]
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(data, dict):
            continue
        fresh: dict[tuple[str, int], list[float]] = {}
        for key, value in data.items():
            if not _number(value):
                continue
            for name, patterns in VERL_SERIES.items():
                for rank, pat in enumerate(patterns):
                    if pat.match(key):
                        fresh.setdefault((name, rank), []).append(float(value))
        for (name, rank), values in fresh.items():
            found[name].setdefault(rank, {})[step] = values
    out: dict[str, list[Point]] = {}
    for name, by_rank in found.items():
        if by_rank:
            best = by_rank[min(by_rank)]
            out[name] = [(s, sum(v) / len(v)) for s, v in sorted(best.items())]
    return out


def task_id(prompt: str, truth: Any) -> str:
    """The holdout task of a sample: a digest of its prompt text and ground truth."""
    text = json.dumps([prompt, truth], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def parse_val_dump(folder: Path) -> tuple[int | None, dict[str, float]]:
    """The last validation dump under `folder` (`<step>.jsonl`): its step and the mean score of
    each task (several samples of one task, val_kwargs.n > 1, are averaged)."""
    dumps = sorted((int(p.stem), p) for p in folder.glob("*.jsonl") if p.stem.isdigit())
    if not dumps:
        return None, {}
    step, path = dumps[-1]
    scores: dict[str, list[float]] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("input"), str) and _number(rec.get("score")):
            scores.setdefault(task_id(rec["input"], rec.get("gts")), []).append(float(rec["score"]))
    return step, {k: sum(v) / len(v) for k, v in sorted(scores.items())}


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


__all__ = ["EVAL_LOG", "TRAIN_LOG", "VAL_DIR", "VERL_SERIES", "parse_val_dump", "parse_verl_jsonl",
           "read_run", "task_id"]
