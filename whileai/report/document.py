"""The `--json` report as a pydantic model: the shape `Compiled.to_dict()` returns.

`schemas/report.schema.json` is generated from `Report`; a test validates every report the
tests produce against both this model and that schema, so the contract cannot drift from
`whileai.targets.compiled`. Every key is required (`out` may be null), as `to_dict()` always writes all.
Its rows are the records the targets build, one type each (their fields and descriptions are the
schema's): `Read`, `Ignore`, `Fixed` and `Teacher` (whileai.report.records), `Finding`
(whileai.rules.base) and `Cost` (whileai.cost.estimate).

Schema versions (`schema_version`, docs/guide.md "The --json report"): 1, unversioned, named the
target `backend` and the pin `target`; 2 names them `target` and `pin` (one word per concept).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from whileai.cost.estimate import Cost
from whileai.report.records import Fixed, Ignore, Read, Teacher
from whileai.rules.base import Finding
from whileai.spec.run import RunSpec


class Report(BaseModel):
    """What `whileai compile --json` prints for one spec file; for several, a JSON array of these."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[2] = Field(description="Version of this JSON's shape: 2 (version 1, "
                                       "unversioned, named the target `backend` and the pin `target`).")
    target: str = Field(description="The target that compiled the spec (`whileai --version` lists them).")
    pin: str = Field(description="The framework and version or commit the files are written for.")
    out: str | None = Field(description="Where the main file was written; null when nothing was.")
    main: str = Field(description="Name of the main file in `files`.")
    summary: list[str] = Field(description="The report's header lines: method, model, GPUs, batch.")
    overview: list[str] = Field(description="The report's first screen (whileai.report.overview): the "
                                "run's shape (GPUs, nodes, where each model runs), its hours and slowest "
                                "part, each teacher's pool, each error-level warning, then the count "
                                "of the others.")
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
