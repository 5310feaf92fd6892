"""What every warning rule is made of: a `Rule` (id, condition, citation, check) reads the run spec
and the `Facts` a target reports (whileai.rules.facts), and yields a `Finding` (id, message,
citation) or nothing. `Finding` is the report's warning record: one type, built here, rendered by
whileai.report and typed in its JSON schema (whileai.report.document)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

from pydantic import ConfigDict, Field

from whileai.rules.facts import Facts

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A research-backed warning."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # the report schema's: no other keys

    rule: Annotated[str, Field(description="Rule id (see `whileai rules`).")]
    message: Annotated[str, Field(description="What is wrong with this run, in words.")]
    citation: Annotated[str, Field(description="The paper, code or issue the rule rests on.")]
    accepted: Annotated[str | None, Field(description="The spec's reason for accepting this warning "
                                          "(its `accept` table); null: not accepted, so it fails "
                                          "--strict.")] = None

    def to_dict(self) -> dict[str, Any]:
        """The `--json` report's form: the fields, in order."""
        return asdict(self)


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
        msg = self.check(_as_written(run, facts.replaced), facts)
        return Finding(rule=self.id, message=msg, citation=self.citation) if msg else None


def _as_written(run: RunSpec, replaced: tuple[tuple[str, Any], ...]) -> RunSpec:
    """The run with each spec field an override replaced holding the value the file holds, so a
    rule judges what will run (`--set trainer.optim.lr=1e-2` is judged as learning_rate 1e-2)."""
    for field, value in replaced:
        name = field.removeprefix("method.")
        if name in type(run.method).model_fields:
            run = run.model_copy(update={"method": run.method.model_copy(update={name: value})})
        elif name in type(run).model_fields:
            run = run.model_copy(update={name: value})
    return run


__all__ = ["Facts", "Finding", "Rule"]
