"""`whileai explain`: each key of the compiled file, its value and what produced it, as plain
lines (a pipe, `--plain`: one key per line, so `grep` finds it whole) or as JSON (`--json`).
The rich table is whileai.report.render's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whileai.errors import clean
from whileai.report.records import jsonable
from whileai.report.text import fmt

if TYPE_CHECKING:
    from whileai.targets.compiled import Compiled


def explain_rows(c: Compiled) -> list[tuple[str, Any, str]]:
    """(key, final value, what produced it): one row per key of the compiled file. A key two
    fields write (method.type and divergence both set orchestrator.algo.type) is one row
    naming both; an override's row names the spec field or whileai default it replaced."""
    rows: dict[str, tuple[Any, list[str]]] = {}
    produced = [
        (r.path, r.value, f"spec {r.field}" + (f": {r.note}" if r.note else ""))
        for r in c.reads
        if not r.field.startswith("overrides.")
    ]
    produced += [(x.path, x.value, f"whileai: {x.reason}") for x in c.fixed]
    produced += [
        (
            r.path,
            r.value,
            f"override {r.field.removeprefix('overrides.')}" + (f": {r.note}" if r.note else ""),
        )
        for r in c.reads
        if r.field.startswith("overrides.")
    ]
    for path, value, why in produced:
        _, whys = rows.get(path, (None, []))
        rows[path] = (value, [*whys, why])  # later writers win, as in the file
    return [(path, value, "; ".join(dict.fromkeys(whys))) for path, (value, whys) in rows.items()]


def key_line(key: str, value: Any, why: str) -> str:
    """One key as a line: `key = value  (what produced it)`."""
    return clean(f"{key} = {fmt(value)}  ({why})")


def unemitted_line(field: str, value: Any, reason: str) -> str:
    return clean(f"(not emitted) {field}={fmt(value)}: {reason}")


def explain_text(c: Compiled, width: int | None) -> str:
    """The plain explain: a title line, then one line per key (wrapped between words with a
    hanging indent where `width` is given, so the key and its value start the line whole)."""
    from whileai.report.wrap import para

    if c.stages:
        return "\n\n".join(explain_text(st, width) for st in c.stages)
    lines = para(clean(f"{c.target}: {c.label}"), width, "", "    ")
    for row in explain_rows(c):
        lines += para(key_line(*row), width, "", "      ")
    for ig in c.ignores:
        lines += para(unemitted_line(ig.field, ig.value, ig.reason), width, "", "      ")
    return "\n".join(lines)


def explain_dict(c: Compiled) -> dict[str, Any]:
    """The JSON explain: the file's keys (key, value, produced_by) and the fields not emitted."""
    return {
        "target": c.target,
        "file": c.label,
        "keys": [
            {"key": k, "value": jsonable(v), "produced_by": clean(why)} for k, v, why in explain_rows(c)
        ],
        "not_emitted": [
            {"field": x.field, "value": jsonable(x.value), "reason": clean(x.reason)} for x in c.ignores
        ],
        "stages": [explain_dict(st) for st in c.stages],
    }
