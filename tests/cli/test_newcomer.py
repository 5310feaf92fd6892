"""What a new user met (issue 30, point 11): each refusal says what to do instead, a count of
one reads in the singular, and no line says the same thing twice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT
from typer.testing import CliRunner

from whileai.cli.app import app


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize(("target", "key", "field"), [
    ("prime-rl", "lora=false", "lora"), ("trl", "lora=false", "lora"),
    ("prime-rl", "steps=5", "steps"), ("prime-rl", "samples=2", "method.samples"),
    ("trl", "eval.interval=5", "eval.interval"),
])
def test_a_spec_field_given_to_set_is_named_as_one(target: str, key: str, field: str) -> None:
    code, _, err = cli("compile", str(EXAMPLES / "opd.toml"), "-b", target, "--set", key)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{field} is a spec field: set it in the spec; --set takes the target's own keys" in err


def test_compile_on_a_prime_rl_config_points_to_check() -> None:
    config = ROOT / "tests" / "golden" / "prime-rl" / "grpo.toml"
    code, _, err = cli("compile", str(config))
    assert code == 2 and "taskset: missing" not in err and f"whileai check {config}" in err
    assert "'trainer'" in err and "no spec fields" in err


def test_a_trl_run_named_like_a_file_is_refused(tmp_path: Path) -> None:
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), "-b", "trl", "-o",
                       str(tmp_path / "run.toml"))
    assert code == 2 and "a TRL run is a folder" in err and "not a .toml file" in err
    assert not (tmp_path / "run.toml").exists()


def test_one_reads_in_the_singular(tmp_path: Path) -> None:
    spec = tmp_path / "one.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "m/x"\nprompts = 1\n[method]\ntype = "opd"\n'
                    'samples = 1\nteacher = "vllm:m/t@http://localhost:8001/v1"\n')
    for target in ("prime-rl", "trl"):
        code, out, err = cli("compile", str(spec), "-b", target)
        assert code == 0, err
        assert not re.search(r"(?<![\d.])1 (rollouts|samples|prompts|generations|rows|traces)\b", out), out
    code, out, _ = cli("compile", str(spec))
    assert "x 1 prompt x 1 rollout = 1 rollout per step" in out and "1 prompt x 1 sample)" in out


def test_the_opsd_renderer_reason_is_said_once() -> None:
    code, out, _ = cli("compile", str(EXAMPLES / "opsd.toml"))
    line = " ".join(out.split())
    assert code == 0 and line.count("is named as a fine-tune of") == 1
    assert "the same as orchestrator.renderer" in line
