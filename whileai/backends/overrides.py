"""User overrides (`--set a.b=value`, `[overrides]` in a spec), checked against a catalogue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whileai.catalog import Catalog
from whileai.errors import SpecError, looks_secret, raw
from whileai.report import Ignore, Read


def parse_assignment(text: str) -> tuple[str, Any]:
    """`a.b=3e-6` → ("a.b", 3e-06). Values are TOML values; a bare word is a string."""
    from whileai.files import loads_toml

    if "=" not in text:
        raise SpecError("--set", text, "expected dotted.key=value, e.g. trainer.optim.lr=3e-6")
    key, _, rhs = text.partition("=")
    key, rhs = key.strip(), rhs.strip()
    if not key:
        raise SpecError("--set", text, "expected dotted.key=value, e.g. trainer.optim.lr=3e-6")
    try:
        value = loads_toml(f"v = {rhs}")["v"]
    except SpecError:
        value = rhs
    return key, value


def check_override(
    catalog: Catalog, path: str, value: Any, *, hint: Callable[[str], str | None] | None = None
) -> None:
    """Raise SpecError unless the target's schema has `path` and accepts `value` there."""
    field = f"overrides.{path}"
    if isinstance(value, str) and looks_secret(value):
        raise SpecError(field, value, "no secrets in a config file: put the key in an "
                        "environment variable and name the variable (api_key_env)")
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


def override_reads(reads: list[Read], ignores: list[Ignore], overrides: dict[str, Any]) -> None:
    """Report overrides as reads; a spec field whose key an override replaced becomes an ignore."""
    for path, value in overrides.items():
        replaced = [r for r in reads if r.path == path or r.path.startswith(path + ".")]
        for r in replaced:
            reads.remove(r)
            ignores.append(Ignore(r.field, r.value, f"overrides.{path} = {value!r} replaces it at {r.path}"))
        fields = ", ".join(r.field for r in replaced)
        note = f"replaces what {fields} set" if replaced else "user override"
        reads.append(Read(f"overrides.{path}", path, value, note))
