"""Fixtures for the top-level tests (helpers live in helpers.py: conftest names collide)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def chdir_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session", autouse=True)
def _tiny_model_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One tiny-model cache for the whole session (whileai.tiny.cached), shared with the recipe
    subprocesses through the environment: models are built once, not per test. A cache the
    caller already set (WHILEAI_CACHE) is kept, so runs can share it across sessions too."""
    import os

    os.environ.setdefault("WHILEAI_CACHE", str(tmp_path_factory.mktemp("whileai-cache")))
