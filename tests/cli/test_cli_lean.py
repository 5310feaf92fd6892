"""The lean path of the hot commands (whileai.cli.params.parse): for plain input it hands the
command exactly the arguments typer would; anything else it leaves to typer (None)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.commands import HOT
from whileai.cli.params import parse, typer_command

SPEC = str(EXAMPLES / "opsd.toml")
PLAIN = {  # command → argument lists the lean path reads
    "compile": [
        [SPEC], [SPEC, str(EXAMPLES / "grpo.toml")], [SPEC, "-b", "trl"], [SPEC, "--backend=trl"],
        ["--json", SPEC], [SPEC, "-o", "out"], [SPEC, "--out=out.toml", "--force"],
        [SPEC, "--set", "a.b=1", "--set=c.d[0]=x", "--strict"], [SPEC, "--plain"], [SPEC, "--rich"],
        [SPEC, "--no-force", "--no-check", "--cpu", "--no-strict"], [SPEC, "--check"],
    ],
    "explain": [[SPEC], [SPEC, "--backend", "trl", "--set", "a=1"]],
    "check": [["x.toml"], ["x.toml", "y.toml", "--entry", "rl"], ["--entry=trainer", "x.toml"]],
}
UNUSUAL = [  # typer reads these: help, errors, forms the lean reader does not take
    [], ["--help"], [SPEC, "--help"], [SPEC, "-b"], [SPEC, "--bogus"], [SPEC, "-x"], [SPEC, "--"],
    ["-"], [SPEC, "-otrl"], [SPEC, "-b", "trl", "-b", "prime-rl"], [SPEC, "--json=1"],
    [SPEC, "--plain", "--rich"], [SPEC, "-o", "--json"], [""], [SPEC, "-b="],
    [SPEC, "--check", "--no-check"],
]


def typer_kwargs(command: str, args: list[str]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    params, body = HOT[command]

    def record(**kwargs: Any) -> None:
        seen.update(kwargs)

    record.__doc__ = body.__doc__
    app = typer.Typer()
    app.command(command)(typer_command(params, record))
    app.callback()(lambda: None)
    r = CliRunner().invoke(app, [command, *args])
    assert r.exit_code == 0, r.output
    return seen


@pytest.mark.parametrize("command,args", [(c, a) for c, cases in PLAIN.items() for a in cases])
def test_lean_reads_what_typer_reads(command: str, args: list[str]) -> None:
    lean = parse(HOT[command][0], args)
    assert lean is not None
    expected = typer_kwargs(command, args)
    assert lean == expected
    assert {k: type(v) for k, v in lean.items()} == {k: type(v) for k, v in expected.items()}


@pytest.mark.parametrize("args", UNUSUAL)
def test_lean_leaves_the_unusual_to_typer(args: list[str]) -> None:
    assert parse(HOT["compile"][0], args) is None


def test_compile_imports_no_typer_or_rich(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = ("import sys\nfrom whileai.cli import main\n"
            f"sys.argv = ['whileai', 'compile', {SPEC!r}, '-o', {str(tmp_path)!r}]\nmain()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "opsd.toml").is_file()


def test_check_imports_no_pydantic() -> None:
    config = str(EXAMPLES.parent / "tests" / "golden" / "prime-rl" / "opsd.toml")
    code = ("import sys\nfrom whileai.cli import main\n"
            f"sys.argv = ['whileai', 'check', {config!r}]\nmain()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'typer', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("argv", [
    ["compile", str(EXAMPLES / "opd.toml"), "--json"], ["explain", str(EXAMPLES / "opd.toml")],
    ["compile", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opsd.toml")],
])
def test_lean_path_ends_quietly_on_a_closed_pipe(argv: list[str]) -> None:
    code = ("import os, sys\nr, w = os.pipe()\nos.close(r)\nos.dup2(w, 1)\n"
            f"sys.argv = ['whileai', *{argv!r}]\nfrom whileai.cli import main\nmain()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (0, "")


@pytest.mark.parametrize("argv,code", [
    (["compile", "no-such-spec.toml"], 2), (["check", "no-such-file.toml"], 2),
    (["compile", SPEC, "--backend", "nope"], 2), (["compile", SPEC, "--bogus"], 2),
])
def test_lean_path_exit_codes_are_typers(argv: list[str], code: int) -> None:
    r = subprocess.run([sys.executable, "-m", "whileai", *argv], capture_output=True, text=True)
    assert r.returncode == code and r.stderr.count("\n") >= 1 and "Traceback" not in r.stderr
