"""prime-rl's loader at the pin, offline: each entry point's schema and load-time rules.

`check(doc, entry)` returns every problem prime-rl's own `uv run <entry> @ file.toml` would
raise while parsing (its schema from the pinned catalogue's root for that entry point, then
the entry point's cross-field rules, each mirroring a validator named by file and line), plus
the few things whileai refuses on purpose because they load but cannot run (each rule whose
source starts with "whileai"). `detect(doc)` picks the entry point a file is for, as the
loader's own test does: the first that accepts it, else the one whose fields cover its keys.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from whileai.catalogs.targets import Catalog, Problem
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog
from whileai.targets.prime_rl.loader.entries import ENTRIES, EntryPoint
from whileai.targets.prime_rl.loader.view import STRICT, RuleSet, View

__all__ = ["ENTRIES", "EntryPoint", "check", "detect", "entry_catalog", "rule_sets"]


@cache
def entry_catalog(entry: str) -> Catalog:
    return prime_rl_catalog().rooted(entry)


def rules(doc: dict[str, Any], entry: str = "rl", catalog: Catalog | None = None) -> list[Problem]:
    """The entry point's load-time rules (no schema check), on the document as it is loaded."""
    spec = ENTRIES[entry]
    cat = catalog.rooted(entry) if catalog is not None else entry_catalog(entry)
    prepared, found = spec.prepare(doc)
    view = View.root(prepared, cat)
    out = [Problem(path, message) for path, message in found]
    for rule_set, table, optional in spec.rules:
        if optional and not view.present(table):
            continue
        out += rule_set.run(view.at(table) if table else view)
    return out


def check(doc: dict[str, Any], entry: str = "rl", catalog: Catalog | None = None) -> list[Problem]:
    """Schema problems (against the entry point's root) and rule problems; a rule's message is
    the more specific one, so a schema problem at the same key is dropped."""
    cat = catalog.rooted(entry) if catalog is not None else entry_catalog(entry)
    schema = cat.validate(doc)
    token = STRICT.set(not schema)  # rules may meet a wrong type only where the schema says so
    try:
        found = rules(doc, entry, catalog)
    finally:
        STRICT.reset(token)
    said = {p.path for p in found}
    return found + [p for p in schema if p.path not in said]


def detect(doc: dict[str, Any]) -> tuple[str, list[Problem]]:
    """(entry point, its problems): the first entry point that accepts the document, else the
    likeliest one (fewest top-level keys it does not know; ties in the loader's order)."""
    found: dict[str, list[Problem]] = {}
    for entry in ENTRIES:
        found[entry] = check(doc, entry)
        if not found[entry]:
            return entry, []

    def unknown(entry: str) -> tuple[int, int]:
        fields = set(entry_catalog(entry).children(entry_catalog(entry).top))
        return len(set(doc) - fields), list(ENTRIES).index(entry)

    best = min(ENTRIES, key=unknown)
    return best, found[best]


def rule_sets() -> list[RuleSet]:
    """Every rule set, once: those an entry point runs and those its rules delegate to."""
    from whileai.targets.prime_rl.loader import orchestrator

    seen: dict[int, RuleSet] = {}
    for spec in ENTRIES.values():
        for rule_set, _, _ in spec.rules:
            seen.setdefault(id(rule_set), rule_set)
    for nested in (orchestrator.SOURCE, orchestrator.EVAL, orchestrator.ALGO):
        seen.setdefault(id(nested), nested)
    return list(seen.values())
