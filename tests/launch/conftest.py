"""Launch tests run offline: no Modal token, a HOME without ~/.modal.toml."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODAL_TOKEN_ID", raising=False)
    monkeypatch.delenv("MODAL_TOKEN_SECRET", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))


@pytest.fixture(autouse=True)
def _stop_local_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every run a test's LocalExecutor started is stopped at teardown (each run is its own
    process group), passed or failed: no arm sleeps on after its test."""
    from whileai.launch.local import LocalExecutor

    made: list[LocalExecutor] = []
    init = LocalExecutor.__init__

    def recorded(self: LocalExecutor, *a: Any, **kw: Any) -> None:
        init(self, *a, **kw)
        made.append(self)

    monkeypatch.setattr(LocalExecutor, "__init__", recorded)
    yield
    for executor in made:
        executor.stop(grace=0)
