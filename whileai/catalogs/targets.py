"""Pinned target catalogues: look up dotted paths, check values, suggest the near miss.

A catalogue is a JSON Schema (the subset pydantic emits: $ref, anyOf, properties,
additionalProperties, type, const, enum, not, bounds, items), plus prime-rl's marks: a node
whose branch the loader picks by a plugin id (`x-prime-rl-narrow`: a source's env by env id /
taskset id, a harness or judge by its id) is checked against that one branch, and a union whose
tag the loader never fills (`x-prime-rl-tag-required`) needs it. This module validates a document
without any third-party validator, so `whileai compile` stays light; the tests cross-check it
with `jsonschema` (Draft 2020-12).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from whileai.catalogs import defs
from whileai.catalogs.paths import join, parse
from whileai.errors import close_matches

Node = dict[str, Any]
_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool,
    "array": list, "object": dict, "null": type(None),
}


def schemas_dir() -> Path:
    """`schemas/` of a checkout, or the copy packed into the wheel."""
    package = Path(__file__).resolve().parents[1]  # whileai/
    packed = package / "_schemas"
    return packed if packed.is_dir() else package.parent / "schemas"


class Problem(NamedTuple):
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.message}"


# prime-rl's loader reads booleans in pydantic's lax mode ("yes", "on", 1): a prime-rl
# catalogue accepts them too (whileai.targets.prime_rl.lax), noting each in LAX_NOTES when a
# caller collects; _LAX is off while a union tries its branches strictly first
LAX_NOTES: ContextVar[list[Problem] | None] = ContextVar("LAX_NOTES", default=None)
_LAX: ContextVar[bool] = ContextVar("_LAX", default=True)


class Catalog:
    def __init__(self, schema: Node, name: str, *, lax_bools: bool = False) -> None:
        self.top = schema  # the node a document is checked against; its $defs may read lazily
        self.name = name
        self.lax_bools = lax_bools  # booleans are read leniently, as prime-rl's loader does
        self.defs: Mapping[str, Node] = schema.get("$defs", {})

    @property
    def schema(self) -> Node:
        """The catalogue as one JSON document, every $defs entry read (whileai.catalogs.defs)."""
        if isinstance(self.defs, dict):
            return self.top
        return {**self.top, "$defs": dict(self.defs)}

    # -- structure -------------------------------------------------------------------------
    def resolve(self, node: Node) -> Node:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def branches(self, node: Node) -> list[Node]:
        """The alternatives a node stands for, with refs resolved and anyOf flattened."""
        node = self.resolve(node)
        if "anyOf" in node:
            out: list[Node] = []
            for alt in node["anyOf"]:
                out += self.branches(alt)
            return out
        return [node]

    def children(self, node: Node) -> dict[str, list[Node]]:
        """Keys an object node accepts (union of all object branches) → their schemas."""
        kids: dict[str, list[Node]] = {}
        for b in self.branches(node):
            for k, v in b.get("properties", {}).items():
                kids.setdefault(k, []).append(v)
        return kids

    def lookup(self, path: str | tuple[str | int, ...]) -> list[Node]:
        """Schemas a path (`a.source[0].b`, or its segments) may hold; [] when it does not exist."""
        nodes = [self.top]
        for seg in parse(path) if isinstance(path, str) else path:
            nxt: list[Node] = []
            for n in nodes:
                for b in self.branches(n) + self._unknown_plugin(n):
                    if isinstance(seg, int):
                        if b.get("type") == "array":
                            nxt.append(b.get("items", {}))
                        elif not b:  # below a table that accepts anything
                            nxt.append({})
                        continue
                    if seg in b.get("properties", {}):
                        nxt.append(b["properties"][seg])
                    elif isinstance(b.get("additionalProperties"), dict):
                        nxt.append(b["additionalProperties"])
                    elif b.get("type") == "object" and b.get("additionalProperties", True) is True:
                        nxt.append({})
                    elif not b:  # below a table that accepts any key
                        nxt.append({})
            if not nxt:
                return []
            nodes = nxt
        return nodes

    def _unknown_plugin(self, node: Node) -> list[Node]:
        """The open branch a plugin-narrowed node takes for an id the catalogue does not know
        (an env of an unknown taskset passes through): a path below it may exist."""
        spec = self.resolve(node).get("x-prime-rl-narrow")
        unknown = spec.get("unknown") if isinstance(spec, dict) else None
        return self.branches({"$ref": f"#/$defs/{unknown}"}) if unknown in self.defs else []

    def paths(self, depth: int = 7) -> list[str]:
        """Every dotted path of the catalogue (arrays as their items), for suggestions."""
        out: list[str] = []
        seen: set[tuple[str, int]] = set()

        def walk(node: Node, prefix: str, d: int) -> None:
            if d > depth:
                return
            for b in self.branches(node):
                if b.get("type") == "array" and isinstance(b.get("items"), dict):
                    walk(b["items"], f"{prefix}[0]", d)
                for k, v in b.get("properties", {}).items():
                    p = f"{prefix}.{k}" if prefix else k
                    if (p, d) in seen:
                        continue
                    seen.add((p, d))
                    out.append(p)
                    walk(v, p, d + 1)

        walk(self.top, "", 0)
        return sorted(set(out))

    def suggest(self, path: str) -> list[str]:
        """Near misses for an unknown path: same-level siblings first, then any full path."""
        segs = list(parse(path))
        for i in range(len(segs), 0, -1):
            if i == 1 or self.lookup(tuple(segs[: i - 1])):
                if isinstance(segs[i - 1], int):
                    break
                nodes = self.lookup(tuple(segs[: i - 1])) if i > 1 else [self.top]
                keys = sorted({k for n in nodes for k in self.children(n)})
                near = close_matches(str(segs[i - 1]), keys, n=3, cutoff=0.6)
                if near:
                    return [join([*segs[: i - 1], k, *segs[i:]]) for k in near]
                break
        everything = self.paths()
        last = str(segs[-1])
        tail = [p for p in everything if p.endswith("." + last) or p == last]
        return close_matches(join(segs), tail or everything, n=3, cutoff=0.5)

    # -- values ----------------------------------------------------------------------------
    def check(self, value: Any, node: Node, path: str = "") -> list[Problem]:
        """Problems of `value` against `node`; [] when it is accepted."""
        node = self.resolve(node)
        tag = node.get("x-prime-rl-tag-required")
        if isinstance(tag, str) and isinstance(value, dict) and tag not in value:
            return [Problem(_join(path, tag), f"is required: the loader picks the table's kind by "
                                             f"its {tag} (no default is filled in)")]
        narrowed = _narrow(node.get("x-prime-rl-narrow"), value)
        if narrowed:
            return self.check(value, {"$ref": f"#/$defs/{narrowed}"}, path)
        if "anyOf" in node:
            alts = self.branches(node)
            picked = _discriminate(alts, value)
            token = _LAX.set(False)  # a branch that takes the value as it is wins
            try:
                results = [self.check(value, a, path) for a in (picked or alts)]
            finally:
                _LAX.reset(token)
            if any(not r for r in results):
                return []
            if _LAX.get():
                results = [self.check(value, a, path) for a in (picked or alts)]
            if any(not r for r in results):
                return []
            if len(results) == 1:
                return results[0]
            typed = [r for a, r in zip(picked or alts, results, strict=True)
                     if a.get("type") and _is_type(value, a["type"])]
            if len(typed) == 1:  # `x: T | None` given a T: say what is wrong inside it
                return typed[0]
            return [Problem(path, f"{_show(value)} matches none of: {_describe(alts)}")]
        return self._check_one(value, node, path)

    def _check_one(self, value: Any, node: Node, path: str) -> list[Problem]:
        if isinstance(node.get("not"), dict) and not self.check(value, node["not"], path):
            return [Problem(path, f"{_show(value)} is not accepted here" + (
                " (prime-rl reads the string 'None' as null, and this field cannot be null)"
                if value == "None" else ""))]
        if "const" in node and value != node["const"] and not _same_plugin(path, value, node["const"]):
            return [Problem(path, f"{_show(value)} must be {node['const']!r}")]
        if "enum" in node and value not in node["enum"]:
            return [Problem(path, f"{_show(value)} is not one of {node['enum']}")]
        t = node.get("type")
        if t and not _is_type(value, t):
            if t == "boolean" and _LAX.get() and self.lax_bools:

                read = lax_bool(value)
                if read is not None:  # the loader reads it as this bool
                    notes = LAX_NOTES.get()
                    if notes is not None:
                        notes.append(Problem(path, f"{_show(value)} is read as {read} (prime-rl's "
                                                   "loader reads booleans leniently); write "
                                                   f"{str(read).lower()}"))
                    return []
            return [Problem(path, f"{_show(value)} is not of type {t}")]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for key, ok in _BOUNDS.items():
                if key in node and not ok(value, node[key]):
                    return [Problem(path, f"{value!r} violates {key} {node[key]}")]
        if isinstance(value, list):
            if len(value) < node.get("minItems", 0):
                return [Problem(path, f"needs at least {node['minItems']} item(s)")]
            items = node.get("items")
            if isinstance(items, dict):
                return [p for i, v in enumerate(value) for p in self.check(v, items, f"{path}[{i}]")]
        if isinstance(value, dict) and (t == "object" or "properties" in node):
            return self._check_object(value, node, path)
        return []

    def _check_object(self, value: dict[str, Any], node: Node, path: str) -> list[Problem]:
        out: list[Problem] = []
        props = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        for req in node.get("required", []):
            if req not in value:
                out.append(Problem(_join(path, req), "is required"))
        for k, v in value.items():
            sub = _join(path, k)
            if k in props:
                out += self.check(v, props[k], sub)
            elif isinstance(extra, dict):
                out += self.check(v, extra, sub)
            elif extra is False:
                near = close_matches(k, list(props), n=1, cutoff=0.6)
                hint = f"; did you mean {_join(path, near[0])!r}?" if near else ""
                out.append(Problem(sub, f"unknown key{hint}"))
        return out

    def validate(self, doc: dict[str, Any]) -> list[Problem]:
        return self.check(doc, self.top)

    def rooted(self, root: str) -> Catalog:
        """The catalogue rooted at an entry point's class (`x-prime-rl.roots`: rl, sft, ...)."""
        meta = self.top.get("x-prime-rl", {})
        ref = meta.get("roots", {}).get(root, f"#/$defs/{root}")
        return Catalog({"$ref": ref, "$defs": self.defs, "x-prime-rl": meta}, f"{self.name} ({root})",
                       lax_bools=self.lax_bools)


