"""A method setting the target cannot honour is a warning with an id (what was asked, what will
run); no rule fires on a field the target ignores; --strict makes every warning an error (CLI,
API, recipes): exit 2, one line, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError

T = wai.Endpoint(url="http://localhost:8001/v1", model="Qwen/Qwen3-8B")


def opd(taskset: str = "gsm8k", **method: object) -> wai.RunSpec:
    return wai.RunSpec(taskset=taskset, model="Qwen/Qwen3-1.7B", method=wai.OPD(T, **method))  # type: ignore[arg-type]


def rules(c: wai.Compiled) -> dict[str, str]:
    return {w.rule: w.message for w in c.warnings}


@pytest.mark.parametrize(("target", "divergence", "honoured"), [
    ("prime-rl", "forward_kl", False), ("prime-rl", "jsd", False), ("verl", "forward_kl", True),
    ("verl", "jsd", False), ("trl", "forward_kl", True), ("trl", "jsd", True),
])
def test_a_divergence_a_target_cannot_train_is_refused_on_every_target(
        target: str, divergence: str, honoured: bool) -> None:
    """One policy per mistake (issue 40 item 10): a divergence the target cannot train exits 2
    naming the field and a target that trains it, on every target (prime-rl used to warn and
    train reverse KL, verl refused); one it can train compiles with no divergence warning."""
    run = opd("reverse-text", divergence=divergence)
    if not honoured:
        with pytest.raises(SpecError) as e:
            wai.compile(run, target)
        assert e.value.field == "method.divergence" and "compile" in str(e.value)
        assert "trl" in str(e.value).split("compile", 1)[1]
        return
    assert "divergence-not-honoured" not in rules(wai.compile(run, target))


def test_prime_rl_refuses_a_source_divergence_it_cannot_train() -> None:
    run = wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-1.7B", method=wai.GRPO(),
                      sources=[{"taskset": "gsm8k", "method": {"type": "opsd", "divergence": "jsd"}}])  # type: ignore[list-item]
    with pytest.raises(SpecError) as e:
        wai.compile(run, "prime-rl")
    assert e.value.field == "sources[0].method.divergence"
    assert "divergence-not-honoured" not in rules(wai.compile(opd(), "prime-rl"))


def test_trl_beta_override_turns_reverse_kl_into_jsd() -> None:
    run = wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-1.7B", method=wai.OPD(T),
                      overrides={"beta": 0.5})
    msg = rules(wai.compile(run, "trl"))["divergence-not-honoured"]
    assert "'reverse_kl'" in msg and "JSD (beta 0.5)" in msg
    assert "divergence-not-honoured" not in rules(wai.compile(opd("reverse-text"), "trl"))
    jsd = opd("reverse-text", divergence="jsd")
    assert "divergence-not-honoured" not in rules(wai.compile(jsd, "trl"))


def test_no_rule_fires_on_a_field_the_target_ignores() -> None:
    c = wai.compile(opd(top_k=4), "prime-rl")  # prime-rl has no top-k: top_k is an ignore
    assert "top_k" in {i.field for i in c.ignores} and "top-k-small" not in rules(c)
    from whileai.rules.facts import Facts
    from whileai.rules.research import RULES

    r = next(r for r in RULES if r.id == "top-k-small")
    assert r(opd(top_k=4), Facts()) is not None and r(opd(top_k=4), Facts(ignored=("top_k",))) is None


@pytest.mark.parametrize("target", ["prime-rl", "trl"])
def test_both_targets_pass_their_ignores_to_the_rules(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule that reads a field the target ignores never fires, on TRL as on prime-rl: TRL ignores
    max_off_policy_steps (synchronous) and top_k (a sampling filter only); prime-rl ignores top_k."""
    from whileai.rules import research
    from whileai.rules.base import Rule

    probes = [Rule(f"probe-{f}", "always", "test", lambda r, f: "fires", (f,))
              for f in ("method.top_k", "max_off_policy_steps", "method.learning_rate")]
    monkeypatch.setattr(research, "RULES", research.RULES + probes)
    c = wai.compile(opd("reverse-text", top_k=4).model_copy(update={"max_off_policy_steps": 2}), target)
    ignored = {i.field for i in c.ignores}
    fired = {w.rule for w in c.warnings if w.rule.startswith("probe-")}
    assert "top_k" in ignored and "probe-method.top_k" not in fired
    assert "probe-method.learning_rate" in fired  # a field the target reads: the probe fires
    assert ("probe-max_off_policy_steps" in fired) == ("max_off_policy_steps" not in ignored)
    if target == "trl":
        assert "max_off_policy_steps" in ignored


def test_strict_turns_warnings_into_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "fkl.toml"
    spec.write_text('taskset = "gsm8k"\nmodel = "Qwen/Qwen3-1.7B"\n[method]\ntype = "opd"\n'
                    'teacher = "vllm:Qwen/Qwen3-8B@http://localhost:8001/v1"\n')  # needs-grpo-arm
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["compile", str(spec), "-o", str(out), "--strict"])
    assert r.exit_code == 2 and not out.exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --strict: warning [")
    assert CliRunner().invoke(app, ["compile", str(spec), "-o", str(out)]).exit_code == 0
    with pytest.raises(SpecError, match="--strict: warning"):
        wai.compile(opd(), "prime-rl", strict=True)
    grpo = wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.GRPO(), steps=100)
    assert wai.compile(grpo, "prime-rl", strict=True).warnings == ()


def test_the_recipe_takes_strict(tmp_path: Path) -> None:
    """A warning no spec accepts stops the recipe before anything is written (the bundled arms
    pass: tests/rules/test_accept.py)."""
    spec = tmp_path / "fkl.toml"
    text = (ROOT / "examples" / "opd.toml").read_text()
    spec.write_text("\n".join(x for x in text.splitlines() if not x.startswith("teacher-ceiling")))
    recipe = ROOT / "recipes" / "04-train" / "prime-rl" / "run.py"
    p = subprocess.run([sys.executable, str(recipe), "--dry-run", "--strict", "--out", str(tmp_path),
                        "--arms", f"grpo,{spec}"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "--strict: warning [teacher-ceiling]" in p.stderr
    assert not (tmp_path / "rt").exists()


@pytest.mark.parametrize(("target", "key"), [
    ("prime-rl", "trainer.optim.lr"), ("trl", "learning_rate"),
])
def test_an_override_of_the_learning_rate_is_judged_as_written(target: str, key: str) -> None:
    """`--set trainer.optim.lr=1e-2` on a LoRA OPD run wrote 1e-2, listed learning_rate as
    'ignored' and so kept lora-lr-high quiet: --strict passed a run at the SFT rate."""
    run = opd("reverse-text").model_copy(update={"overrides": {key: 1e-2}})
    assert "lora-lr-high" in rules(wai.compile(run, target))
    low = opd("reverse-text").model_copy(update={"overrides": {key: 1e-4}})
    assert "lora-lr-high" not in rules(wai.compile(low, target))


@pytest.mark.parametrize(("target", "key"), [
    ("prime-rl", "orchestrator.train.sampling.temperature"), ("trl", "temperature"),
])
def test_an_override_of_the_temperature_is_judged_as_written(target: str, key: str) -> None:
    run = opd("reverse-text").model_copy(update={"overrides": {key: 0.6}})
    assert "temperature 0.6 != 1.0" in rules(wai.compile(run, target))["temperature-off-policy"]
