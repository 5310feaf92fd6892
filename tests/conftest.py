"""Fixtures for the top-level tests (helpers live in helpers.py: conftest names collide)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def chdir_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path
