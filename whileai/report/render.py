"""Rich renderings for the CLI (imported only when something is printed)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from whileai.errors import clean
from whileai.report.explain import explain_rows, explain_text, unemitted_line
from whileai.report.overview import overview
from whileai.report.tables import whole_table
from whileai.report.text import fmt, grouped_reads, ignore_text, read_text, warning_text
from whileai.report.wrap import command, para, width
from whileai.spec.fields import spec_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from whileai.report.records import Read
    from whileai.rules.base import Rule
    from whileai.targets.compiled import Compiled


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits 1 on a closed pipe; the CLI's own handler ends quietly with 0 instead."""
        raise BrokenPipeError


def console() -> Console:
    """The terminal's width, else COLUMNS, else 100 (a pipe or a log: whileai.report.wrap.width)."""
    return _Console(width=width(), highlight=False, soft_wrap=False)


def print_report(c: Compiled, nested: bool = False) -> None:
    """The rich report: the first screen (whileai.report.overview), then the detail; `nested`: a
    stage of a two-stage run, whose first screen the whole run's gave."""
    con = console()
    if c.stages:  # a two-stage run: the whole run's first screen, each stage's report, the commands
        if not nested:
            _overview(con, c)
        for i, st in enumerate(c.stages, 1):
            con.print(Text(f"stage {i} of {len(c.stages)}", style="bold magenta"))
            if i > 1 and c.facts.handoff:
                con.print(Text(f"  student: {c.facts.handoff}"))
            print_report(replace(st, commands=()), nested=True)
        con.print(Text("run, in order" + ("" if c.out else " (once written with -o)") + ":", style="cyan"))
        for cmd in c.commands:
            con.print(Text("\n".join(command(clean(cmd), con.width, "  "))), soft_wrap=True)
        con.print()
        return
    con.print(Text(f"{c.target} config: {c.label}", style="bold"), Text(f"  [{c.pin}]", "dim"))
    if not nested:
        _overview(con, c)
    con.print(Text("  detail:", style="dim"))
    for line in c.header():
        con.print(_hanging(line, con.width), soft_wrap=True)
    rows = grouped_reads(c.reads)
    cells = [[_text(r.field), _where(r), _text(fmt(r.value))] for r in rows]
    reads = whole_table(("field", "target path", "value"), cells, con.width, (1, 3, 2), title="reads",
                        title_justify="left", title_style="bold green")
    _table_or_lines(con, reads, "reads", "bold green", [read_text(r) for r in rows])
    if c.ignores:
        cells = [_cells(x.field, fmt(x.value), x.reason) for x in c.ignores]
        ign = whole_table(("field", "value", "why it is ignored"), cells, con.width, (1, 2, 5),
                          title="ignores", title_justify="left", title_style="bold yellow")
        _table_or_lines(con, ign, "ignores", "bold yellow", [ignore_text(x) for x in c.ignores])
    for w in c.warnings:
        head = f"warning [{w.rule}]" + (": " if w.accepted is None else " accepted: ")
        style, tail = ("yellow", len(w.citation) + 2) if w.accepted is None else ("green", 0)
        con.print(_hanging(warning_text(w), con.width, {(2, 2 + len(head)): style}, dim_tail=tail),
                  soft_wrap=True)
    if c.commands:
        con.print(Text("  run:" if c.out else "  run (once written with -o):", style="cyan"))
        for cmd in c.commands:
            con.print(Text("\n".join(command(clean(cmd), con.width))), soft_wrap=True)
    con.print()


def _overview(con: Console, c: Compiled) -> None:
    """The first screen's lines; an error-level warning's head in red."""
    for line in overview(c):
        head = line.split(":", 1)[0] + ":" if line.startswith(("error [", "shape:", "time:")) else ""
        style = "bold red" if line.startswith("error [") else "bold"
        con.print(_hanging(line, con.width, {(2, 2 + len(head)): style} if head else None), soft_wrap=True)


def _where(r: Read) -> Text:
    """A read's target paths, one a line, and its note (dim) below them."""
    where = _text("\n".join(r.path.split(", ")))
    if r.note:
        where.append("\n" + _text(r.note).plain, style="dim")
    return where


def _table_or_lines(con: Console, table: Any, title: str, style: str, lines: list[str]) -> None:
    """The table where its words fit whole; else its title and one wrapped line per row."""
    if table is not None:
        con.print(table)
        return
    con.print(Text(title, style=style))
    for line in lines:  # pre-wrapped between words; a word wider than the terminal runs past it
        con.print(_hanging(line, con.width), soft_wrap=True)


