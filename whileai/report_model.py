"""The `--json` report as a pydantic model: the shape `Compiled.to_dict()` returns.

`schemas/report.schema.json` is generated from `Report`; a test validates every report the
tests produce against both this model and that schema, so the contract cannot drift from
`whileai.report`. Every key is required (`out` may be null), as `to_dict()` always writes all.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from whileai.spec import RunSpec


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Read(_Row):
    """A spec field the target reads: where, and with which value."""

    field: str = Field(description="Spec field, method fields without the 'method.' prefix.")
    path: str = Field(description="Dotted key in the target file ('a.b[0].c' for list items).")
    value: Any = Field(description="The value written there (JSON; other types as their text).")
    note: str = Field(description="How the value was derived, or ''.")


class Ignore(_Row):
    """A spec field the target does not read, and why."""

    field: str = Field(description="Spec field, method fields without the 'method.' prefix.")
    value: Any = Field(description="The field's value in the spec.")
    reason: str = Field(description="Why the target does not read it.")


class Fixed(_Row):
    """A key whileai sets that no spec field produced (a loader rule, a safe default)."""

    path: str = Field(description="Dotted key in the target file.")
    value: Any = Field(description="The value whileai writes there.")
    reason: str = Field(description="Why whileai sets it.")


class Finding(_Row):
    """A research-backed warning."""

    rule: str = Field(description="Rule id (see `whileai rules`).")
    message: str = Field(description="What is wrong with this run, in words.")
    citation: str = Field(description="The paper, code or issue the rule rests on.")


class Report(_Row):
    """What `whileai compile --json` prints for one spec (for several, a JSON array of these)."""

    backend: str = Field(description="The backend that compiled the spec: prime-rl or trl.")
    target: str = Field(description="The pinned target, with its version or commit.")
    out: str | None = Field(description="Where the main file was written; null when nothing was.")
    main: str = Field(description="Name of the main file in `files`.")
    summary: list[str] = Field(description="The report's header lines: method, model, GPUs, batch.")
    spec: RunSpec = Field(description="The run spec with every default filled in (unset fields left out).")
    reads: list[Read] = Field(description="Spec fields the target reads, one row per target key.")
    ignores: list[Ignore] = Field(description="Spec fields the target does not read, with reasons.")
    fixed: list[Fixed] = Field(description="Keys whileai sets that no spec field produced.")
    warnings: list[Finding] = Field(description="Research-backed warnings for this run.")
    run: list[str] = Field(description="Shell commands that start the run, in order.")
    files: dict[str, str] = Field(description="Every emitted file: name relative to the output -> text.")
    stages: list[Report] = Field(description="A two-stage run (`then`): each stage's own report, in "
                                 "order (the fields above then cover both); [] for one stage.")
