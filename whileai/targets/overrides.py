"""User overrides (`--set a.b=value`, `[overrides]` in a spec), checked against a catalogue.

The keys arrive canonical (whileai.catalogs.paths: `a.source[0].b`) and their values already checked
(whileai.spec.values: no secrets, 64-bit integers, finite floats); here they meet the target's
schema, and the report learns which spec field or whileai default each one replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from whileai.catalogs import paths
from whileai.catalogs.targets import Catalog
from whileai.errors import SpecError, raw
from whileai.report.text import fmt
from whileai.targets.compiled import Fixed, Ignore, Read
from whileai.targets.fieldmap import _MISSING as MISSING
from whileai.targets.fieldmap import Applied, field_value


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
        if (own := _spec_field(path)) is not None:
            raise SpecError(field, raw(f"unknown key {path!r}"), f"{own} is a spec field: set it "
                            f"in the spec; --set takes the target's own keys ({catalog.name})",
                            hint=f"its key there: {' or '.join(map(repr, near))}?" if near else "")
        tip = f"did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
        if why:
            tip = f"{why}" + (f"; {tip}" if tip else "")
        raise SpecError(field, raw(f"unknown key {path!r}"), allowed, hint=tip)
    results = [catalog.check(value, n, path) for n in nodes]
    if all(results):
        raise SpecError(field, value, f"{catalog.name} rejects it: {results[0][0].message}")


def _spec_field(path: str) -> str | None:
    """The spec field (or table) an unknown override key names, as a spec writes it, or None:
    `lora`, `steps`, `samples` (method.samples), `eval.interval`."""
    from whileai.spec.fields import spec_fields
    from whileai.spec.run import RunSpec

    fields = spec_fields(RunSpec)
    for name in (path, f"method.{path}"):
        if name.split(".")[0] not in ("overrides", "schema_") and any(
                f == name or f.startswith(name + ".") for f in fields):
            return name
    return None


class OverrideKeys(Protocol):
    """A target's catalogue as the override engine asks it (the target's adapter)."""

    def check(self, path: str, value: Any) -> bool:
        """SpecError (its field `overrides.<path>`) unless the target's file has `path` and takes
        `value` there; True where the key is written as an addition the file's composed defaults
        lack (verl's Hydra `+key=`), else False."""
        ...


class SchemaKeys:
    """The adapter for a JSON-schema catalogue (whileai.catalogs.targets.Catalog: prime-rl's and
    TRL's): `check_override`, with the target's rename hints."""

    def __init__(self, catalog: Catalog, *, hint: Callable[[str], str | None] | None = None) -> None:
        self.catalog, self.hint = catalog, hint

    def check(self, path: str, value: Any) -> bool:
        check_override(self.catalog, path, value, hint=self.hint)
        return False


def apply_overrides(doc: dict[str, Any], overrides: dict[str, Any], keys: OverrideKeys, *,
                    prefix: str = "") -> set[str]:
    """The one override engine: check every override (those under `prefix`, asked without it:
    a job's keys in a run of several jobs) against the target's catalogue adapter, then set it
    in the document. Returns the keys (as the spec wrote them) written as additions."""
    added: set[str] = set()
    for path, value in overrides.items():
        if not path.startswith(prefix):
            continue
        if keys.check(path[len(prefix):], value):
            added.add(path)
        paths.set_path(doc, path, value)
    return added


class Account(NamedTuple):
    """The report's three lists, final: what the target reads, ignores, and whileai fixes."""

    reads: tuple[Read, ...]
    ignores: tuple[Ignore, ...]
    fixed: tuple[Fixed, ...]
    # spec field -> the value an override wrote in place of the spec's own (a value copied, not
    # derived): the rules judge the file's value there, not the spec's (whileai.rules.base.Rule)
    replaced: tuple[tuple[str, Any], ...] = ()


def account(applied: Applied, overrides: dict[str, Any], run: Any = None, *,
            note: Callable[[str], str | None] | None = None,
            unwritten: Callable[[str], str | None] | None = None) -> Account:
    """The field map's records (`applied`) with the overrides, each list built once.

    Which override replaces which record is decided first (the keys of `overrides` never nest:
    whileai.catalogs.paths.conflicts): a spec field whose key an override replaced becomes an
    ignore (with the spec's value, from `run`, where the key held one derived from it), a
    whileai default it replaced leaves the list, and each override is read once, saying what it
    replaced (and `note(path)`, a target's remark on the key, where there is one). So each key
    is shown once. `unwritten(path)`: why the target's file holds no such key (None where it
    does); a read there becomes an ignore with that reason (once per field), a default leaves."""
    keys = {path: paths.parse(path) for path in overrides}

    def owner(path: str) -> str | None:
        return next((k for k, segs in keys.items() if _under(path, segs)), None)

    read_by = [owner(r.path) for r in applied.reads]
    fixed_by = [owner(f.path) for f in applied.fixed]
    replaced = {k: [r for r, o in zip(applied.reads, read_by, strict=True) if o == k] for k in keys}
    defaults = {k: [f for f, o in zip(applied.fixed, fixed_by, strict=True) if o == k] for k in keys}
    read = [*(r for r, o in zip(applied.reads, read_by, strict=True) if o is None),
            *(_read(k, v, replaced[k], defaults[k], note) for k, v in overrides.items())]
    gone = {i: why for i, r in enumerate(read) if unwritten and (why := unwritten(r.path))}
    kept = [r for i, r in enumerate(read) if i not in gone]
    ignored = [*applied.ignores, *(_replaced(r, k, overrides[k], run) for k in keys
                                   for r in replaced[k])]
    said = {i.field for i in ignored} | {r.field for r in kept}
    lost: dict[str, Ignore] = {}  # a field's first read the file does not hold
    for i, why in gone.items():
        if read[i].field not in said:
            lost.setdefault(read[i].field, Ignore(field=read[i].field, value=read[i].value, reason=why))
    fixed = [f for f, o in zip(applied.fixed, fixed_by, strict=True)
             if o is None and not (unwritten and unwritten(f.path))]
    direct = tuple((r.field, overrides[k]) for k in keys for r in replaced[k]
                   if _spec_value(run, r.field, r.value) in (r.value, None))  # None: a default
    return Account(tuple(kept), (*ignored, *lost.values()), tuple(fixed), direct)


def _replaced(r: Read, path: str, value: Any, run: Any) -> Ignore:
    """A spec field's read an override replaced, as an ignore saying so."""
    given = _spec_value(run, r.field, r.value)
    wrote = "" if given == r.value else f" (whileai wrote {fmt(r.value)} there)"
    return Ignore(field=r.field, value=given,
                  reason=f"overrides.{path} = {fmt(value)} replaces it at {r.path}{wrote}")


def _read(path: str, value: Any, replaced: list[Read], defaults: list[Fixed],
          note: Callable[[str], str | None] | None) -> Read:
    """An override as the report reads it: what it replaced, else a user override."""
    said = [f"what {', '.join(dict.fromkeys(r.field for r in replaced))} set "
            f"({', '.join(dict.fromkeys(fmt(r.value) for r in replaced))})"] if replaced else []
    said += [f"whileai's {f.path} = {fmt(f.value)} ({f.reason})" for f in defaults]
    text = "replaces " + "; ".join(said) if said else "user override"
    extra = note(path) if note else None
    return Read(field=f"overrides.{path}", path=path, value=value,
                note=f"{text}; {extra}" if extra else text)


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
