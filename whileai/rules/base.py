"""What every warning rule is made of: a `Rule` (id, condition, citation, check) reads the run spec
and the `Facts` a target reports (whileai.rules.facts), and yields a `Finding` (id, message,
citation) or nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from whileai.rules.facts import Facts

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec


class Finding(NamedTuple):
    """A research-backed warning: rule id, message, citation."""

    rule: str
    message: str
    citation: str


class Rule(NamedTuple):
    id: str
    condition: str
    citation: str
    check: Callable[[RunSpec, Facts], str | None]
    fields: tuple[str, ...] = ()  # the spec fields it reads: never fires where the target ignores one

    def __call__(self, run: RunSpec, facts: Facts) -> Finding | None:
        ignored = {x for f in facts.ignored for x in (f, f"method.{f}")}  # short labels
        if set(self.fields) & ignored:
            return None
        msg = self.check(run, facts)
        return Finding(self.id, msg, self.citation) if msg else None


__all__ = ["Facts", "Finding", "Rule"]
