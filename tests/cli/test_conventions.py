"""Command-line conventions (issue 40, item 15): -h is help on every command, shell completion
is offered (typer's --install-completion / --show-completion), and every option says what it
does, in whileai's commands and in the recipes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer.main
from helpers import ROOT
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.targets import registry

CLI = typer.main.get_command(app)
COMMANDS = sorted(CLI.commands)  # type: ignore[attr-defined]


def test_h_is_help_at_the_top() -> None:
    short, long = (CliRunner().invoke(app, [flag]) for flag in ("-h", "--help"))
    assert short.exit_code == 0 and short.output == long.output and "Usage: " in short.output


@pytest.mark.parametrize("name", COMMANDS)
def test_h_is_help_on_every_command(name: str) -> None:
    short, long = (CliRunner().invoke(app, [name, flag]) for flag in ("-h", "--help"))
    assert short.exit_code == 0, short.output
    assert short.output == long.output and "Usage: " in short.output and f" {name} " in short.output


def test_h_reaches_help_through_the_console_script() -> None:
    """The hot commands (compile, explain, check) parse argv without typer: -h still is help."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("compile", "explain", "check", "methods"):
        p = subprocess.run([sys.executable, "-m", "whileai", name, "-h"], capture_output=True,
                           text=True, env=env, timeout=60)
        assert p.returncode == 0 and f"Usage: whileai {name}" in p.stdout, p.stderr


def test_shell_completion_is_offered_and_completes() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "whileai", "--show-completion", "bash"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and "_WHILEAI_COMPLETE=complete_bash" in p.stdout
    env |= {"_WHILEAI_COMPLETE": "complete_bash", "COMP_WORDS": "whileai comp", "COMP_CWORD": "1"}
    p = subprocess.run([sys.executable, "-m", "whileai"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.stdout.split() == ["compile"]
    assert "--install-completion" in CliRunner().invoke(app, ["-h"]).output


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_says_what_it_does(name: str) -> None:
    bare = [p.opts for p in CLI.commands[name].params  # type: ignore[attr-defined]
            if p.param_type_name == "option" and not getattr(p, "help", None)]
    assert bare == [], f"whileai {name}: options without help"


@pytest.mark.parametrize("target", [n for n in registry.names() if registry.get(n).launcher])
def test_every_recipe_flag_says_what_it_does(target: str) -> None:
    """--relaunch-failed and every other flag of the recipe (recipes/04-train/<target>/run.py)."""
    from whileai.cli.recipe import recipe_parser

    t = registry.get(target)
    ap = recipe_parser(t, t.launcher, None)  # type: ignore[arg-type]
    flags = {a.option_strings[-1]: a.help for a in ap._actions if a.option_strings}
    assert "--relaunch-failed" in flags
    assert [f for f, h in flags.items() if not h] == []


README = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLES = sorted(str(p) for p in (ROOT / "examples").glob("*.toml"))


def test_readme_says_on_which_targets_the_examples_pass_strict() -> None:
    """Measured, not typed: the targets on which `whileai compile examples/*.toml --strict`
    passes are the ones the README names, and a target that refuses one names it."""
    passing, refusing = [], {}
    for name in registry.names():
        r = CliRunner().invoke(app, ["compile", *EXAMPLES, "--strict", "-t", name])
        if r.exit_code == 0:
            passing.append(name)
        else:
            refusing[name] = r.output
    assert "passes on both targets" not in README
    assert f"`whileai compile examples/*.toml --strict` passes on {' and '.join(passing)}" \
        in " ".join(README.split())
    for name, why in refusing.items():
        bad = next(p for p in EXAMPLES if p in why or f"examples/{p.rsplit('/', 1)[1]}" in why)
        rest = [f"examples/{p.rsplit('/', 1)[1]}" for p in EXAMPLES if p != bad]
        assert f"{name} 0.9.1 has no OPSD" in " ".join(README.split()) and "examples/opsd.toml" in bad
        assert CliRunner().invoke(app, ["compile", *[str(ROOT / p) for p in rest], "--strict",
                                        "-t", name]).exit_code == 0
        assert " ".join(rest) in README


def test_readme_says_which_tests_need_verl_and_how_to_run_them() -> None:
    text = " ".join(README.split())
    assert "WHILEAI_VERL_PYTHON=DIR/bin/python python -m pytest tests/targets/verl" in text
    assert "`whileai rehearse --setup DIR -t verl`" in text


def test_no_test_names_a_path_of_the_machine_that_built_whileai() -> None:
    import re

    named = [str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
             if re.search(r"/work/[A-Za-z]", p.read_text(encoding="utf-8"))]
    assert named == []


def test_check_is_described_for_every_target_that_checks_files() -> None:
    help_text = " ".join(CliRunner().invoke(app, ["check", "-h"]).output.split())
    for name in ("prime-rl", "TRL", "verl"):
        assert name in help_text
    row = next(line for line in README.splitlines() if line.startswith("| `whileai check"))
    assert "prime-rl" in row and "TRL" in row and "verl" in row
