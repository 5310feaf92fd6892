"""The plain report of a compiled run: the summary lines, then one read, ignore, warning or
command per line (what a pipe, a log and `print(compiled)` get).

Renders any `whileai.targets.compiled.Compiled`; it reads the record fields only, through the
`Rendered` protocol below, so this room stays below the targets that build them (and imports
nothing of theirs, not even for type checking).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from whileai.errors import mask

if TYPE_CHECKING:
    from whileai.report.records import Ignore, Read
    from whileai.rules.base import Finding
    from whileai.rules.facts import Facts


class Rendered(Protocol):
    """What the plain report reads of a compiled run (whileai.targets.compiled.Compiled is one):
    a dataclass, so a stage is rendered through `dataclasses.replace`."""

    @property
    def target(self) -> str: ...

    @property
    def reads(self) -> tuple[Read, ...]: ...

    @property
    def ignores(self) -> tuple[Ignore, ...]: ...

    @property
    def warnings(self) -> tuple[Finding, ...]: ...

    @property
    def commands(self) -> tuple[str, ...]: ...

    @property
    def out(self) -> str | None: ...

    @property
    def facts(self) -> Facts: ...

    @property
    def stages(self) -> tuple[Any, ...]: ...

    @property
    def label(self) -> str: ...

    def header(self) -> list[str]: ...


def fmt(v: Any) -> str:
    return mask(repr(v))


def grouped_reads(reads: tuple[Read, ...]) -> list[Read]:
    """One entry per (field, value): every path it lands on, joined with ', '."""
    rows: dict[tuple[str, str], Read] = {}
    for r in reads:
        key = (r.field, repr(r.value))
        if key in rows:
            g = rows[key]
            note = "; ".join(dict.fromkeys(x for x in (*g.note.split("; "), r.note) if x))
            rows[key] = replace(g, path=f"{g.path}, {r.path}", note=note)
        else:
            rows[key] = r
    return list(rows.values())


def read_text(x: Read) -> str:
    s = f"{x.field} -> {x.path} = {fmt(x.value)}"
    return f"{s} ({x.note})" if x.note else s


def ignore_text(x: Ignore) -> str:
    return f"{x.field}={fmt(x.value)}: {x.reason}"


def warning_text(w: Finding) -> str:
    """`warning [id]: message (citation)`; one the spec accepts says so, with its reason."""
    if w.accepted is None:
        return f"warning [{w.rule}]: {w.message} ({w.citation})"
    return f"warning [{w.rule}] accepted: {w.message} ({w.citation}); accepted because: {w.accepted}"


def render_text(c: Rendered, width: int | None = None) -> str:
    """The plain report: the summary lines, then one read, ignore, warning or command per
    line. `width`: wrap to it with a hanging indent (whileai.report.wrap); None: one line each."""
    from whileai.report.overview import overview
    from whileai.report.wrap import command, para

    if c.stages:
        return _render_stages(c, width)
    lines = para(f"{c.target} config: {c.label}", width, "", "    ")
    for o in overview(c):  # the first screen (whileai.report.overview), then the detail
        lines += para(o, width, "  ", "    ")
    lines.append("  detail:")
    for h in c.header():
        lines += para(h, width, "  ", "    ")
    lines.append("  reads:")
    for x in grouped_reads(c.reads):
        lines += para(read_text(x), width, "    ", "        ")
    if c.ignores:
        lines.append("  ignores:")
        for ig in c.ignores:
            lines += para(ignore_text(ig), width, "    ", "        ")
    for w in c.warnings:
        lines += para(warning_text(w), width, "  ", "    ")
    if c.commands:
        lines.append("  run:" if c.out else "  run (once written with -o):")
        for cmd in c.commands:
            lines += command(cmd, width)
    return "\n".join(lines)


def _render_stages(c: Rendered, width: int | None) -> str:
    """A two-stage run: each stage's own report, then the commands of both in order."""
    from whileai.report.overview import overview
    from whileai.report.wrap import command, para

    n = len(c.stages)
    out = [f"{c.target} {n}-stage run: {c.label}"]
    for o in overview(c):  # the whole run's first screen, then each stage's report
        out += para(o, width, "  ", "    ")
    for i, st in enumerate(c.stages, 1):
        head, rest = render_text(replace(st, commands=()), width).split("\n", 1)
        out += para(f"stage {i} of {n}: {head}", width, "", "    ")
        if i > 1 and c.facts.handoff:
            out += para(f"student: {c.facts.handoff}", width, "  ", "    ")
        out.append(rest)
    run = "run, in order" if c.out else "run, in order (once written with -o)"
    out.append(f"  {run}:")
    for cmd in c.commands:
        out += command(cmd, width)
    return "\n".join(out)


