"""`whileai inspect SPEC --tiny`: one command, offline, builds (then reuses) tiny local models and
writes the page; --tiny refuses a model flag beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.app import app

runner = CliRunner()


def needs_tiny_models() -> None:
    """Skip, naming the extra, where `--tiny` cannot build its models: torch, transformers and
    tokenizers come with the trl extra (torch alone, from the README's first step, is not enough)."""
    import importlib.util

    missing = [m for m in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the trl extra (pip install -e '.[trl]'): {', '.join(missing)} not installed")


@pytest.mark.trl
def test_inspect_tiny_builds_caches_and_writes_the_page(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    needs_tiny_models()
    from whileai.tokenview import tiny_models

    monkeypatch.setenv("WHILEAI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tiny_models, "WARMUP", {"teacher": 2, "student": 1})  # the shape, quickly
    args = ["inspect", str(EXAMPLES / "opd.toml"), "--tiny", "--prompts", "1", "--max-tokens", "8",
            "--device", "cpu"]
    r = runner.invoke(app, [*args, "-o", str(tmp_path / "one")])
    assert r.exit_code == 0, r.stderr
    assert "tiny models: " in r.stderr and "built in" in r.stderr
    report = json.loads((tmp_path / "one" / "inspect.json").read_text())
    folder = Path(r.stderr.split("tiny models: ", 1)[1].split(" (", 1)[0])
    assert folder.parent.parent == tmp_path / "cache" and (folder / "student").is_dir()
    assert str(folder / "student") in json.dumps(report) and (tmp_path / "one" / "inspect.html").is_file()
    r = runner.invoke(app, [*args, "-o", str(tmp_path / "two")])
    assert r.exit_code == 0 and "(cached;" in r.stderr  # built once, then reused


def test_tiny_with_a_model_flag_is_one_line() -> None:
    r = runner.invoke(app, ["inspect", str(EXAMPLES / "opd.toml"), "--tiny", "--local-student", "x"])
    assert r.exit_code == 2 and r.stderr.startswith("error: --tiny: ") and "--local-student" in r.stderr


def test_tiny_without_torch_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a))
    r = runner.invoke(app, ["inspect", str(EXAMPLES / "opd.toml"), "--tiny"])
    assert r.exit_code == 2 and r.stderr.startswith("error: --tiny: ")
    # torch is named first; with the [dev] extra alone transformers and tokenizers are missing too
    assert "pip install -e '.[trl]'" in r.stderr and r.stderr.startswith("error: --tiny: torch")
    assert " not installed; " in r.stderr
    assert "True is not allowed" not in r.stderr  # it said '--tiny: True is not allowed'
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("spec", "field"), [("grpo.toml", "method.type"),
                                             ("tasksets/gsm8k-opd.toml", "taskset")])
def test_tiny_refuses_what_it_cannot_inspect_before_building_models(
        spec: str, field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GRPO (no teacher signal) and a spec whose tasks are not on this machine are refused in one
    line before the tiny models are built (a cold build takes more than a minute)."""
    needs_tiny_models()  # without them --tiny refuses first, naming what is missing
    from whileai.vocab import tiny

    def build(*a: object, **k: object) -> None:
        raise AssertionError("the tiny models were built before the spec was checked")

    monkeypatch.setattr(tiny, "cached", build)
    r = runner.invoke(app, ["inspect", str(EXAMPLES / spec), "--tiny", "-o", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"error: {field}: ") and len(r.stderr.strip().splitlines()) == 1
