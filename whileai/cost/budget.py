"""What an arm spends per step, and `--budget rollouts=N | tokens=N`: steps that spend the same.

    per_step(compiled)            # {"rollouts": 256, "max_tokens": 8192, "teacher": "teacher", ...}
    budget = parse_budget("rollouts=10240")
    steps = steps_for(budget, per_step(compiled))   # 40

Per-step facts come from the compiled run (`Compiled.facts`: the document as written, overrides
included), so they say what the target will do: `--set orchestrator.batch_size=256` is 256
rollouts a step here as in the report, and TRL's DistillationTrainer samples one completion per
prompt whatever `samples` says. Tokens are planned from the cap, `rollouts x max_tokens`, an upper
bound: the results (whileai.results.spend) replace it with the run's logged lengths where the
target reports them. Pure and light: no torch, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from whileai.errors import SpecError

if TYPE_CHECKING:
    from whileai.targets.compiled import Compiled

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


def per_step(c: Compiled) -> dict[str, Any]:
    """The arm's spend per optimizer step, read from the compiled run's facts (the document as
    written, overrides included): rollouts = prompts x samples x seats, the completion cap, the
    GPUs. The spec's values only where the target states no fact."""
    run, f = c.run, c.facts
    samples = f.samples_effective if f.samples_effective is not None else run.method.samples
    rollouts = f.rollouts if f.rollouts is not None else run.prompts * samples * f.seats
    per = samples * f.seats
    # the target's count of prompts; counted back from the rollouts only where it states none
    prompts = f.prompts if isinstance(f.prompts, int) or rollouts % per else rollouts // per
    return {
        "rollouts": rollouts,
        "seats": f.seats,
        "prompts": prompts,
        "samples": samples,
        "max_tokens": f.max_tokens if f.max_tokens is not None else run.method.max_tokens,
        "teacher": run.method.teacher_role,
        "gpus": f.gpus,
    }


def steps_of(c: Compiled) -> int:
    """The optimizer steps the compiled run trains (an override of max_steps included)."""
    s = c.facts.steps
    return s if isinstance(s, int) and not isinstance(s, bool) and s > 0 else c.run.steps


def check_matched(compiled: Mapping[str, Compiled], budget: Budget | None) -> None:
    """--budget set every arm's steps: an arm whose override of max_steps wins over them would
    spend another budget, so it is refused (one SpecError)."""
    for n, c in compiled.items():
        if budget is not None and steps_of(c) != c.run.steps:
            raise SpecError("--budget", str(budget), f"arms whose steps it can set: {n} trains "
                            f"{steps_of(c)} steps whatever steps says (an override of max_steps)")


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


def mismatch(kind: str, totals: dict[str, float], ratio: float = RATIO,
             prompts: Mapping[str, Any] | None = None,
             samples: Mapping[str, Any] | None = None) -> str | None:
    """A one-line warning when the arms' `kind` totals differ by more than `ratio`. With each
    arm's prompts read and samples per prompt, it says what is matched (the same prompts) and why
    the spend still differs (each method samples its own number of completions per prompt)."""
    r = spread(totals)
    if r is None or r <= ratio:
        return None
    listed = ", ".join(f"{n} {_num(v)}" for n, v in totals.items())
    seen = set((prompts or {}).values())
    if prompts and samples and len(seen) == 1 and set(prompts) == set(samples):
        per = ", ".join(f"{n} {samples[n]}" for n in samples)
        return (f"budgets differ {r:.1f}x in {kind} ({listed}): every arm reads the same "
                f"{_num(float(seen.pop()))} prompts, but each method samples its own number of "
                f"completions per prompt ({per}), so the arms are matched in prompts, not in "
                "compute; --budget rollouts=N (or tokens=N) sets each arm's steps to spend the same")
    return (f"budgets differ {r:.1f}x in {kind} ({listed}): a per-step comparison is not a "
            f"per-compute one; rerun with --budget rollouts=N (or tokens=N) to match them")


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


__all__ = ["KINDS", "RATIO", "Budget", "check_matched", "mismatch", "parse_budget", "per_step",
           "planned", "spread", "steps_for", "steps_of"]
