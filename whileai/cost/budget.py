"""What an arm spends per step, and `--budget rollouts=N | tokens=N`: steps that spend the same.

    per_step(compiled)            # {"rollouts": 256, "max_tokens": 8192, "teacher": "teacher", ...}
    budget = parse_budget("rollouts=10240")
    steps = steps_for(budget, per_step(compiled))   # 40

Per-step facts come from the compiled run, so they say what the target will do (TRL's
DistillationTrainer samples one completion per prompt whatever `samples` says: the backend's
`samples_effective` fact). Tokens are planned from the cap, `rollouts x max_tokens`, an upper
bound: the results (whileai.results.spend) replace it with the run's logged lengths where the
target reports them. Pure and light: no torch, no I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from whileai.errors import SpecError

if TYPE_CHECKING:
    from whileai.report.compiled import Compiled
    from whileai.spec.run import RunSpec

KINDS = {
    "rollouts": "completions sampled: steps x prompts x samples",
    "tokens": "sampled tokens, planned as rollouts x max_tokens (the cap: an upper bound)",
}
_BUDGET = re.compile(r"(?P<kind>[a-z]+)=(?P<n>[0-9][0-9_]*)")
RATIO = 2.0  # arms whose budgets differ by more than this factor get a warning


class Budget(NamedTuple):
    kind: str
    amount: int

    def __str__(self) -> str:
        return f"{self.kind}={self.amount}"


def parse_budget(text: str) -> Budget:
    """'rollouts=10240' or 'tokens=2000000' (whole numbers); anything else is one SpecError."""
    allowed = " or ".join(f"{k}=N" for k in KINDS) + " with N a positive whole number"
    m = _BUDGET.fullmatch(text.strip())
    if not m or m.group("kind") not in KINDS:
        raise SpecError("--budget", text, allowed)
    amount = int(m.group("n").replace("_", ""))
    if amount < 1:
        raise SpecError("--budget", text, allowed)
    return Budget(m.group("kind"), amount)


def teacher_role(run: RunSpec) -> str | None:
    """Who works on the sampled tokens besides the student: 'self' (OPSD's privileged view of
    the student scores them), 'teacher' (OPD's teacher scores them), 'sampler' (off-policy SFT:
    the teacher samples every one), None (GRPO: a reward)."""
    if run.method.type == "opsd":
        return "self"
    if run.method.type == "sft":
        return "sampler"
    return "teacher" if getattr(run.method, "teacher", None) is not None else None


def per_step(c: Compiled) -> dict[str, Any]:
    """The arm's spend per optimizer step, from the compiled run and the backend's facts."""
    run = c.run
    samples = int(c.data.get("samples_effective", run.method.samples))
    seats = int(c.data.get("seats", 1))  # prime-rl: trainable traces per episode (whileai.tasksets.seats)
    return {
        "rollouts": run.prompts * samples * seats,
        "seats": seats,
        "prompts": run.prompts,
        "samples": samples,
        "max_tokens": run.method.max_tokens,
        "teacher": teacher_role(run),
        "gpus": run.total_gpus if c.backend == "prime-rl" else None,
    }


def planned(step: dict[str, Any], kind: str) -> int:
    """One step's planned spend of `kind`."""
    if kind == "rollouts":
        return int(step["rollouts"])
    return int(step["rollouts"]) * int(step["max_tokens"])


def steps_for(budget: Budget, step: dict[str, Any]) -> int:
    """Steps that spend `budget` (rounded to the nearest step, at least one)."""
    return max(1, round(budget.amount / planned(step, budget.kind)))


def spread(totals: dict[str, float]) -> float | None:
    """max / min of positive totals; None with fewer than two."""
    vals = [v for v in totals.values() if v and v > 0]
    return max(vals) / min(vals) if len(vals) >= 2 else None


def mismatch(kind: str, totals: dict[str, float], ratio: float = RATIO) -> str | None:
    """A one-line warning when the arms' `kind` totals differ by more than `ratio`."""
    r = spread(totals)
    if r is None or r <= ratio:
        return None
    listed = ", ".join(f"{n} {_num(v)}" for n, v in totals.items())
    return (f"budgets differ {r:.1f}x in {kind} ({listed}): a per-step comparison is not a "
            f"per-compute one; rerun with --budget rollouts=N (or tokens=N) to match them")


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


__all__ = ["KINDS", "RATIO", "Budget", "mismatch", "parse_budget", "per_step", "planned", "spread",
           "steps_for", "teacher_role"]
