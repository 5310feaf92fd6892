"""Field maps as data: each target is a table of rows, and the report is derived from it.

- `To(field, path, value)`: the target reads a spec field at `path`.
- `Drop(field, reason)`: the target ignores the field, and says why.
- `Fix(path, value, reason)`: whileai sets a key no spec field produced.
- `Off(field, paths, fix)`: kept beside a map, not in it: while `when` holds, the spec field's
  value means the file holds none of `paths` (lora = false: no LoRA keys), so an override that
  sets one contradicts the spec (whileai.targets.overrides.check_story refuses it).

Each row may carry `when` (a predicate on the run); a row whose field does not exist on the
run (e.g. `method.top_k` on a GRPO run) or whose field is unset (None) is skipped.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Union

from pydantic import BaseModel

from whileai.catalogs.paths import get_path, set_path
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Fixed, Ignore, Read

Pred = Callable[[RunSpec], bool]
Val = Callable[[RunSpec], Any]


def always(_: RunSpec) -> bool:
    return True


class To(NamedTuple):
    field: str
    path: str
    value: Val | None = None
    when: Pred = always
    note: str | Callable[[RunSpec], str] = ""


class Drop(NamedTuple):
    field: str
    reason: str | Callable[[RunSpec], str]
    when: Pred = always


class Fix(NamedTuple):
    path: str
    value: Any
    reason: str | Callable[[RunSpec], str]
    when: Pred = always


class Off(NamedTuple):
    field: str
    paths: tuple[str, ...]
    fix: str  # what to write in the spec instead, e.g. "lora = true (and lora_rank)"
    when: Pred = always


Row = Union[To, Drop, Fix]
__all__ = ["Applied", "Drop", "Fix", "Off", "Row", "To", "apply", "const", "field_value",
           "get_path", "label", "set_path", "spec_field", "with_field"]
_MISSING = object()


def field_value(run: RunSpec, field: str) -> Any:
    """Value of a dotted spec field (`method.teacher.url`; a list item by its index, written
    `sources[1].method.type` or `sources.1.method.type`), or _MISSING."""
    obj: Any = run
    for part in field.split("."):
        name, _, index = part.partition("[")
        segs = [name, index.rstrip("]")] if index else [name]
        for seg in segs:
            if isinstance(obj, BaseModel) and seg in type(obj).model_fields:
                obj = getattr(obj, seg)
            elif isinstance(obj, dict) and seg in obj:
                obj = obj[seg]
            elif isinstance(obj, (list, tuple)) and seg.isdigit() and int(seg) < len(obj):
                obj = obj[int(seg)]
            else:
                return _MISSING
    return obj


def spec_field(run: RunSpec, name: str) -> str | None:
    """The spec field a report label names (`top_k` is method.top_k), or None."""
    return next((f for f in (name, f"method.{name}") if field_value(run, f) is not _MISSING), None)


def with_field(run: RunSpec, field: str, value: Any) -> RunSpec:
    """A copy of the run with one dotted spec field (a `field_value` name) set to `value`: what
    the field map would write were the spec to say so. The field's own rules check the value
    (pydantic's ValidationError, a ValueError, where it breaks one); the run's are not run."""
    parts = [s for part in field.split(".") for s in part.replace("]", "").split("[")]

    def put(obj: Any, rest: list[str]) -> Any:
        if not rest:
            return value
        head, tail = rest[0], rest[1:]
        if isinstance(obj, BaseModel) and not tail:
            return obj.__pydantic_validator__.validate_assignment(obj.model_copy(), head, value)
        if isinstance(obj, BaseModel):
            return obj.model_copy(update={head: put(getattr(obj, head), tail)})
        if isinstance(obj, dict):
            return {**obj, head: put(obj.get(head), tail)}
        items = list(obj)
        items[int(head)] = put(items[int(head)], tail)
        return type(obj)(items)

    out: RunSpec = put(run, parts)
    return out


def const(value: Any) -> Val:
    """A row's value (or `when`) that is the same whatever the run: one worked out already."""
    return lambda _: value


def label(field: str) -> str:
    """How a field is named in reports: method fields without the `method.` prefix."""
    return field.removeprefix("method.")


def _text(x: str | Callable[[RunSpec], str], run: RunSpec) -> str:
    return x(run) if callable(x) else x


class Applied(NamedTuple):
    doc: dict[str, Any]
    reads: list[Read]
    ignores: list[Ignore]
    fixed: list[Fixed]


def apply(rows: Sequence[Row], run: RunSpec, extra: Sequence[Row] = ()) -> Applied:
    """Apply the rows in order. `extra` rows come last and win: a key (or table) an extra Fix
    sets replaces what the map wrote there, in the document and in the report."""
    out = _apply([*rows, *extra], run)
    later = [r.path for r in extra if isinstance(r, Fix) and r.when(run)]
    if not later:
        return out
    def under(path: str) -> bool:
        return any(path == p or path.startswith(p + ".") for p in later)
    fixed = {f.path: f for f in out.fixed if not under(f.path) or f.path in later}
    return Applied(out.doc, [r for r in out.reads if not under(r.path)], out.ignores,
                   list(fixed.values()))


def _apply(rows: list[Row], run: RunSpec) -> Applied:
    out = Applied({}, [], [], [])
    for row in rows:
        if not row.when(run):
            continue
        if isinstance(row, Fix):
            value = row.value(run) if callable(row.value) else copy.deepcopy(row.value)
            set_path(out.doc, row.path, value)
            out.fixed.append(Fixed(path=row.path, value=value, reason=_text(row.reason, run)))
            continue
        current = field_value(run, row.field)
        if current is _MISSING:
            continue
        if isinstance(row, Drop):
            if current is not None:
                out.ignores.append(Ignore(field=label(row.field), value=current,
                                          reason=_text(row.reason, run)))
            continue
        value = row.value(run) if row.value else current
        if value is None:
            continue
        if not row.path.startswith("<"):  # `<command>` and the like are no key of the file
            set_path(out.doc, row.path, copy.deepcopy(value))  # later keys fill the doc's copy
        out.reads.append(Read(field=label(row.field), path=row.path, value=value, note=_text(row.note, run)))
    return out
