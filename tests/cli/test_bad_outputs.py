"""Every bad output path is one line and exit 2 naming the path as typed (never a temporary
file), checked before any expensive work; with several specs every error names its spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.app import app

runner = CliRunner()
BAD_SPEC = ('taskset = "reverse-text"\nmodel = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'
            '[method]\ntype = "grpo"\nsampels = 3\n')


def cli(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": "100"})
    return r.exit_code, r.stdout, r.stderr


def one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("args,typed", [
    (["compile", str(EXAMPLES / "opd.toml"), "-o", "/proc/foo.toml"], "/proc/foo.toml"),
    (["compile", str(EXAMPLES / "opd.toml"), "-b", "trl", "-o", "/proc/run"], "/proc/run"),
    (["arms", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opd.toml"), "-o", "/proc/x"], "/proc/x"),
])
def test_an_unwritable_output_names_the_typed_path(args: list[str], typed: str) -> None:
    code, out, err = cli(*args)
    line = one_line(err)
    assert code == 2 and f"'{typed}'" in line and ".tmp" not in line and "whileai-" not in line


def test_inspect_checks_its_output_before_loading_any_model(tmp_path: Path) -> None:
    code, _, err = cli("inspect", str(EXAMPLES / "opd.toml"), "--local-student", str(tmp_path),
                       "--local-teacher", str(tmp_path), "-o", "/proc/x")
    assert code == 2 and one_line(err).startswith("error: --out: '/proc/x'")


def test_several_specs_name_the_spec_of_each_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_SPEC)
    for args in (["compile", str(EXAMPLES / "opd.toml"), str(bad)],
                 ["explain", str(EXAMPLES / "opd.toml"), str(bad)],
                 ["arms", str(EXAMPLES / "grpo.toml"), str(bad)]):
        code, _, err = cli(*args)
        assert code == 2 and one_line(err).startswith(f"error: {bad}: method.sampels"), args
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opd.toml"), "-b", "trl",
                       "--set", "nonsense_key=1")
    assert code == 2 and one_line(err).startswith(f"error: {EXAMPLES / 'grpo.toml'}: overrides.")
    code, _, err = cli("compile", str(bad))  # one spec: the message as before
    assert code == 2 and one_line(err).startswith("error: method.sampels")
