"""User overrides (`--set a.b=value`, `[overrides]` in a spec), checked against a catalogue.

The keys arrive canonical (whileai.catalogs.paths: `a.source[0].b`) and their values already checked
(whileai.spec.values: no secrets, 64-bit integers, finite floats); here they meet the target's
schema, and the report learns which spec field or whileai default each one replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whileai.catalogs import paths
from whileai.catalogs.targets import Catalog
from whileai.errors import SpecError, raw
from whileai.report.text import fmt
from whileai.targets.compiled import Fixed, Ignore, Read
from whileai.targets.fieldmap import _MISSING as MISSING
from whileai.targets.fieldmap import field_value


def check_override(
    catalog: Catalog, path: str, value: Any, *, hint: Callable[[str], str | None] | None = None
) -> None:
    """Raise SpecError unless the target's schema has `path` and accepts `value` there."""
    field = f"overrides.{path}"
    nodes = catalog.lookup(path)
    if not nodes:
        why = hint(path) if hint else None
        near = catalog.suggest(path)
        allowed = f"the key must exist in {catalog.name}"
        tip = f"did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
        if why:
            tip = f"{why}" + (f"; {tip}" if tip else "")
        raise SpecError(field, raw(f"unknown key {path!r}"), allowed, hint=tip)
    results = [catalog.check(value, n, path) for n in nodes]
    if all(results):
        raise SpecError(field, value, f"{catalog.name} rejects it: {results[0][0].message}")


def apply_overrides(doc: dict[str, Any], overrides: dict[str, Any], catalog: Catalog, *,
                    hint: Callable[[str], str | None] | None = None) -> None:
    """Check every override against the catalogue, then set it in the document."""
    for path, value in overrides.items():
        check_override(catalog, path, value, hint=hint)
        paths.set_path(doc, path, value)


def override_reads(reads: list[Read], ignores: list[Ignore], fixed: list[Fixed],
                   overrides: dict[str, Any], run: Any = None) -> None:
    """Report overrides as reads. A spec field whose key an override replaced becomes an
    ignore (with the spec's value, from `run`, where the key held one derived from it), and a
    whileai default it replaced leaves the list: each key is shown once, with the override that
    set it and what it replaced."""
    for path, value in overrides.items():
        segs = paths.parse(path)
        replaced = [r for r in reads if _under(r.path, segs)]
        for r in replaced:
            reads.remove(r)
            given = _spec_value(run, r.field, r.value)
            wrote = "" if given == r.value else f" (whileai wrote {fmt(r.value)} there)"
            ignores.append(Ignore(field=r.field, value=given, reason=f"overrides.{path} = "
                                  f"{fmt(value)} replaces it at {r.path}{wrote}"))
        defaults = [f for f in fixed if _under(f.path, segs)]
        for f in defaults:
            fixed.remove(f)
        said = [f"what {', '.join(dict.fromkeys(r.field for r in replaced))} set "
                f"({', '.join(dict.fromkeys(fmt(r.value) for r in replaced))})"] if replaced else []
        said += [f"whileai's {f.path} = {fmt(f.value)} ({f.reason})" for f in defaults]
        note = "replaces " + "; ".join(said) if said else "user override"
        reads.append(Read(field=f"overrides.{path}", path=path, value=value, note=note))


def _spec_value(run: Any, field: str, written: Any) -> Any:
    """The spec's own value of a report label (`prompt_tokens`, `top_k` for method.top_k), not
    the value derived from it (seq_len = prompt_tokens + max_tokens); `written` when unknown."""
    if run is None:
        return written
    for name in (field, f"method.{field}"):
        got = field_value(run, name)
        if got is not MISSING:
            return got
    return written


def _under(path: str, segs: tuple[paths.Seg, ...]) -> bool:
    """Whether a report row's key is `segs` or inside it (`<...>` rows are not file keys)."""
    return not path.startswith("<") and paths.under(paths.parse(path), segs)
