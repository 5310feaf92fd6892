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


# The tests that run a real consumer of whileai's output, marked `real_tool` here so that
# scripts/measure_suite.py counts them apart (README: the suite's measured block): TRL's own trainer
# and parser (marker `trl`), verl 0.9.1's own code (a test that asks for verl's Python, or a module
# skipped without it), bash and Hydra's grammar and chromium (named in the test), and the replays
# of a real tool's recorded verdicts against what whileai compiles today.
REAL_TOOL_WORDS = ("verl_python(", "needs_verl", "bash_argv(", "chromium")
REAL_TOOL_REPLAYS = ("tests/targets/prime_rl/test_loader_fixture.py",  # prime-rl's loader, replayed
                     "tests/targets/verl/test_verl_compiled_fixture.py")  # verl's check, replayed


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import inspect

    root = Path(str(config.rootpath))
    for item in items:
        if item.get_closest_marker("real_tool") or item.get_closest_marker("trl"):
            item.add_marker(pytest.mark.real_tool)
            continue
        where = Path(str(item.path)).relative_to(root).as_posix() if Path(str(item.path)).is_relative_to(
            root) else ""
        reasons = " ".join(str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))
        try:
            source = inspect.getsource(item.function) if isinstance(item, pytest.Function) else ""
        except (OSError, TypeError):
            source = ""
        if where in REAL_TOOL_REPLAYS or "VERL_PYTHON" in reasons or any(w in source
                                                                          for w in REAL_TOOL_WORDS):
            item.add_marker(pytest.mark.real_tool)
