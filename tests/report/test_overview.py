"""The first screen of every report (issue 40, item 14): for every bundled example and target,
the first 12 lines at 80 columns hold the run's GPUs and nodes, its hours, and each error-level
warning (whileai.rules.base.SINKS), before the field-by-field detail."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.api import compile_all
from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.report.overview import overview
from whileai.report.text import render_text
from whileai.rules.base import SINKS, Finding, severity
from whileai.spec.load import load_spec
from whileai.targets import registry

SPECS = sorted(p for p in EXAMPLES.rglob("*.toml"))
SCREEN = 12


def compiled(spec, target: str):  # type: ignore[no-untyped-def]
    try:
        return compile_all([load_spec(spec)], target, names=[spec.stem])[0]
    except SpecError as e:  # a spec this target refuses has no report (its one line says why)
        pytest.skip(f"{target} refuses {spec.name}: {e}")


def screen_holds_the_essentials(c, text: str) -> None:  # type: ignore[no-untyped-def]
    first = " ".join(" ".join(text.splitlines()[:SCREEN]).split())
    assert re.search(r"\b\d+ GPUs? on \d+ nodes?\b", first), first
    hours = c.cost is None or c.cost.wall_hours is None or re.search(r"≈ [\d.,]+ hours on", first)
    assert hours, first
    if c.cost is not None and c.cost.wall_hours is None:
        assert "time: no" in first  # and it says why there is no estimate
    for w in c.warnings:
        if w.accepted is None and severity(w.rule) == "error":
            assert f"error [{w.rule}]" in first, first
    assert "detail:" in text  # the detail follows


@pytest.mark.parametrize("target", registry.names())
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_the_first_screen_holds_shape_hours_and_errors(spec, target: str) -> None:  # type: ignore[no-untyped-def]
    c = compiled(spec, target)
    screen_holds_the_essentials(c, render_text(c, 80))


def test_an_error_level_warning_is_on_the_first_screen_even_after_many_warnings() -> None:
    c = compiled(EXAMPLES / "opd.toml", "prime-rl")
    noise = tuple(Finding(rule=f"noise-{i}", message="x " * 40, citation="c") for i in range(6))
    sink = Finding(rule="grpo-no-credit", message="every advantage is 0 " * 5, citation="c")
    c = replace(c, warnings=(*noise, sink))
    text = render_text(c, 80)
    screen_holds_the_essentials(c, text)
    assert "error [grpo-no-credit]" in " ".join(text.splitlines()[:SCREEN])
    assert [line for line in overview(c) if line.startswith("other warnings: 6 open")]


def test_every_sink_is_a_rule() -> None:
    ids = {r.id for r in registry.rules()}
    assert set(SINKS) <= ids, set(SINKS) - ids


@pytest.mark.parametrize("flag", [[], ["--rich"]])
def test_the_cli_prints_the_first_screen_first(flag: list[str]) -> None:
    r = CliRunner().invoke(app, ["compile", str(EXAMPLES / "opd.toml"), *flag], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].startswith("  shape: 2 GPUs on 1 node")
    assert any(line.startswith("  time: ≈") for line in lines[:SCREEN])
    assert any(line.startswith("  teacher ") for line in lines[:SCREEN])
