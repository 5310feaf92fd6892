"""A file whileai rewrites (a manifest, metrics, results, a run's files) is replaced by a rename,
never rewritten in place: whoever holds the old file (a reader that opened it, a hard link) keeps
reading the old text whole, and the new text appears at once under the name."""

from __future__ import annotations

import os
from pathlib import Path

from whileai.files.atomic import atomic_write, commit


def test_atomic_write_replaces_the_file_by_a_rename(tmp_path: Path) -> None:
    dest = tmp_path / "manifest.json"
    dest.write_text("old\n")
    os.link(dest, tmp_path / "held")
    with dest.open() as reader:
        atomic_write(dest, "new\n")
        assert reader.read() == "old\n"  # an open reader sees the old file, not a half-written one
    assert dest.read_text() == "new\n" and (tmp_path / "held").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["held", "manifest.json"]  # no temporary left


def test_commit_replaces_each_file_by_a_rename(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("old a\n")
    os.link(a, tmp_path / "held")
    commit([(a, "new a\n"), (b, "new b\n")])
    assert (a.read_text(), b.read_text()) == ("new a\n", "new b\n")
    assert (tmp_path / "held").read_text() == "old a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.toml", "b.toml", "held"]