_BOUNDS = {"minimum": lambda v, b: v >= b, "maximum": lambda v, b: v <= b,
           "exclusiveMinimum": lambda v, b: v > b, "exclusiveMaximum": lambda v, b: v < b}


def _is_type(value: Any, t: str | list[str]) -> bool:
    if isinstance(t, list):
        return any(_is_type(value, x) for x in t)
    if t in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[t])


def _discriminate(alts: list[Node], value: Any) -> list[Node]:
    """Branches whose const tag (type / name) matches the value's tag."""
    if not isinstance(value, dict):
        return []
    for tag in ("type", "name"):
        if tag in value:
            hits = [a for a in alts if a.get("properties", {}).get(tag, {}).get("const") == value[tag]]
            if hits:
                return hits
    return []


def plugin_key(ident: Any) -> str:
    """A plugin id as the catalogue keys it: no owner/ or @version, kebab-case, lowercase."""
    return str(ident).rsplit("/", 1)[-1].split("@", 1)[0].replace("_", "-").lower()


def _same_plugin(path: str, value: Any, const: Any) -> bool:
    """A plugin's `id` written as the loader resolves it: 'owner/name@version', '_' for '-'."""
    return (path.rsplit(".", 1)[-1] == "id" and isinstance(value, str) and isinstance(const, str)
            and bool(const) and plugin_key(value) == const)


