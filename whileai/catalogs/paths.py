"""Target key paths: `a.source[0].b` and `a.source.0.b` name the same key everywhere.

A path is names joined by '.', with list items as `[N]` after a name or as a `.N` segment.
`parse` turns one into segments (str names, int indices) or raises SpecError naming the key;
`join` writes the one display form (`orchestrator.train.source[0].name`) that the spec's
[overrides], `--set`, the report and `whileai explain` all use. `flatten` turns a nested
[overrides] table into canonical dotted keys and refuses a key set both as a value and as a
table; `set_path` / `get_path` read and write nested documents along a path.
"""

from __future__ import annotations

import re
from typing import Any

from whileai.errors import SpecError, raw, show

Seg = str | int
MAX_INDEX = 1023
EXAMPLE = "dotted names, list items as [N] or .N, e.g. orchestrator.train.source[0].name"
_TOKEN = re.compile(r"(?P<name>[^.\[\]\s\x00-\x1f\x7f]+)|\[(?P<idx>[0-9]+)\]|(?P<dot>\.)")


def _bad(key: str, why: str, where: str) -> SpecError:
    return SpecError(where, raw(f"malformed key {show(key)}"), EXAMPLE, hint=why)


def parse(key: str, where: str = "overrides") -> tuple[Seg, ...]:
    """'a.source[0].b' or 'a.source.0.b' → ('a', 'source', 0, 'b')."""
    if isinstance(key, str) and key.isascii() and key.isprintable() and " " not in key \
            and "[" not in key and "]" not in key:  # names and dots only: most keys
        names = key.split(".")
        if all(names) and not any(n.isdigit() for n in names[1:]):
            return tuple(names)  # what the tokens below make of it, without them
    if not isinstance(key, str) or not key:
        raise _bad(str(key), "an empty key", where)
    segs: list[Seg] = []
    pos, after_dot = 0, True  # a name (or .N) may follow the start or a dot
    while pos < len(key):
        m = _TOKEN.match(key, pos)
        if not m:
            raise _bad(key, f"unexpected {show(key[pos])} at character {pos + 1}", where)
        if m.group("dot"):
            if after_dot:
                raise _bad(key, "an empty segment", where)
            after_dot = True
        elif m.group("idx") is not None:
            if after_dot:
                raise _bad(key, "[N] must follow a name", where)
            segs.append(_index(m.group("idx"), key, where))
        else:
            name = m.group("name")
            if not after_dot:
                raise _bad(key, f"{show(name)} must follow a '.'", where)
            segs.append(_index(name, key, where) if name.isdigit() and segs else name)
            after_dot = False
        pos = m.end()
    if after_dot:
        raise _bad(key, "an empty segment at the end", where)
    return tuple(segs)


def _index(text: str, key: str, where: str) -> int:
    if not text.isascii() or len(text) > 4 or int(text) > MAX_INDEX:
        raise _bad(key, f"list index {show(text)} is over {MAX_INDEX}", where)
    return int(text)


def join(segs: tuple[Seg, ...] | list[Seg]) -> str:
    """('a', 'source', 0, 'b') → 'a.source[0].b'."""
    out = ""
    for s in segs:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else s)
    return out


def canonical(key: str, where: str = "overrides") -> str:
    return join(parse(key, where))


def under(inner: tuple[Seg, ...], outer: tuple[Seg, ...]) -> bool:
    """Whether `inner` is `outer` or a key inside it."""
    return inner[: len(outer)] == outer


def flatten(table: dict[Any, Any], where: str = "overrides") -> dict[str, Any]:
    """A nested overrides table → {canonical dotted key: value}. A non-empty table is walked;
    an empty one (`x = {}`) is a value. Two spellings of one key, or a key that is a value
    and a table at once, are an error naming both."""
    flat: dict[str, Any] = {}
    segs_of: dict[str, tuple[Seg, ...]] = {}

    def walk(prefix: tuple[Seg, ...], node: dict[Any, Any]) -> None:
        for k, v in node.items():
            if not isinstance(k, str):
                raise SpecError(where, raw(f"key {show(k)}"), "text keys only")
            segs = parse(f"{join(prefix)}.{k}" if prefix else k, where)
            if isinstance(v, dict) and v:
                walk(segs, v)
                continue
            name = join(segs)
            if name in flat:
                raise SpecError(_label(where, name), raw("given twice"), "give each key once "
                                "(a.b[0] and a.b.0 are the same key)")
            flat[name] = _lists(v)
            segs_of[name] = segs

    walk((), table)
    conflicts(segs_of, where)
    return flat


def _lists(value: Any) -> Any:
    """Tuples (from Python callers) as lists: the one array type TOML and YAML write."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def conflicts(keys: dict[str, tuple[Seg, ...]], where: str = "overrides") -> None:
    """Refuse a key that is both a value and a table (`x = 2` with `x.y = 1`)."""
    ordered = sorted(keys.items(), key=lambda kv: len(kv[1]))
    for i, (short, s) in enumerate(ordered):
        for long, t in ordered[i + 1:]:
            if len(t) > len(s) and under(t, s):
                raise SpecError(_label(where, long), raw(f"sets a key inside {short}"),
                                f"one of the two: {short} is given a value, so it cannot also "
                                "be a table")


def _label(where: str, key: str) -> str:
    """How a message names a key: '--set a.b' or 'overrides.a.b'."""
    return f"{where} {key}" if where.startswith("-") else f"{where}.{key}"


def get_path(doc: Any, path: str | tuple[Seg, ...], default: Any = None) -> Any:
    """The value at `path` in nested dicts/lists, or `default` (also when a node on the way
    is not a table or list, as in a hand-written file)."""
    node = doc
    for seg in parse(path) if isinstance(path, str) else path:
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                return default
            node = node[seg]
        elif isinstance(node, dict) and seg in node:
            node = node[seg]
        else:
            return default
    return node


def set_path(doc: dict[str, Any], path: str | tuple[Seg, ...], value: Any) -> None:
    """Set `a.b[0].c` in nested dicts/lists, creating tables (and at most one new list item)."""
    segs = parse(path) if isinstance(path, str) else path
    node: Any = doc
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        here = join(segs[: i + 1])
        if isinstance(seg, int):
            if not isinstance(node, list):
                raise SpecError(here, raw("a list item"), f"{join(segs[:i])} is not a list here")
            if seg > len(node):
                raise SpecError(here, raw(f"item {seg}"), f"the list has {len(node)} item(s): set "
                                f"[{len(node)}] before [{seg}]")
            if seg == len(node):
                node.append({})
            if last:
                node[seg] = value
            else:
                node = node[seg] if isinstance(node[seg], (dict, list)) else _conflict(here)
            continue
        if not isinstance(node, dict):
            _conflict(join(segs[:i]))
        if last:
            node[seg] = value
            continue
        nxt = segs[i + 1]
        node = node.setdefault(seg, [] if isinstance(nxt, int) else {})
        if not isinstance(node, (dict, list)):
            _conflict(here)


def _conflict(path: str) -> Any:
    raise SpecError(path, raw("a value"), "a key below it needs it to be a table")
