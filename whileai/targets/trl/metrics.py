"""TRL 1.16.0's own logs -> the metrics record every arm writes (whileai.targets.run.Metrics):
per-step series from a Trainer's `log_history` and what the run spent from its
`trainer_state.json` (whileai.targets.trl.eval reads them from the last checkpoint it scores).
"""

from __future__ import annotations

from typing import Any

from whileai.targets.run import Point

# log_history key → our series name, per trainer (TRL 1.16.0)
SERIES = {
    "grpo": {"reward": "train_reward", "loss": "train_loss", "entropy": "entropy"},
    "distillation": {"loss": "teacher_kl", "entropy": "entropy"},
    "sdft": {"self_distillation/distillation_loss": "teacher_kl", "loss": "train_loss"},
    "sft": {"loss": "train_loss", "entropy": "entropy"},
}
LENGTH = "completions/mean_length"  # logged by all three trainers, per logged step


def log_series(log_history: list[dict[str, Any]], trainer: str) -> dict[str, list[Point]]:
    """Per-step series from a Trainer's log_history (rows without 'step' are skipped)."""
    out: dict[str, dict[int, float]] = {}
    for row in log_history:
        step = row.get("step")
        for key, name in SERIES.get(trainer, {}).items():
            value = row.get(key)
            if isinstance(step, int) and isinstance(value, (int, float)):
                out.setdefault(name, {})[step] = float(value)
    return {name: sorted(points.items()) for name, points in out.items()}


def usage(state: dict[str, Any], cfg: dict[str, Any]) -> tuple[dict[str, float], dict[str, str]]:
    """Rollouts and sampled tokens from a trainer_state.json: completions per optimizer step
    (per_device_train_batch_size x gradient_accumulation_steps, one process) x global_step, and
    x the mean of the logged completions/mean_length."""
    from whileai.targets.trl.batch import step_batch

    per_step = step_batch(cfg, 1)
    steps = int(state.get("global_step", 0))
    lengths = [float(r[LENGTH]) for r in state.get("log_history", [])
               if isinstance(r.get(LENGTH), (int, float)) and "step" in r]
    where = f"per_device_train_batch_size x gradient_accumulation_steps = {per_step} per step"
    out = {"rollouts": float(per_step * steps)}
    how = {"rollouts": f"trainer_state global_step {steps} x {where}"}
    if lengths:
        mean = sum(lengths) / len(lengths)
        out["sampled_tokens"] = round(mean * per_step * steps, 1)
        how["sampled_tokens"] = (f"rollouts x mean logged {LENGTH} ({mean:.1f} tokens, "
                                 f"{len(lengths)} log rows)")
    return out, how


__all__ = ["LENGTH", "SERIES", "log_series", "usage"]
