"""prime-rl's own metric logs -> the metrics record every arm writes (whileai.targets.run.Metrics).

prime-rl (pinned commit) logs JSON lines to `<output_dir>/<run.name>/metrics.jsonl` from both the
trainer and the orchestrator (`{"step": n, "time": t, <key>: value, ...}`) and the episodes of
each step to `rollouts/step_<n>/<train|eval>/<all|effective>/traces.jsonl`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeGuard

from whileai.targets.run import Point

# prime-rl metric keys (src/prime_rl/orchestrator/metrics.py, trainer/rl/loss.py, train.py at the
# pin): eval "eval/<env>/all/<agent>/avg@<k>" (or ".../reward/mean"), train
# "train/agg/all/<agent>/reward/mean", teacher KL "ref_kl/mean" (opd/opsd loss type ref_kl),
# the trainer's "loss/mean" and "entropy/all/mean".
SERIES_KEYS: dict[str, tuple[re.Pattern[str], ...]] = {
    "eval_reward": (
        re.compile(r"^eval/[^/]+/all/[^/]+/avg@\d+$"),
        re.compile(r"^eval/[^/]+/all/[^/]+/reward/mean$"),
    ),
    "train_reward": (re.compile(r"^train/agg/all/[^/]+/reward/mean$"),),
    "teacher_kl": (re.compile(r"^ref_kl/mean$"),),
    "train_loss": (re.compile(r"^loss/mean$"),),
    "entropy": (re.compile(r"^entropy/all/mean$"),),
}
# orchestrator progress counters (src/prime_rl/orchestrator/orchestrator.py at the pin): running
# totals, and per-step completion tokens of the batch that was trained on
USAGE_KEYS = {"rollouts": "progress/total_rollouts", "sampled_tokens": "progress/output_tokens"}
_TASK_KEYS = ("task_id", "example_id", "id", "name")


def _rows(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(step, row) for each JSON line with an integer-like step; bad lines (a run killed
    mid-write) are skipped."""
    for line in lines:
        try:
            row = json.loads(line)
            yield int(row["step"]), row
        except (ValueError, KeyError, TypeError):
            continue


def _number(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def parse_metrics_jsonl(lines: Iterable[str]) -> dict[str, list[Point]]:
    """prime-rl `metrics.jsonl` rows → our series; the first matching key pattern wins.

    Bad lines (a run killed mid-write) are skipped. A step logged twice keeps the last value.
    """
    found: dict[str, dict[int, dict[int, float]]] = {name: {} for name in SERIES_KEYS}
    for step, row in _rows(lines):
        for key, value in row.items():
            if not _number(value):
                continue
            for name, patterns in SERIES_KEYS.items():
                for rank, pat in enumerate(patterns):
                    if pat.match(key):
                        found[name].setdefault(rank, {})[step] = float(value)
    out: dict[str, list[Point]] = {}
    for name, by_rank in found.items():
        if by_rank:
            best = by_rank[min(by_rank)]
            out[name] = sorted(best.items())
    return out


def parse_usage(lines: Iterable[str]) -> tuple[dict[str, float], dict[str, str]]:
    """prime-rl `metrics.jsonl` rows → (usage, how each was measured): total rollouts (the
    orchestrator's running total, its last value) and sampled tokens (the sum of its per-step
    output tokens, one value per step)."""
    total: float | None = None
    out_tokens: dict[int, float] = {}
    for step, row in _rows(lines):
        if _number(v := row.get(USAGE_KEYS["rollouts"])):
            total = max(total or 0.0, float(v))
        if _number(v := row.get(USAGE_KEYS["sampled_tokens"])):
            out_tokens[step] = float(v)
    usage: dict[str, float] = {}
    how: dict[str, str] = {}
    if total is not None:
        usage["rollouts"], how["rollouts"] = total, f"prime-rl log: last {USAGE_KEYS['rollouts']}"
    if out_tokens:
        usage["sampled_tokens"] = sum(out_tokens.values())
        how["sampled_tokens"] = f"prime-rl log: sum of {USAGE_KEYS['sampled_tokens']} over steps"
    return usage, how


def _task_id(rec: dict[str, Any]) -> str | None:
    for holder in (rec, rec.get("task") or {}, rec.get("example") or {}, rec.get("info") or {}):
        if isinstance(holder, dict):
            for k in _TASK_KEYS:
                if isinstance(holder.get(k), (str, int)) and not isinstance(holder.get(k), bool):
                    return str(holder[k])
    return None


def _reward(rec: dict[str, Any]) -> float | None:
    r = rec.get("reward")
    if isinstance(r, (int, float)) and not isinstance(r, bool):
        return float(r)
    traces = rec.get("traces")
    if isinstance(traces, list):
        vals = [float(t["reward"]) for t in traces if isinstance(t, dict)
                and isinstance(t.get("reward"), (int, float))]
        if vals:
            return sum(vals) / len(vals)
    return None


def parse_eval_traces(run_dir: Path) -> dict[str, float]:
    """Per-task mean reward from the last eval step's episode records under `run_dir`.

    Looks for a task id under task_id / example_id / id / name (top level, then `task`,
    `example`, `info`) and a `reward` (or the mean of `traces[*].reward`). The episode record
    format belongs to `verifiers`; records without both are skipped.
    """
    steps = sorted(
        (int(m.group(1)), p)
        for p in run_dir.glob("**/rollouts/step_*/eval/all/traces.jsonl")
        if (m := re.search(r"step_(\d+)", str(p)))
    )
    if not steps:
        return {}
    last = max(s for s, _ in steps)
    sums: dict[str, list[float]] = {}
    for step, path in steps:
        if step != last:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and (tid := _task_id(rec)) is not None:
                if (r := _reward(rec)) is not None:
                    sums.setdefault(tid, []).append(r)
    return {k: sum(v) / len(v) for k, v in sorted(sums.items())}


def collect_prime_rl(run_dir: Path) -> tuple[dict[str, list[Point]], dict[str, float]]:
    """Series and per-task rewards from every `metrics.jsonl` under a prime-rl output folder."""
    return parse_metrics_jsonl(metric_lines(run_dir)), parse_eval_traces(run_dir)


def metric_lines(run_dir: Path) -> list[str]:
    lines: list[str] = []
    for path in sorted(run_dir.glob("**/metrics.jsonl")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines
