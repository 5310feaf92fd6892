"""A pinned catalogue's `$defs`, each entry parsed from the file's text when it is first read.

The prime-rl catalogue holds some three hundred class schemas; a compile reads a few dozen of
them (the ones its document's keys lead to), so parsing the rest at every start-up is wasted.
`read(text)` parses the catalogue's top level and finds where each `$defs` entry begins, which
the generator's layout makes a plain text search (scripts/gen_prime_rl_catalog.py writes
`json.dumps(indent=1, sort_keys=True)`: `$defs` first, each entry on a line that starts with two
spaces and a quote, which no deeper line and no string does). Text of any other layout is
parsed whole, as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

Node = dict[str, Any]
_HEAD = '{\n "$defs": {\n'
_SHUT = "\n  }"  # the line that closes a $defs entry (deeper lines are indented further)
_CLOSE = "\n }"  # the line that closes $defs


class Defs(Mapping[str, Node]):
    """`$defs` as a read-only mapping: an entry is parsed the first time it is read."""

    def __init__(self, text: str, starts: dict[str, int]) -> None:
        self._text = text
        self._starts = starts  # entry name → offset of its value in the text
        self._read: dict[str, Node] = {}
        self._decoder = json.JSONDecoder()

    def __getitem__(self, name: str) -> Node:
        node = self._read.get(name)
        if node is None:
            node, _ = self._decoder.raw_decode(self._text, self._starts[name])
            self._read[name] = node
        return node

    def __contains__(self, name: object) -> bool:
        return name in self._starts

    def __iter__(self) -> Iterator[str]:
        return iter(self._starts)

    def __len__(self) -> int:
        return len(self._starts)


def read(text: str) -> Node:
    """The catalogue document; its `$defs` a `Defs` where the layout is the generator's, else a
    dict (the whole text parsed)."""
    found = _entries(text)
    if found is None:
        whole: Node = json.loads(text)
        return whole
    starts, end = found
    top: Node = json.loads('{"$defs": {}' + text[end + len(_CLOSE):])
    top["$defs"] = Defs(text, starts)
    return top


def _entries(text: str) -> tuple[dict[str, int], int] | None:
    """Each $defs entry's name → where its value begins, and where $defs closes; None for any
    other layout. Every entry
    is an object of several lines, `  "Name": {` ... `  },` (the last without the comma), and no
    name holds an escape."""
    if not text.startswith(_HEAD):
        return None
    starts: dict[str, int] = {}
    at = len(_HEAD)
    while True:
        if not text.startswith('  "', at):
            return None
        key_end = text.find('": ', at)
        key = text[at + 3:key_end]
        if key_end < 0 or "\\" in key or "\n" in key or not text.startswith("{\n", key_end + 3):
            return None  # an escaped name, or a value that is no object of several lines
        starts[key] = key_end + 3
        shut = text.find(_SHUT, key_end)
        if shut < 0:
            return None
        if text.startswith(",\n", shut + len(_SHUT)):
            at = shut + len(_SHUT) + 2
        elif text.startswith(_CLOSE, shut + len(_SHUT)):
            return starts, shut + len(_SHUT)
        else:
            return None
