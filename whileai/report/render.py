"""Rich renderings for the CLI (imported only when something is printed)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from whileai.errors import clean
from whileai.report.text import fmt, grouped_reads
from whileai.report.wrap import command, para, width
from whileai.spec.fields import spec_fields

if TYPE_CHECKING:
    from whileai.targets.compiled import Compiled


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits 1 on a closed pipe; the CLI's own handler ends quietly with 0 instead."""
        raise BrokenPipeError


def console() -> Console:
    """The terminal's width, else COLUMNS, else 100 (a pipe or a log: whileai.report.wrap.width)."""
    return _Console(width=width(), highlight=False, soft_wrap=False)


def print_report(c: Compiled) -> None:
    con = console()
    if c.stages:  # a two-stage run: each stage's report, then every command in order
        for i, st in enumerate(c.stages, 1):
            con.print(Text(f"stage {i} of {len(c.stages)}", style="bold magenta"))
            if i > 1 and c.facts.handoff:
                con.print(Text(f"  student: {c.facts.handoff}"))
            print_report(replace(st, commands=()))
        con.print(Text("run, in order" + ("" if c.out else " (once written with -o)") + ":", style="cyan"))
        for cmd in c.commands:
            con.print(Text(f"  {cmd}"))
        con.print()
        return
    con.print(Text(f"{c.target} config: {c.label}", style="bold"), Text(f"  [{c.pin}]", "dim"))
    for line in c.header():
        con.print(_hanging(line, con.width))
    reads = Table(box=None, pad_edge=False, title="reads", title_justify="left",
                  title_style="bold green")
    # field, target path and value stay visible at 80 columns: each folds rather than being
    # cut; a read's note wraps under its target path, which is as wide as its longest path
    # where the width allows (a path folds only when it must)
    rows = grouped_reads(c.reads)
    field_w = min(24, max((len(r.field) for r in rows), default=5))
    path_w = max((len(p) for r in rows for p in r.path.split(", ")), default=11)
    value_w = max((len(fmt(r.value)) for r in rows), default=5)
    room = con.width - field_w - 4  # two gaps of two columns between three columns
    path_w = min(path_w, max(16, room - min(value_w, 24)))
    reads.add_column("field", overflow="fold", width=field_w)
    reads.add_column("target path", overflow="fold", width=path_w)
    reads.add_column("value", overflow="fold", width=max(10, room - path_w))
    for r in rows:
        where = _text("\n".join(line for p in r.path.split(", ") for line in _fold_path(p, path_w)))
        if r.note:
            where.append("\n" + _text(r.note).plain, style="dim")
        reads.add_row(_text(r.field), where, _text(fmt(r.value)))
    con.print(reads)
    if c.ignores:
        ign = Table(box=None, pad_edge=False, title="ignores", title_justify="left",
                    title_style="bold yellow")
        ign.add_column("field", overflow="fold", max_width=24)
        ign.add_column("value", overflow="fold", ratio=2, min_width=10)
        ign.add_column("why it is ignored", overflow="fold", ratio=5, min_width=20)
        for x in c.ignores:
            ign.add_row(*_cells(x.field, fmt(x.value), x.reason))
        con.print(ign)
    for w in c.warnings:
        head = f"warning [{w.rule}]: "
        con.print(_hanging(f"{head}{w.message} ({w.citation})", con.width,
                           {(2, 2 + len(head)): "yellow"}, dim_tail=len(w.citation) + 2))
    if c.commands:
        con.print(Text("  run:" if c.out else "  run (once written with -o):", style="cyan"))
        for cmd in c.commands:
            con.print(Text("\n".join(command(clean(cmd), con.width))))
    con.print()


def _fold_path(path: str, width: int) -> list[str]:
    """A dotted key path in lines of at most `width`, broken after a dot where it can be (the
    rest indented two), so a narrow terminal shows `orchestrator.train.` / `  source[0].name`."""
    lines, rest, lead = [], path, ""
    while len(lead) + len(rest) > width:
        room = max(width - len(lead), 8)
        cut = rest.rfind(".", 0, room) + 1 or room  # after the last dot that fits, else fold
        lines.append(lead + rest[:cut])
        rest, lead = rest[cut:], "  "
    return [*lines, lead + rest]


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


def explain_rows(c: Compiled) -> list[tuple[str, Any, str]]:
    """(key, final value, what produced it): one row per key of the compiled file. A key two
    fields write (method.type and divergence both set orchestrator.algo.type) is one row
    naming both; an override's row names the spec field or whileai default it replaced."""
    rows: dict[str, tuple[Any, list[str]]] = {}
    produced = [(r.path, r.value, f"spec {r.field}" + (f": {r.note}" if r.note else ""))
                for r in c.reads if not r.field.startswith("overrides.")]
    produced += [(x.path, x.value, f"whileai: {x.reason}") for x in c.fixed]
    produced += [(r.path, r.value, f"override {r.field.removeprefix('overrides.')}"
                  + (f": {r.note}" if r.note else "")) for r in c.reads if r.field.startswith("overrides.")]
    for path, value, why in produced:
        _, whys = rows.get(path, (None, []))
        rows[path] = (value, [*whys, why])  # later writers win, as in the file
    return [(path, value, "; ".join(dict.fromkeys(whys))) for path, (value, whys) in rows.items()]


def print_explain(c: Compiled) -> None:
    if c.stages:
        for st in c.stages:
            print_explain(st)
        return
    con = console()
    con.print(Text(f"{c.target}: {c.label}", style="bold"))
    t = Table(box=None, pad_edge=False)
    t.add_column("key", overflow="fold", ratio=3, min_width=16)
    t.add_column("value", overflow="fold", ratio=2, min_width=10)
    t.add_column("produced by", overflow="fold", ratio=4, min_width=20)
    for path, value, why in explain_rows(c):
        t.add_row(*_cells(path, fmt(value), why))
    con.print(t)
    for ig in c.ignores:
        con.print(Text(f"  (not emitted) {ig.field}={fmt(ig.value)}: {ig.reason}"))


def print_methods() -> None:
    from whileai.spec.run import METHODS, RunSpec

    con = console()
    models: list[tuple[str, Any]] = [*METHODS.items(), ("run spec", RunSpec)]
    for name, model in models:
        t = Table(box=None, pad_edge=False, title=f"{name}: {(model.__doc__ or '').strip()}",
                  title_justify="left", title_style="bold")
        t.add_column("field", overflow="fold", max_width=24)
        t.add_column("default", overflow="fold", ratio=2, min_width=8)
        t.add_column("source of the default", overflow="fold", ratio=3, min_width=12)
        t.add_column("meaning", overflow="fold", ratio=4, min_width=16)
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
            default = "required" if info.is_required() else fmt(info.get_default(
                call_default_factory=True))
            t.add_row(field, default, str(extra.get("source", "")), info.description or "")
        con.print(t)
        con.print()


def _info(model: Any, dotted: str) -> Any:
    parts = dotted.split(".")
    for seg in parts[:-1]:
        ann = model.model_fields[seg].annotation
        args = getattr(ann, "__args__", None) or (ann,)
        model = next(a for a in args if hasattr(a, "model_fields"))
    return model.model_fields.get(parts[-1])


def print_rules() -> None:
    from whileai.rules.research import RULES

    t = Table(box=None, pad_edge=False)
    t.add_column("id", overflow="fold", max_width=28)
    t.add_column("fires when", overflow="fold", ratio=3, min_width=16)
    t.add_column("source", overflow="fold", ratio=2, min_width=12)
    for r in RULES:
        t.add_row(r.id, r.condition, r.citation)
    console().print(t)
