"""The pinned TRL catalogue (schemas/trl-<version>.catalog.json) as a whileai `Catalog`.

The catalogue lists, per TRL config class, each field's type string, default and choices
(written by scripts/gen_trl_catalog.py). A TRL command parses a flat YAML whose keys are the
union of its classes' fields; this module turns that union into the JSON-Schema subset that
`whileai.catalogs.targets.Catalog` checks, so overrides get the same did-you-mean and type errors as
the prime-rl target. No trl import.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from whileai.catalogs.targets import Catalog, schemas_dir
from whileai.targets.trl.pin import VERSION

FILE = f"trl-{VERSION}.catalog.json"
# Keys TrlParser itself reads from a YAML config besides the dataclass fields (scripts/utils.py:
# `env` is popped and exported as environment variables before parsing).
PARSER_KEYS: dict[str, dict[str, Any]] = {
    "env": {"type": "object", "additionalProperties": {"type": ["string", "integer", "number"]}},
}


@cache
def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((schemas_dir() / FILE).read_text())
    return data


def fields(command: str) -> dict[str, dict[str, Any]]:
    """Field name → catalogue entry for everything `command`'s parser accepts (first class wins)."""
    cat = raw()
    out: dict[str, dict[str, Any]] = {}
    for cls in cat["commands"][command]:
        for name, entry in cat["classes"][cls]["fields"].items():
            out.setdefault(name, entry | {"class": cls})
    return out


@cache
def catalog(command: str) -> Catalog:
    props: dict[str, Any] = {name: node(e) for name, e in fields(command).items()}
    props.update(PARSER_KEYS)
    schema = {"type": "object", "additionalProperties": False, "properties": props}
    return Catalog(schema, f"{FILE} ({command})")


def node(entry: dict[str, Any]) -> dict[str, Any]:
    """Catalogue entry → JSON-Schema node. Fields with choices accept only those (TRL converts
    the value to its Enum and raises otherwise), plus null where the type allows None."""
    alts = split_union(entry["type"])
    if entry.get("choices"):
        values = list(entry["choices"]) + ([None] if "None" in alts else [])
        return {"enum": values}
    nodes = [type_node(a) for a in alts]
    return nodes[0] if len(nodes) == 1 else {"anyOf": nodes}


def split_union(text: str) -> list[str]:
    """'dict[str, int | str] | None' → ['dict[str, int | str]', 'None'] (top level only)."""
    parts, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch == "["
        depth -= ch == "]"
        if depth == 0 and text.startswith(" | ", i):
            parts.append(cur)
            cur, i = "", i + 3
            continue
        cur += ch
        i += 1
    return [p.strip() for p in parts + [cur]]


_SCALARS = {"int": "integer", "float": "number", "bool": "boolean", "str": "string", "None": "null"}


def type_node(t: str) -> dict[str, Any]:
    if t in _SCALARS:
        return {"type": _SCALARS[t]}
    if t == "Any":
        return {}
    base, _, inner = t.partition("[")
    if base in ("list", "tuple", "Sequence"):
        items = split_union(inner[:-1]) if inner else []
        sub = [type_node(x) for x in items]
        item = sub[0] if len(sub) == 1 else ({"anyOf": sub} if sub else {})
        return {"type": "array", "items": item}
    if base in ("dict", "Mapping"):
        return {"type": "object"}
    if base == "Literal":
        return {}
    return {"type": "object"}  # a nested dataclass (e.g. DatasetConfig)


def has(command: str, key: str) -> bool:
    """Whether `key` (a top-level YAML key; `env.X` for the parser's env table) is accepted."""
    return bool(catalog(command).lookup(key))
