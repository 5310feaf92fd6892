"""Each arm's spend: measured where the run logged it, else estimated with the formula stated.

    arm_budget(arm_record)   # ArmBudget(rollouts=Quantity(value=640, source="logged", how=...), ...)
    mismatches(ratio)        # ["rollouts"]: quantities whose a / b ratio is beyond 2x either way

Rollouts and sampled tokens come from the trainer's log (TRL: trainer_state.json; prime-rl: the
orchestrator's progress counters), device seconds from the run's clock (GPU-seconds: the GPUs
held x the training wall time; offline: the CPU time of the training process). Teacher-scored
tokens are the sampled tokens for any arm with a teacher (OPD, SFT) or a self-teacher (OPSD):
the teacher scores every sampled token (its prompt prefill comes on top), and 0 for GRPO.
"""

from __future__ import annotations

from typing import Any, Literal

from whileai.cost.budget import RATIO
from whileai.launch.manifest import ArmRecord
from whileai.results.document import ArmBudget, Quantity

QUANTITIES = ("rollouts", "sampled_tokens", "teacher_tokens", "device_seconds")
COMPARED = ("rollouts", "sampled_tokens", "device_seconds")  # the 2x check (teacher: 0 for GRPO)


def _logged(usage: dict[str, float], how: dict[str, str], key: str) -> Quantity | None:
    if key not in usage:
        return None
    return Quantity(value=usage[key], source="logged", how=how.get(key, "reported by the run"))


def arm_budget(a: ArmRecord) -> ArmBudget:
    s, r = a.spec, a.result
    step: dict[str, Any] = s.per_step
    usage = dict(r.usage) if r else {}
    how = dict(r.usage_source) if r else {}
    unknown = Quantity(value=None, source="unknown", how="neither logged nor planned")

    rollouts = _logged(usage, how, "rollouts")
    if rollouts is None and s.steps and step.get("rollouts"):
        seats = int(step.get("seats") or 1)
        rollouts = Quantity(value=float(s.steps * step["rollouts"]), source="estimate",
                            how=f"planned: steps x prompts x samples{' x seats' if seats > 1 else ''}"
                            f" = {s.steps} x {step['prompts']} x {step['samples']}"
                            + (f" x {seats}" if seats > 1 else ""))
    rollouts = rollouts or unknown

    sampled = _logged(usage, how, "sampled_tokens")
    if sampled is None and rollouts.value is not None and step.get("max_tokens"):
        sampled = Quantity(value=rollouts.value * step["max_tokens"], source="estimate",
                           how=f"upper bound: rollouts x max_tokens ({step['max_tokens']})")
    sampled = sampled or unknown

    teacher = _logged(usage, how, "teacher_tokens")
    if teacher is None:
        role = step.get("teacher", "unknown")
        if role is None:
            teacher = Quantity(value=0.0, source="exact", how="no teacher: a reward scores the rollouts")
        elif role == "unknown":
            teacher = unknown
        elif role == "sampler":
            teacher = Quantity(value=sampled.value, source=sampled.source,
                               how="the teacher samples every training token (= sampled_tokens; "
                               "prompt prefill on top)")
        else:
            who = "the teacher" if role == "teacher" else "the student's privileged self-view"
            teacher = Quantity(value=sampled.value, source=sampled.source,
                               how=f"{who} scores every sampled token (= sampled_tokens; prompt "
                               "prefill on top)")

    device, seconds = _device(a, usage, how)
    return ArmBudget(steps=s.steps, per_step=step, rollouts=rollouts, sampled_tokens=sampled,
                     teacher_tokens=teacher, device_seconds=seconds, device=device)


Device = Literal["gpu", "cpu"] | None


def _device(a: ArmRecord, usage: dict[str, float], how: dict[str, str]) -> tuple[Device, Quantity]:
    r = a.result
    if (q := _logged(usage, how, "gpu_seconds")) is not None:
        return "gpu", q
    if (q := _logged(usage, how, "cpu_seconds")) is not None:
        return "cpu", q
    if r is None or r.seconds is None:
        return None, Quantity(value=None, source="unknown", how="the run reported no time")
    gpus = a.spec.per_step.get("gpus")
    if r.gpu or gpus:
        n = int(gpus or 1)
        return "gpu", Quantity(value=r.seconds * n, source="estimate",
                               how=f"wall seconds of the whole run x {n} GPUs (setup included)")
    return "cpu", Quantity(value=r.seconds, source="estimate",
                           how="wall seconds of the whole run (evaluation included)")


def mismatches(r: dict[str, float], ratio: float = RATIO) -> list[str]:
    """Quantities (of COMPARED) whose ratio is beyond `ratio` either way."""
    return [k for k in COMPARED if k in r and (r[k] > ratio or r[k] < 1 / ratio)]


__all__ = ["COMPARED", "QUANTITIES", "arm_budget", "mismatches"]
