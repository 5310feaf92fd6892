"""Help and refusals a new user reads: plain help whose option names stay whole at 80 columns and
whose text is never read as rich markup or emoji; readable value names; one line for a missing
argument or file; --version; `whileai arms` on the bundled examples; the recipes' whole first
paragraph."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from helpers import EXAMPLES, ROOT
from typer.testing import CliRunner

from whileai.cli.app import app

runner = CliRunner()
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def cli(*args: str, width: int = 80) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": str(width)})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_help_keeps_option_names_whole_at_80_columns(name: str) -> None:
    code, out, _ = cli(name, "--help")
    assert code == 0, out
    words = set(re.split(r"[\s,]+", out))
    flags = [
        "--help",
        *(f for p in COMMANDS[name].params for f in (*p.opts, *p.secondary_opts) if f.startswith("-")),
    ]
    assert not [f for f in flags if f not in words]  # once `--student-api-key…`
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines())
    for typer_label in ("<list[", "<bool>", "<str>", "<path>", "<int", "{specs}", "{spec}"):
        assert typer_label not in out, typer_label
    assert not re.search("[\U0001f000-\U0001ffff\u2600-\u27bf]", out)  # no emoji
    assert "╭" not in out  # plain text, no rich panels


def test_the_list_of_commands_states_each_first_sentence_whole() -> None:
    code, out, _ = cli("--help")
    listed = " ".join(out.split("Commands:", 1)[1].split())
    assert code == 0 and "..." not in listed  # once "... print what it reads,..."
    assert "compile Compile run spec(s) for a target and print what it reads, ignores and warns" in listed
    assert "check Check files written by hand methods" in listed and "--version" in out


def test_help_text_is_never_read_as_markup_and_names_values() -> None:
    _, out, _ = cli("inspect", "--help")
    assert "steps A:B:S (first, last, stride)" in out  # rich once drew an emoji for :B:
    assert "--student-api-key-env TEXT" in out and "--top-k N" in out and "-o, --out PATH" in out
    assert "inspect [OPTIONS] [SPEC]\n" in out
    _, out, _ = cli("compile", "--help")
    assert "compile [OPTIONS] SPECS...\n" in out
    assert "--force / --no-force" in out and "[default: no-force]" not in out


@pytest.mark.parametrize(
    "args,line",
    [
        (["compile"], "error: missing argument SPECS...; run spec TOML file(s) (whileai compile --help)"),
        (["check"], "error: missing argument CONFIGS...; "),
        (["preflight"], "error: missing argument SPEC; "),
        (["inspect"], "error: missing argument SPEC; a spec file to inspect before training, or --run"),
        (["rehearse"], "error: missing argument CONFIG; a run spec or the target's own file"),
    ],
)
def test_a_missing_argument_is_one_line(args: list[str], line: str) -> None:
    code, out, err = cli(*args)
    assert code == 2 and err.count("\n") == 1 and err.startswith(line), err
    assert "None is not allowed" not in err


@pytest.mark.parametrize("args,line", [
    (["compile", "x.toml", "--bogus"], "error: No such option: --bogus"),
    (["inspect", "x.toml", "--top-k", "50"], "error: Invalid value for '--top-k'"),
    (["explain", "x.toml", "-b"], "error: Option '-b' requires an argument (whileai explain --help)"),
])
def test_a_usage_error_is_one_line(args: list[str], line: str) -> None:
    code, _, err = cli(*args)
    assert code == 2 and err.count("\n") == 1 and err.startswith(line), err  # once Usage:/Try/Error: lines


@pytest.mark.parametrize("command", ["compile", "explain", "check", "preflight", "inspect"])
def test_a_missing_file_says_no_such_file(command: str) -> None:
    code, _, err = cli(command, "nope.toml")
    assert code == 2 and "no such file: nope.toml" in err and "is not allowed" not in err, err


def test_version() -> None:
    from whileai.targets.prime_rl.pin import COMMIT
    from whileai.version import __version__

    code, out, _ = cli("--version")
    assert code == 0 and out.startswith(f"whileai {__version__} ") and COMMIT[:7] in out


def test_arms_without_arguments_plans_the_bundled_examples() -> None:
    code, out, err = cli("arms", width=120)
    assert code == 0, err
    arms = [line.split()[0] for line in out.splitlines()[1:5]]
    assert arms == sorted(p.stem for p in EXAMPLES.glob("*.toml"))


def test_arms_finds_the_examples_of_the_clone_it_runs_in(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    import shutil

    from whileai.cli import pairs

    monkeypatch.setattr(pairs, "EXAMPLES", tmp_path / "site-packages" / "examples")  # `pip install .`
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("arms")
    assert code == 2 and err.startswith("error: SPEC: none given; spec files, one per arm"), err
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    code, out, err = cli("arms", width=120)
    assert code == 0 and out.startswith("arm "), err


def test_check_refuses_an_empty_file(tmp_path: Path) -> None:
    for text in ("", "\n# nothing yet\n"):
        f = tmp_path / "rl.toml"
        f.write_text(text)
        code, out, err = cli("check", str(f))
        assert code == 2 and "empty file" in err and "ok:" not in out, (out, err)


@pytest.mark.parametrize("recipe", ["trl", "prime-rl"])
def test_recipe_help_states_its_whole_first_paragraph(recipe: str) -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "recipes/04-train" / recipe / "run.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80"),
    )
    description = r.stdout.split("\n\n")[1]
    assert r.returncode == 0 and "by default every bundled" in " ".join(description.split())
    assert description.rstrip().endswith(")."), description  # a whole sentence, not "...every bundled"
