"""Rich renderings for the CLI (imported only when something is printed)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from whileai.errors import clean
from whileai.report.compiled import Compiled, fmt, grouped_reads
from whileai.report.fieldmap import spec_fields


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits 1 on a closed pipe; the CLI's own handler ends quietly with 0 instead."""
        raise BrokenPipeError


def console() -> Console:
    width = int(os.environ.get("COLUMNS", "0") or 0) or None
    return _Console(width=width, highlight=False, soft_wrap=False)


def print_report(c: Compiled) -> None:
    con = console()
    if c.stages:  # a two-stage run: each stage's report, then every command in order
        for i, st in enumerate(c.stages, 1):
            con.print(Text(f"stage {i} of {len(c.stages)}", style="bold magenta"))
            if i > 1 and c.data.get("handoff"):
                con.print(Text(f"  student: {c.data['handoff']}"))
            print_report(replace(st, commands=()))
        con.print(Text("run, in order" + ("" if c.out else " (once written with -o)") + ":", style="cyan"))
        for cmd in c.commands:
            con.print(Text(f"  {cmd}"))
        con.print()
        return
    con.print(Text(f"{c.backend} config: {c.label}", style="bold"), Text(f"  [{c.target}]", "dim"))
    for line in c.header():
        con.print(Text("  " + line))
    reads = Table(box=None, pad_edge=False, title="reads", title_justify="left",
                  title_style="bold green")
    reads.add_column("field", no_wrap=True)
    reads.add_column("target path", no_wrap=True)
    reads.add_column("value", overflow="fold", max_width=40)
    reads.add_column("note", ratio=1)
    for r in grouped_reads(c.reads):
        reads.add_row(*_cells(r.field, r.path.replace(", ", "\n"), fmt(r.value), r.note))
    con.print(reads)
    if c.ignores:
        ign = Table("field", "value", "why it is ignored", box=None, pad_edge=False,
                    title="ignores", title_justify="left", title_style="bold yellow")
        for x in c.ignores:
            ign.add_row(*_cells(x.field, fmt(x.value), x.reason))
        con.print(ign)
    for w in c.warnings:
        con.print(Text(f"  warning [{w.rule}]: ", style="yellow"), Text(w.message),
                  Text(f" ({w.citation})", style="dim"), sep="")
    for cmd in c.commands:
        con.print(Text(f"  {'run' if c.out else 'run (once written with -o)'}: ", style="cyan"),
                  Text(cmd), sep="")
    con.print()


def _cells(*texts: str) -> list[Text]:
    """User text as plain Text: '[redacted]' or 'source[0]' is never read as rich markup."""
    return [Text(clean(t)) for t in texts]


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
    con.print(Text(f"{c.backend}: {c.label}", style="bold"))
    t = Table(box=None, pad_edge=False)
    t.add_column("key", no_wrap=True)
    t.add_column("value", overflow="fold", max_width=40)
    t.add_column("produced by", ratio=1)
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
        t = Table("field", "default", "source of the default", "meaning", box=None,
                  pad_edge=False, title=f"{name}: {(model.__doc__ or '').strip()}",
                  title_justify="left", title_style="bold")
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

    t = Table("id", "fires when", "source", box=None, pad_edge=False)
    for r in RULES:
        t.add_row(r.id, r.condition, r.citation)
    console().print(t)