def _hanging(line: str, width: int, styles: dict[tuple[int, int], str] | None = None,
             dim_tail: int = 0) -> Text:
    """A summary or warning line wrapped with a hanging indent (rich wraps without one)."""
    text = Text("\n".join(para(clean(line), width, "  ", "    ")))
    for (a, b), style in (styles or {}).items():
        text.stylize(style, a, b)
    if dim_tail:
        text.stylize("dim", len(text.plain) - dim_tail)
    return text


def _cells(*texts: str) -> list[Text]:
    """User text as plain Text: '[redacted]' or 'source[0]' is never read as rich markup."""
    return [_text(t) for t in texts]


def _text(t: str) -> Text:
    """Each line cleaned on its own, so a line break stays a break (not a literal \\n)."""
    return Text("\n".join(clean(line) for line in t.split("\n")))


NO_TABLE = "(one key a line: the table does not fit {} columns)"


def print_explain(c: Compiled) -> None:
    """The rich explain: a table where every key, value and word fits whole, else the plain lines."""
    if c.stages:
        for st in c.stages:
            print_explain(st)
        return
    con = console()
    con.print(Text(f"{c.target}: {c.label}", style="bold"))
    rows = explain_rows(c)
    t = whole_table(("key", "value", "produced by"), [_cells(k, fmt(v), why) for k, v, why in rows],
                    con.width, (2, 1, 4))
    if t is None:  # the plain lines: one key a line, each key and value whole; said in one line
        con.print(Text("\n".join(para(NO_TABLE.format(con.width), con.width, "", "  ")), style="dim"),
                  soft_wrap=True)
        con.print(Text(explain_text(c, con.width).split("\n", 1)[1]), soft_wrap=True)
        return
    con.print(t)
    for ig in c.ignores:
        con.print(Text("\n".join(para(unemitted_line(ig.field, ig.value, ig.reason), con.width, "",
                                      "      "))), soft_wrap=True)


def print_methods() -> None:
    from whileai.spec.run import METHODS, RunSpec

    con = console()
    models: list[tuple[str, Any]] = [*METHODS.items(), ("run spec", RunSpec)]
    for name, model in models:
        title = f"{name}: {(model.__doc__ or '').strip()}"
        rows: list[tuple[str, str, str, str]] = []
        seen: set[str] = set()
        for field in spec_fields(model):
            nested = next((m for m in ("then.method", "sources.method")
                           if field.startswith(m + ".")), None)
            if model is RunSpec and nested:  # a stage's or a source's method: one row
                field = nested
                if field in seen:
                    continue
            seen.add(field)
            info = _info(model, field)
            if info is None or field == "schema_" or (model is RunSpec and field.startswith("method.")):
                continue
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            value = None if info.is_required() else info.get_default(call_default_factory=True)
            default = "required" if info.is_required() else "unset" if value is None else fmt(value)
            rows.append((field, default, str(extra.get("source", "")), info.description or ""))
        t = whole_table(("field", "default", "source of the default", "meaning"),
                        [_cells(*r) for r in rows], con.width, (1, 2, 3, 4), title=title,
                        title_justify="left", title_style="bold")
        lines = [f"{f} unset: {src or 'no value'}; {m}" if d == "unset" else
                 f"{f} = {d}{f' ({src})' if src else ''}: {m}" for f, d, src, m in rows]
        _table_or_lines(con, t, title, "bold", lines)
        con.print()


def _info(model: Any, dotted: str) -> Any:
    parts = dotted.split(".")
    for seg in parts[:-1]:
        ann = model.model_fields[seg].annotation
        args = getattr(ann, "__args__", None) or (ann,)
        model = next(a for a in args if hasattr(a, "model_fields"))
    return model.model_fields.get(parts[-1])


def print_rules(rules: Sequence[Rule]) -> None:
    """The rules as a table (every target's: whileai.targets.registry.rules)."""
    rows = [(r.id, r.condition, r.citation) for r in rules]
    con = console()
    t = whole_table(("id", "fires when", "source"), [_cells(*r) for r in rows], con.width, (1, 3, 2))
    _table_or_lines(con, t, "rules", "bold", [f"{i}: fires when {cond} ({src})" for i, cond, src in rows])
