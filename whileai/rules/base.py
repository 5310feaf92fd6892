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


# Error-level rules: when one fires unaccepted, the run trains nothing useful or its result cannot be
# read (a report's first screen names each: whileai.report.overview). Every other rule warns.
SINKS: dict[str, str] = {
    "grpo-no-credit": "every advantage is 0: no gradient reaches the policy",
    "tokenizer-mismatch": "the teacher scores token ids the student did not sample",
    "divergence-not-honoured": "the file trains another objective than the spec asks for",
    "engine-too-small": "inference cannot hold the student's weights",
    "eval-never-runs": "no holdout score, so the arm cannot be compared",
    "holdout-is-training-data": "the holdout score is measured on the training rows",
    "ema-lora-adapter": "the self-teacher averages the adapter, not the student",
    "ema-lora-sharded": "the EMA teacher breaks under FSDP2 (huggingface/trl issue 6828)",
}


def severity(rule: str) -> str:
    """'error' for a rule in SINKS, else 'warning'."""
    return "error" if rule in SINKS else "warning"


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


__all__ = ["SINKS", "Facts", "Finding", "Rule", "severity"]
