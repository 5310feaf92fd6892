"""The `--json` report as a pydantic model: the shape `Compiled.to_dict()` returns.

`schemas/report.schema.json` is generated from `Report`; a test validates every report the
tests produce against both this model and that schema, so the contract cannot drift from
`whileai.targets.compiled`. Every key is required (`out` may be null), as `to_dict()` always writes all.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from whileai.cost.estimate import Cost
from whileai.rules.base import Finding
from whileai.spec.run import RunSpec


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


class Teacher(_Row):
    """Where a frozen teacher (OPD, SFT) is served and on how many GPUs (its size from its name)."""

    model: str = Field(description="The teacher model.")
    url: str = Field(description="Where the run reaches it.")
    mode: str = Field(description="share (beside the policy on GPU 0), local (GPUs of its own on "
                      "the run's node), job (its own SLURM job), endpoint (already served), "
                      "in-process (TRL loads it into every training process; SFT: into sample.py, "
                      "before training).")
    params_b: float | None = Field(description="Parameters, billions; null: unknown from the name.")
    active_params_b: float | None = Field(description="Active parameters (MoE).")
    gpus: int | None = Field(description="GPUs one server needs: bf16 weights plus KV headroom.")
    held_gpus: int | None = Field(description="GPUs held for it besides the run's.")
    file: str | None = Field(description="The `uv run inference` config whileai wrote for it.")
    formula: str = Field(description="How `gpus` is computed.")
    note: str = Field(description="The report's line about it.")


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
    cost: Cost | None = Field(description="The run's size and GPU-hour estimate (docs/cost.md).")
    teacher: Teacher | None = Field(description="Where an OPD or SFT teacher is served (a mixture's "
                                    "first); null otherwise.")
    teachers: list[Teacher] = Field(description="Every teacher of the run, one per distinct server "
                                    "(a mixture's sources may name several); [] without one.")
    stages: list[Report] = Field(description="A two-stage run (`then`): each stage's own report, in "
                                 "order (the fields above then cover both); [] for one stage.")
