"""Fixtures for the TRL backend tests: tiny models built once per session (needs torch)."""

from __future__ import annotations

import os

import pytest
from helpers import needs
from trl_helpers import OFFLINE


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A random tiny Qwen3 student and teacher sharing a local tokenizer (no hub)."""
    needs("trl", "torch", "transformers", "tokenizers")
    for k, v in OFFLINE.items():
        os.environ.setdefault(k, v)
    from whileai.tasksets.builtin import default_texts
    from whileai.vocab.tiny import build

    return build(tmp_path_factory.mktemp("tiny"), default_texts())
