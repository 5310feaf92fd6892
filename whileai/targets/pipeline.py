"""The compile pipeline every target runs, once: its steps are the target's, the order is here.

    refuse -> map (the field map, then a stage's extra rows) -> story (an override that
    contradicts the spec) -> derive (values set before the overrides) -> overrides (checked by
    the target's catalogue adapter: whileai.targets.overrides) -> settle (values derived after
    them) -> account (the report's lists) -> check (the target's rules on the final document)
    -> emit (files, commands, teachers) -> facts -> warnings (the shared rules, then the
    target's own) -> cost -> `Compiled`, named after the target object -> finish

A target subclasses `Steps` once (whileai.targets.<t>.compile) and calls
`compile_run(target, run, steps)`; a step it does not need keeps the default. The target object
(its `name` and `pin`) is the caller's, or `registry.of(module)` for a target's own modules.
Nothing here knows a target by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from whileai.rules import research
from whileai.targets import overrides as ov
from whileai.targets import registry
from whileai.targets.compiled import Compiled
from whileai.targets.fieldmap import Applied, Off, Row, apply
from whileai.targets.story import Floor, Story, check_story

if TYPE_CHECKING:
    from whileai.cost.estimate import Cost
    from whileai.report.records import Fixed, Ignore, Read, Teacher
    from whileai.rules.base import Finding, Rule
    from whileai.rules.facts import Facts
    from whileai.spec.run import RunSpec


class Named(Protocol):
    """What the pipeline reads of a target (whileai.targets.base.Target has both)."""

    @property
    def name(self) -> str: ...

    @property
    def pin(self) -> str: ...


@dataclass(frozen=True)
class Emitted:
    """What a target writes and says besides the shared lists (the `emit` step)."""

    files: dict[str, str]
    main: str
    commands: tuple[str, ...]
    reads: tuple[Read, ...] | None = None  # the reads as the report shows them (None: the account's)
    notes: tuple[str, ...] = ()
    teacher: Teacher | None = None
    teachers: tuple[Teacher, ...] = ()
    spec: RunSpec | None = None  # the spec the report shows where a derived run was compiled (TRL --cpu)


class Steps:
    """One target's steps for one compile (a fresh object per compile: a step may keep what an
    earlier one worked out). Each default does nothing."""

    extra: Sequence[Row] = ()  # rows applied after the field map, which win (a stage's)
    before: Sequence[Ignore] = ()  # ignores decided before the field map (TRL's --cpu)
    off: Sequence[Off] = ()  # what the story check leaves to the field map's own refusals
    floors: Sequence[Floor] = ()  # derived lengths an override may not shrink
    rules: Sequence[Rule] = ()  # the target's own warning rules (Target.rules())
    out: str | None = None  # where the files will be written (the commands name it)

    def refuse(self, run: RunSpec) -> None:
        """What the target cannot run, one SpecError each (before anything is mapped)."""

    def rows(self, run: RunSpec) -> Sequence[Row]:
        """The field map for this run."""
        raise NotImplementedError

    def story(self) -> Story:
        """What a run's files and lines say, overrides aside (whileai.targets.story)."""
        raise NotImplementedError

    def document(self, applied: Applied) -> dict[str, Any]:
        """The file as data from the field map: its keys, without the `<...>` report rows."""
        return {k: v for k, v in applied.doc.items() if not k.startswith("<")}

    def derive(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        """Values whileai sets before the overrides (an override may replace them)."""
        return []

    def keys(self) -> ov.OverrideKeys:
        """The catalogue adapter the override engine checks each override with."""
        raise NotImplementedError

    def overrides(self, doc: dict[str, Any], run: RunSpec) -> set[str]:
        """The spec's overrides set in `doc` by the shared engine; the keys written as additions."""
        return ov.apply_overrides(doc, run.overrides, self.keys())

    def settle(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        """Values derived after the overrides (from what they set)."""
        return []

    def note(self, path: str) -> str | None:
        """The target's remark on an override key (a likely typo), or None."""
        return None

    def unwritten(self, path: str) -> str | None:
        """Why the file holds no `path` although the field map read it, or None."""
        return None

    def check(self, doc: dict[str, Any], run: RunSpec, added: set[str]) -> None:
        """The target's own rules on the final document: SpecError for the first it breaks."""

    def emit(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Emitted:
        """The files, the commands and what the report says besides its lists."""
        raise NotImplementedError

    def facts(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Facts:
        """What the compiled file will do (whileai.rules.facts), overrides included."""
        raise NotImplementedError

    def warnings(self, run: RunSpec, facts: Facts) -> tuple[Finding, ...]:
        return warnings(run, facts, self.rules)

    def cost(self, doc: dict[str, Any], run: RunSpec, facts: Facts) -> Cost | None:
        return None

    def finish(self, compiled: Compiled) -> Compiled:
        """The compiled run completed with what needs it whole (a README that renders it)."""
        return compiled


def compile_run(target: Named, run: RunSpec, steps: Steps) -> Compiled:
    """`run` through the target's steps, in the pipeline's order (see the module)."""
    steps.refuse(run)
    applied = apply(steps.rows(run), run, steps.extra)
    if run.overrides:
        check_story(run, applied, steps.story(), off=steps.off, floors=steps.floors)
    doc = steps.document(applied)
    derived = steps.derive(doc, run)
    added = steps.overrides(doc, run)
    fixed = [*derived, *steps.settle(doc, run)]
    said = ov.account(applied._replace(ignores=[*steps.before, *applied.ignores],
                                       fixed=applied.fixed + fixed),
                      run.overrides, run, note=steps.note, unwritten=steps.unwritten)
    steps.check(doc, run, added)
    out = steps.emit(doc, run, said)
    facts = steps.facts(doc, run, said)
    found = steps.warnings(run, facts)
    return steps.finish(Compiled(
        target=target.name, pin=target.pin, run=out.spec or run, files=out.files, main=out.main,
        reads=said.reads if out.reads is None else out.reads, ignores=said.ignores,
        fixed=said.fixed, warnings=found, commands=out.commands, out=steps.out, facts=facts,
        cost=steps.cost(doc, run, facts), notes=out.notes, teacher=out.teacher,
        teachers=out.teachers, doc=doc))


def judged(facts: Facts, said: ov.Account) -> Facts:
    """The facts as the rules judge them: each spec field an override replaced holds the file's
    value (whileai.rules.base.Rule), and is no longer among the ignored."""
    return replace(facts, replaced=said.replaced)


def ignored(said: ov.Account) -> list[str]:
    """The spec fields the file ignores, less those an override replaced (the rules judge the
    file's value there)."""
    held = dict(said.replaced)
    return [i.field for i in said.ignores if i.field not in held]


def warnings(run: RunSpec, facts: Facts, own: Sequence[Rule] = ()) -> tuple[Finding, ...]:
    """The shared rules' findings (whileai.rules.research), then the target's own (`own`); a spec
    that accepts a warning may name any target's rule: an id neither set has is looked up among
    every target's (whileai.targets.registry.rules), which imports the other targets' light
    modules only then."""
    local = {r.id for r in (*research.RULES, *own)}
    known = None if set(run.accept) <= local else [r.id for r in registry.rules()]
    return research.findings(run, facts, own, known)


__all__ = ["Emitted", "Named", "Steps", "compile_run", "ignored", "judged", "warnings"]