def _narrow(spec: Any, value: Any) -> str | None:
    """The $defs key a plugin-narrowed node (x-prime-rl-narrow) selects for `value`, if any."""
    if not isinstance(spec, dict) or not isinstance(value, dict):
        return None
    if "taskset" in spec:  # an env: explicit env id, else the taskset id
        taskset = value.get("taskset")
        tid = taskset.get("id") if isinstance(taskset, dict) else None
        if value.get("id"):
            return spec["env_id"].get(plugin_key(value["id"])) or spec.get("unknown")
        if tid:
            return spec["taskset"].get(plugin_key(tid)) or spec.get("unknown")
        return None
    ident = value.get("id") or spec.get("default")
    return spec["map"].get(plugin_key(ident)) if ident else None


def _describe(alts: list[Node]) -> str:
    parts = []
    for a in alts:
        tag = next((a["properties"][t]["const"] for t in ("type", "name")
                    if "const" in a.get("properties", {}).get(t, {})), None)
        parts.append(repr(tag) if tag else str(a.get("type", "object")))
    return ", ".join(dict.fromkeys(parts))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@cache
def pinned(stem: str, *, lax_bools: bool = False) -> Catalog:
    """The newest `schemas/<stem>-*.catalog.json` (a target's pinned catalogue, e.g. prime-rl's:
    whileai.targets.prime_rl.catalog), read once per process."""
    files = sorted(schemas_dir().glob(f"{stem}-*.catalog.json"))
    if not files:
        raise FileNotFoundError(f"no {stem} catalogue in {schemas_dir()}")
    return Catalog(defs.read(files[-1].read_text()), files[-1].name, lax_bools=lax_bools)


# booleans prime-rl's loader reads in pydantic's lax mode (its config classes are not strict)
TRUE = ("1", "on", "t", "true", "y", "yes")  # pydantic's lax bool strings (case-insensitive)
FALSE = ("0", "off", "f", "false", "n", "no")


def lax_bool(value: Any) -> bool | None:
    """The bool pydantic's lax mode reads from `value`, or None when it reads none (a real bool
    is None here: nothing to note)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    return None
