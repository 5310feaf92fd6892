"""The compile pipeline every target runs, once: its steps are the target's, the order is here.

    refuse -> map (the field map) -> story (overrides that contradict the spec) -> overrides
    (checked against the target's catalogue: whileai.targets.overrides) -> settle (values derived
    after the overrides) -> account (the report's lists) -> check (the target's own rules on the
    final document) -> facts -> warnings (the shared rules, then the target's own) -> cost ->
    files -> `Compiled`, named after the target object (its `name` and `pin`).

A target supplies its steps as a `Steps` object (whileai.targets.<t>.compile) and calls
`run(target, steps, run)`; what a step does not need it leaves at the default. Nothing here
knows a target by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from whileai.rules import research
from whileai.targets import registry

if TYPE_CHECKING:
    from whileai.rules.base import Finding, Rule
    from whileai.rules.facts import Facts
    from whileai.spec.run import RunSpec


def warnings(run: RunSpec, facts: Facts, own: Sequence[Rule] = ()) -> tuple[Finding, ...]:
    """The shared rules' findings (whileai.rules.research), then the target's own (`own`); a spec
    that accepts a warning may name any target's rule (every id: whileai.targets.registry.rules)."""
    known = [r.id for r in registry.rules()] if run.accept else None
    return research.findings(run, facts, own, known)


__all__ = ["warnings"]
