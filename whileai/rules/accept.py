"""Warnings a spec accepts, and warnings the other specs compiled alongside answer.

- `accept` (a RunSpec field): rule id -> why the warning does not apply to this run. `mark`
  checks every id against the rules (an unknown one is one SpecError line with a did-you-mean
  naming the known ids) and marks the findings it names: still reported, with the reason, and
  `--strict` (whileai.rules.honoured) passes them. `unused` says which acceptances did not fire.
- `needs-grpo-arm` asks for a GRPO arm on the same holdout; `answered` says where one is compiled
  in the same invocation (`whileai compile grpo.toml opd.toml`, the recipes' arms): a GRPO run on
  the same student, taskset (or data file) and eval set, so the rule is met there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from whileai.errors import SpecError, close_matches
from whileai.rules.base import Finding
from whileai.spec.run import RunSpec

GRPO_ARM = "needs-grpo-arm"


def mark(run: RunSpec, found: Iterable[Finding], known: Sequence[str]) -> tuple[Finding, ...]:
    """The findings, each one the spec accepts marked with its reason."""
    for rule in run.accept:
        if rule not in known:
            near = close_matches(rule, list(known))
            raise SpecError(f"accept.{rule}", rule, f"a rule id: one of {', '.join(known)}",
                            hint=f"did you mean {near[0]!r}?" if near else "")
    return tuple(replace(w, accepted=run.accept[w.rule]) if w.rule in run.accept else w for w in found)


def unused(run: RunSpec, found: Iterable[Finding], notes: Iterable[str] = ()) -> list[str]:
    """One note per acceptance whose rule did not fire on this run; none for a rule a note already
    says is met (`answered`: the GRPO arm compiled alongside), which would contradict it."""
    fired = {w.rule for w in found} | {n.split(" is met", 1)[0] for n in notes if " is met" in n}
    return [f"accepted {rule} but it does not apply to this run (reason given: {why})"
            for rule, why in run.accept.items() if rule not in fired]


def same_holdout(a: RunSpec, b: RunSpec) -> bool:
    """The two runs train the same student on the same tasks and are scored on the same eval set."""
    ea, eb = a.eval, b.eval
    return (a.model, a.taskset, a.data, ea.enabled, ea.taskset, ea.taskset_args, ea.examples) == \
        (b.model, b.taskset, b.data, eb.enabled, eb.taskset, eb.taskset_args, eb.examples)


def answered(run: RunSpec, others: Sequence[tuple[str, RunSpec]]) -> str | None:
    """Where `needs-grpo-arm` is met: a note naming the GRPO arm compiled alongside, or None."""
    if not run.eval.enabled:
        return None
    for name, other in others:
        if other is not run and other.method.type == "grpo" and not other.sources \
                and other.then is None and same_holdout(run, other):
            return (f"{GRPO_ARM} is met: the GRPO arm {name!r} compiled alongside trains the same "
                    "student on the same taskset and is scored on the same holdout")
    return None


__all__ = ["GRPO_ARM", "answered", "mark", "same_holdout", "unused"]
