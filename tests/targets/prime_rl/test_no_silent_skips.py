"""Nothing is skipped in silence: a loader rule that crashes is one internal-error line naming
the rule (exit 2) for `check` and `compile`, the same in tests as for users (no environment
flag); and `--cpu`, which only TRL reads, is refused for prime-rl."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.spec.load import load_spec
from whileai.targets.prime_rl.check import check_document
from whileai.targets.prime_rl.loader.rl import RL
from whileai.targets.prime_rl.loader.view import LoaderRule, RuleCrash

runner = CliRunner()


def _crash(_: object) -> None:
    raise KeyError("orchestrator.batch_size")


def crashing_rule(monkeypatch: pytest.MonkeyPatch) -> str:
    """An rl rule with a bug: it raises on every document, however valid."""
    monkeypatch.setattr(RL, "rules", [*RL.rules, LoaderRule("test-crash", "rl.py:1", _crash)])
    return "RLConfig: test-crash"


def _compiled_toml(tmp_path: Path) -> Path:
    out = tmp_path / "grpo.toml"
    wai.compile(load_spec(EXAMPLES / "grpo.toml"), "prime-rl", out=out)
    return out


def test_check_says_which_rule_crashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _compiled_toml(tmp_path)  # a valid file, written before the rule breaks
    crashing_rule(monkeypatch)
    r = runner.invoke(app, ["check", str(cfg)], env={"COLUMNS": "200"})
    assert r.exit_code == 2, r.output
    assert not isinstance(r.exception, KeyError)  # no traceback
    lines = [line for line in r.stderr.splitlines() if "internal error" in line]
    assert len(lines) == 1 and "'RLConfig: test-crash' (rl.py:1)" in lines[0], r.stderr
    assert "KeyError" in lines[0] and "whileai bug" in lines[0]
    assert "ok:" not in r.stdout


def test_compile_says_which_rule_crashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rule = crashing_rule(monkeypatch)
    with pytest.raises(RuleCrash, match="test-crash") as e:
        wai.compile(load_spec(EXAMPLES / "grpo.toml"), "prime-rl")
    assert e.value.rule == rule and isinstance(e.value, SpecError)
    out = tmp_path / "grpo.toml"
    r = runner.invoke(app, ["compile", str(EXAMPLES / "grpo.toml"), "-o", str(out)])
    assert r.exit_code == 2 and not isinstance(r.exception, KeyError)
    assert r.stderr.count("\n") == 1 and rule in r.stderr and "internal error" in r.stderr
    assert not out.exists()  # nothing written


def test_a_rule_meeting_a_value_the_schema_rejects_steps_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand-written value of the wrong type: the schema names it, and a rule that cannot judge
    it steps aside (the only skip, and the user sees the schema's problem)."""
    def wrong_type(view: object) -> None:
        raise TypeError("'<' not supported between instances of 'str' and 'int'")

    monkeypatch.setattr(RL, "rules", [*RL.rules, LoaderRule("test-type", "rl.py:1", wrong_type)])
    problems = check_document({"deployment": {"num_infer_gpus": "two"}}, entry="rl")
    assert any(p.path == "deployment" and "'two'" in p.message for p in problems), problems
    with pytest.raises(RuleCrash, match="test-type"):  # a file the schema accepts: a bug
        wai.compile(load_spec(EXAMPLES / "grpo.toml"), "prime-rl")


def test_cpu_is_refused_for_prime_rl(tmp_path: Path) -> None:
    run = load_spec(EXAMPLES / "grpo.toml")
    with pytest.raises(SpecError, match="--cpu applies to trl only"):
        wai.compile(run, "prime-rl", cpu=True)
    out = tmp_path / "grpo.toml"
    r = runner.invoke(app, ["compile", str(EXAMPLES / "grpo.toml"), "--cpu", "-o", str(out)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    assert "--cpu applies to trl only" in r.stderr and not out.exists()
    r = runner.invoke(app, ["arms", str(EXAMPLES / "grpo.toml"), "--cpu"])
    assert r.exit_code == 2 and "--cpu applies to trl only" in r.stderr
    assert wai.compile(run, "trl", cpu=True).files  # TRL reads it
