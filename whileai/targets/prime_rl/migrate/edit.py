"""Style-preserving edits of a TOML document (tomlkit): list its keys, move, set and delete
one key by its concrete path (list items by index), drop tables a move left empty."""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table

from whileai.targets.prime_rl.migrate.chain import Path_, generic

LEAF_TABLES = ("args", "env_vars", "extra_env_kwargs", "headers", "kwargs", "vllm_extra", "extra")


def leaves(node: Any, path: Path_ = ()) -> list[Path_]:
    """Concrete paths of every value that is not a table (free-form tables count as values)."""
    if isinstance(node, dict) and not (path and path[-1] in LEAF_TABLES):
        out = [p for k, v in node.items() for p in leaves(v, (*path, k))]
        return out or [path] if path else out
    if isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        return [p for i, v in enumerate(node) for p in leaves(v, (*path, i))]
    return [path]


def get(doc: Any, path: Path_) -> Any:
    node = doc
    for seg in path:
        node = node[seg]
    return node


def has(doc: Any, path: Path_) -> bool:
    try:
        get(doc, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def delete(doc: Any, path: Path_, emptied: set[Path_]) -> Any:
    parent = get(doc, path[:-1])
    value = parent[path[-1]]
    del parent[path[-1]]
    emptied.add(path[:-1])
    return value


def put(doc: Any, path: Path_, value: Any, created: list[Any] | None = None) -> None:
    """Set a value, creating the tables on the way (listed in `created`: see supers)."""
    node = doc
    for i, seg in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(seg, int):
            while len(node) <= seg:
                node.append(tomlkit.table())
            node = node[seg]
            continue
        if seg not in node:
            node[seg] = tomlkit.aot() if isinstance(nxt, int) else tomlkit.table()
            if created is not None and not isinstance(nxt, int):
                created.append(node[seg])
        node = node[seg]
    last = path[-1]
    if isinstance(value, Table) and isinstance(node, Table) and isinstance(last, str) and last not in node:
        node.append(last, value)
    else:
        node[last] = value


# an rl file's process tables stay even when emptied: [trainer] and [orchestrator] are required,
# and an [inference] table starts the inference server
PROCESSES = {("trainer",), ("orchestrator",), ("inference",)}


def prune(doc: Any, emptied: set[Path_]) -> None:
    """Drop the tables a move or drop left empty (deepest first); tables empty in the user's
    file stay (an empty [ckpt] means something), and so do the process tables."""
    todo = sorted(emptied, key=len, reverse=True)
    while todo:  # a table emptied by dropping its last child is looked at in turn
        path = todo.pop(0)
        if not path or not has(doc, path):
            continue
        if path in PROCESSES:  # an emptied [trainer.loss] leaves [trainer], with a header of its own
            node = get(doc, path)
            if isinstance(node, Table) and not node:
                node._is_super_table = False
            continue
        node = get(doc, path)
        if isinstance(node, dict) and not node:
            parent = get(doc, path[:-1])
            if isinstance(parent, (list, AoT)):
                if any(parent):
                    continue  # an empty list item is still an item
                grand = get(doc, path[:-2])
                del grand[path[-2]]
                emptied.add(path[:-2])
                todo.append(path[:-2])
                continue
            del parent[path[-1]]
            emptied.add(path[:-1])
            todo.append(path[:-1])


def supers(created: list[Any]) -> None:
    """A table whileai created that holds only tables gets no header of its own."""
    for table in created:
        if isinstance(table, Table) and table and all(isinstance(v, (Table, AoT)) for v in table.values()):
            table._is_super_table = True


def show(path: Path_) -> str:
    out = ""
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else ("." if out else "") + seg
    return out


__all__ = ["delete", "generic", "get", "has", "leaves", "prune", "put", "show"]


HEADER = re.compile(r"""^\[\[?\s*[A-Za-z0-9_\-."' ]+\]\]?\s*(#.*)?$""")


def spaced(text: str, like: str) -> str:
    """`text` with a blank line before each table header (before the comments right above it)
    when the original file `like` separates its tables so: tables a migration makes or moves
    come out of tomlkit joined to the line before. The same document, or `text` unchanged."""
    import tomllib

    def headers(lines: list[str]) -> list[int]:
        return [i for i, line in enumerate(lines) if i and HEADER.match(line)]

    old = like.splitlines()
    apart = [i for i in headers(old) if not old[i - 1].strip() or old[i - 1].lstrip().startswith("#")]
    if not headers(old) or len(apart) * 2 < len(headers(old)):
        return text  # a file written without blank lines between its tables keeps that layout
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    for i, line in enumerate(lines):
        if i and HEADER.match(line.rstrip("\r\n")):
            at = len(out)
            while at and out[at - 1].lstrip().startswith("#"):
                at -= 1
            if at and out[at - 1].strip():
                out.insert(at, "\n")
        out.append(line)
    new = "".join(out)
    try:
        return new if tomllib.loads(new) == tomllib.loads(text) else text
    except tomllib.TOMLDecodeError:
        return text
