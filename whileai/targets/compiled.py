"""What a target returns: the emitted files and the honest account of them.

A target builds a `Compiled`; nothing here prints or writes files. `str(compiled)` is the
plain report (the seed page's shape, rendered by whileai.report.text), `to_dict()` the `--json`
contract. Its records are one type each, their JSON form their own `to_dict()`: `Read`, `Ignore`,
`Fixed` and `Teacher` (whileai.report.records, named here too), `Finding` (whileai.rules.base) and
`Cost` (whileai.cost.estimate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from whileai.cost.estimate import Cost
from whileai.report.overview import overview
from whileai.report.records import Fixed, Ignore, Read, Teacher
from whileai.rules import accept
from whileai.rules.base import Finding
from whileai.rules.facts import Facts
from whileai.spec.run import RunSpec
from whileai.words import counted

REPORT_VERSION = 2  # the `--json` report's shape (whileai.report.document.Report, which checks it): 1
# was unversioned, naming the target "backend" and the pin "target"; 2 says "target" and "pin"


@dataclass(frozen=True)
class Compiled:
    """A compiled run: its files, what the target reads, ignores and fixes, and the report."""

    target: str  # the target's name (whileai.targets.registry): "prime-rl", "trl"
    pin: str  # the framework and version the files are written for
    run: RunSpec
    files: dict[str, str]
    main: str
    reads: tuple[Read, ...]
    ignores: tuple[Ignore, ...]
    fixed: tuple[Fixed, ...]
    warnings: tuple[Finding, ...]
    commands: tuple[str, ...]
    out: str | None = None
    facts: Facts = field(default_factory=Facts)  # what the target states it will do (rules.facts)
    cost: Cost | None = None  # whileai.cost.estimate: size and GPU-hours before launch
    notes: tuple[str, ...] = ()  # further summary lines (e.g. where an OPD teacher is served)
    teacher: Teacher | None = None  # where and on how many GPUs a teacher is served
    teachers: tuple[Teacher, ...] = ()  # every teacher (a mixture may have several)
    stages: tuple[Compiled, ...] = ()  # a two-stage run (whileai.targets.stages): each stage, in order
    folder: str = ""  # a stage's folder inside the run's output folder ("" : beside the main file)
    doc: dict[str, Any] = field(default_factory=dict)  # the main file as data (read, not re-parsed)
    name: str = ""  # the spec's name (the CLI's file stem): a run directory's label names it

    @property
    def data(self) -> Facts:
        """The facts under their earlier name (`c.data["prompts"]` still reads)."""
        return self.facts

    @property
    def text(self) -> str:
        return self.files[self.main]

    @property
    def label(self) -> str:
        """Where the main file is; without an output, its name and that it was not written (and,
        for a run directory's fixed file name such as config.yaml, the spec it is for)."""
        if self.out:
            return self.out
        spec = f" for {self.name}" if self.name and not self.main.startswith(self.name) else ""
        return f"{self.main}{spec} (not written)"

    def header(self) -> list[str]:
        """Two summary lines from the FINAL values the target compiled (overrides included),
        as its facts state them; the spec's values only where a fact is missing."""
        r, m, d = self.run, self.run.method, self.facts
        weights = d.weights or (f"LoRA rank {r.lora_rank}" if r.lora else "full weights")
        layout = _or(d.layout, r.layout.text())
        steps, prompts = _or(d.steps, r.steps), _or(d.prompts, r.prompts)
        samples = _or(d.samples_effective, m.samples)
        note = "" if samples == m.samples else f" (samples {m.samples} not honoured)"
        per_step = _or(d.rollouts, prompts * samples if isinstance(prompts, int) else "?")
        asynchrony = _or(d.asynchrony, f"max_off_policy_steps {r.max_off_policy_steps}")
        n = d.seats
        batch = (f"{counted(steps, 'steps')} x {counted(prompts, 'prompts')} x "
                 f"{counted(samples, 'rollouts')}{note} = {counted(per_step, 'rollouts')} per step"
                 if n == 1 else f"{counted(steps, 'steps')} x {counted(prompts, 'prompts')} x "
                 f"{counted(samples, 'samples')}{note} x {n} seats = {counted(per_step, 'traces')} "
                 "per step")
        return [
            f"method {m.type}, model {_or(d.model, r.model)}, taskset {r.taskset}, {layout}, "
            f"{weights}",
            f"{batch}, {asynchrony}",
            *([self.cost.line()] if self.cost is not None else []),
            *self.notes,
            *accept.unused(r, self.warnings, self.notes),
        ]

    def __str__(self) -> str:
        from whileai.report.text import render_text

        return render_text(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": REPORT_VERSION,
            "target": self.target,
            "pin": self.pin,
            "out": self.out,
            "main": self.main,
            "summary": self.header(),
            "overview": overview(self),
            # full weights have no rank: one in the spec would be a contradiction when re-read
            "spec": self.run.model_dump(mode="json", by_alias=True, exclude_none=True,
                                        exclude=None if self.run.lora else {"lora_rank"}),
            "reads": [x.to_dict() for x in self.reads],
            "ignores": [x.to_dict() for x in self.ignores],
            "fixed": [x.to_dict() for x in self.fixed],
            "warnings": [x.to_dict() for x in self.warnings],
            "run": list(self.commands),
            "files": dict(self.files),
            "cost": self.cost.to_dict() if self.cost is not None else None,
            "teacher": self.teacher.to_dict() if self.teacher is not None else None,
            "teachers": [t.to_dict() for t in self.teachers or ((self.teacher,) if self.teacher else ())],
            "stages": [s.to_dict() for s in self.stages],
        }


def _or(fact: Any, spec: Any) -> Any:
    return spec if fact is None else fact


def in_context(compiled: Sequence[Compiled], names: Sequence[str]) -> list[Compiled]:
    """Runs compiled in one invocation (named): where a GRPO arm on the same student, taskset
    and holdout is among them, `needs-grpo-arm` is met and says so in a note instead
    (whileai.rules.accept.answered)."""
    runs = list(zip(names, (c.run for c in compiled), strict=True))
    out = []
    for c in compiled:
        met = accept.answered(c.run, runs) if any(w.rule == accept.GRPO_ARM for w in c.warnings) else None
        out.append(c if met is None else replace(
            c, warnings=tuple(w for w in c.warnings if w.rule != accept.GRPO_ARM), notes=(*c.notes, met)))
    return out


def as_written(c: Compiled, folder: str | Path | None) -> Compiled:
    """`c` as written into `folder` (the output folder, or a recipe's arm folder): `out` names the
    main file written (and each stage's, for a two-stage run, in the stage's own `folder`)."""
    if folder is None:
        return c
    root = Path(folder)
    stages = tuple(replace(s, out=str(root / s.folder / s.main)) for s in c.stages)
    return replace(c, out=str(root / c.main), stages=stages)


__all__ = ["Compiled", "Fixed", "counted", "Ignore", "Read", "Teacher", "as_written", "in_context"]
