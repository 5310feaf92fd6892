"""Fixtures for the top-level tests (helpers live in helpers.py: conftest names collide)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def empty_hub_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Reports must not depend on this machine's Hugging Face cache: the tokenizer check reads
    tokenizers from it when both are there. Tests that want a cache set HF_HUB_CACHE themselves."""
    old = os.environ.get("HF_HUB_CACHE")
    hub = tmp_path_factory.mktemp("hf-hub-cache")
    os.environ["HF_HUB_CACHE"] = str(hub)
    yield hub
    if old is None:
        os.environ.pop("HF_HUB_CACHE", None)
    else:
        os.environ["HF_HUB_CACHE"] = old


@pytest.fixture
def chdir_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session", autouse=True)
def _tiny_model_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One tiny-model cache for the whole session (whileai.vocab.tiny.cached), shared with the recipe
    subprocesses through the environment: models are built once, not per test. A cache the
    caller already set (WHILEAI_CACHE) is kept, so runs can share it across sessions too."""
    import os

    os.environ.setdefault("WHILEAI_CACHE", str(tmp_path_factory.mktemp("whileai-cache")))
