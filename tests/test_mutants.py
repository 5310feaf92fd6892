"""The mutation check (scripts/mutants.py) stays plantable: each mutant's snippet is in its file once
and its tests exist, so a change that moves the code says so here instead of leaving a mutant that
silently plants nothing; and --changed picks the mutants of the files changed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import ROOT


def _script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("mutants", ROOT / "scripts" / "mutants.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MUT = _script()


@pytest.mark.parametrize("name", [m.name for m in MUT.MUTANTS])
def test_each_mutant_can_be_planted(name: str) -> None:
    [m] = [m for m in MUT.MUTANTS if m.name == name]
    assert MUT.stale(m) is None, f"{name}: {MUT.stale(m)}"
    assert m.file.startswith("whileai/") and m.breaks and m.tests


def test_names_are_unique_and_stale_ones_are_named(tmp_path: Path) -> None:
    names = [m.name for m in MUT.MUTANTS]
    assert len(names) == len(set(names)) and 15 <= len(names) <= 40  # a few minutes a run
    m = MUT.MUTANTS[0]
    (tmp_path / m.file).parent.mkdir(parents=True)
    (tmp_path / m.file).write_text(m.original * 2)
    assert MUT.stale(m, tmp_path) == f"its original snippet is in {m.file} 2 times, not once"


def test_changed_picks_the_mutants_of_the_files_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MUT, "changed", lambda base: {"whileai/errors.py", "tests/rehearse/test_verdicts.py"})
    picked = {m.name for m in MUT.select([], "main")}
    assert "secrets-not-masked" in picked and "any-exit-0-is-ok-verl" in picked  # its file, its test
    assert "upward-import" not in picked
    with pytest.raises(SystemExit, match="--only: nosuch: not a mutant"):
        MUT.select(["nosuch"], None)
