"""The pinned prime-rl catalogue is read lazily (whileai.catalogs.defs): the same document as
json.loads makes, each $defs entry parsed when first read; any other layout is parsed whole."""

from __future__ import annotations

import json

import pytest

from whileai.catalogs import defs
from whileai.catalogs.targets import schemas_dir
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog

TEXT = next(schemas_dir().glob("prime-rl-*.catalog.json")).read_text()


def test_lazy_catalogue_is_the_document() -> None:
    cat = prime_rl_catalog()
    assert isinstance(cat.defs, defs.Defs)
    assert cat.schema == json.loads(TEXT)
    assert list(cat.defs) == list(json.loads(TEXT)["$defs"])


def test_entries_are_parsed_when_read() -> None:
    found = defs.read(TEXT)["$defs"]
    assert isinstance(found, defs.Defs) and not found._read
    name = next(iter(found))
    assert found[name] == json.loads(TEXT)["$defs"][name] and list(found._read) == [name]
    assert "NoSuchConfig" not in found and found.get("NoSuchConfig") is None


@pytest.mark.parametrize("text", [
    json.dumps(json.loads(TEXT)),  # another layout
    TEXT.replace('"$defs": {\n', '"$defs": {\n  "A": {},\n', 1),  # an empty entry
    TEXT.replace('"$defs": {\n', '"$defs": {\n  "A": [\n   1\n  ],\n', 1),  # no object
    TEXT.replace('"$defs": {\n', '"$defs": {\n  "A\\"": {\n   "x": 1\n  },\n', 1),  # an escape
])
def test_any_other_layout_is_parsed_whole(text: str) -> None:
    read = defs.read(text)
    assert isinstance(read["$defs"], dict) and read == json.loads(text)
