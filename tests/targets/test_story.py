"""One story per file (whileai.targets.story): an override that contradicts its spec is refused
with one line naming the override and the spec field to set instead; one that does not is
carried, and the header, the reads and the file agree."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
import yaml
from helpers import EXAMPLES, STUDENT
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError

OPD = EXAMPLES / "opd.toml"
GRPO = EXAMPLES / "grpo.toml"
FULL = ('taskset = "reverse-text"\nmodel = "' + STUDENT + '"\nsteps = 100\nlora = false\n'
        '[method]\ntype = "grpo"\n[eval]\nenabled = false\n[checkpoint]\nenabled = false\n')


def refused(spec: Path, *sets: str, target: str = "prime-rl") -> str:
    r = CliRunner().invoke(app, ["compile", str(spec), "-b", target, *(a for s in sets
                                                                        for a in ("--set", s))])
    assert r.exit_code == 2, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output
    return r.stderr


@pytest.fixture
def full(tmp_path: Path) -> Path:
    spec = tmp_path / "full.toml"
    spec.write_text(FULL)
    return spec


@pytest.mark.parametrize(("key", "value", "fix"), [
    ("trainer.model.lora.rank", "8", "lora = true"),  # the first example
    ("trainer.model.lora.alpha", "16", "lora = true"),
    ("orchestrator.model.lora.name", "'a'", "lora = true"),
    ("inference.vllm.max_lora_rank", "8", "lora = true"),
    ("ckpt.interval", "5", "[checkpoint] enabled = true"),
    ("trainer.ckpt.interval", "5", "[checkpoint] enabled = true"),
    ("orchestrator.eval.interval", "5", "[eval] enabled = true"),
])
def test_a_key_the_spec_turns_off_is_refused(full: Path, key: str, value: str, fix: str) -> None:
    err = refused(full, f"{key}={value}")
    assert f"overrides.{key}" in err and f"set {fix}" in err and "writes no" in err


@pytest.mark.parametrize(("key", "value", "says"), [
    ("inference.vllm.enable_lora", "false", "set lora = false in the spec instead"),
    ("trainer.model.lora.rank", "64", "set lora_rank = 64 in the spec instead"),
    ("orchestrator.group_size", "8", "set samples = 8 in the spec instead"),
    ("max_steps", "10", "set steps = 10 in the spec instead"),
    ("model.name", "'Qwen/Qwen3-8B'", 'set model = "Qwen/Qwen3-8B" in the spec instead'),
])
def test_a_key_another_follows_is_refused_naming_the_spec_field(key: str, value: str, says: str) -> None:
    err = refused(OPD, f"{key}={value}")
    assert f"overrides.{key}" in err and says in err and "whileai derives" in err


def test_the_rank_names_what_would_go_stale() -> None:
    err = refused(OPD, "trainer.model.lora.rank=64")
    assert "inference.vllm.max_lora_rank" in err and "orchestrator.model.lora.name" in err


@pytest.mark.parametrize("value", [512, 10239])
def test_seq_len_below_the_caps_is_refused(value: int) -> None:
    err = refused(OPD, f"seq_len={value}")
    assert "at least 10240" in err and "prompt_tokens + the longest max_tokens = 2048 + 8192" in err
    assert "set prompt_tokens" in err


def test_what_the_spec_agrees_with_is_carried_and_said() -> None:
    """A learning rate, a renderer, a batch prime-rl can split, a LoRA alpha:
    nothing whileai derives moves, so they are carried, and the header says the file's values."""
    from whileai.spec.load import load_spec

    spec = load_spec(OPD)
    over = {"trainer.optim.lr": 1e-5, "orchestrator.renderer.name": "qwen3",
            "orchestrator.batch_size": 128, "trainer.model.lora.alpha": 16}
    c = wai.compile(spec.model_copy(update={"overrides": over}), "prime-rl")
    doc = tomllib.loads(c.text)
    assert doc["trainer"]["optim"]["lr"] == 1e-5  # (a longer seq_len: tests/targets/prime_rl/test_servers.py)
    assert "32 prompts x 4 rollouts = 128 rollouts per step" in c.header()[1]
    assert "LoRA rank 32" in c.header()[0] and doc["trainer"]["model"]["lora"]["rank"] == 32


def test_the_same_value_as_the_spec_is_no_contradiction() -> None:
    r = CliRunner().invoke(app, ["compile", str(OPD), "--set", "max_steps=100"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(("spec", "key", "value", "says"), [
    ("grpo", "use_peft", "false", "set lora = false in the spec instead"),
    ("grpo", "num_generations", "4", "set samples = 4 in the spec instead"),
    ("grpo", "max_steps", "10", "set steps = 10 in the spec instead"),
    ("sft", "max_length", "100", "at least 6144 (prompt_tokens + max_tokens)"),
    ("sft", "seed", "7", "set seed = 7 in the spec instead"),  # sample.py --seed follows it
    ("opd", "teacher_model_name_or_path", "'Qwen/Qwen3-8B'", "set teacher.model = "),
])
def test_trl_overrides_that_contradict_the_spec_are_refused(spec: str, key: str, value: str,
                                                            says: str) -> None:
    err = refused(EXAMPLES / f"{spec}.toml", f"{key}={value}", target="trl")
    assert f"overrides.{key}" in err and says in err


@pytest.mark.parametrize(("key", "value"), [("lora_r", "8"), ("save_steps", "5"), ("eval_steps", "5")])
def test_trl_keys_the_spec_turns_off_are_refused(full: Path, key: str, value: str) -> None:
    err = refused(full, f"{key}={value}", target="trl")
    assert f"overrides.{key}" in err and "writes no" in err


def test_trl_carries_what_agrees() -> None:
    from whileai.spec.load import load_spec

    spec = load_spec(GRPO).model_copy(update={"overrides": {"learning_rate": 1e-5, "lora_alpha": 8}})
    c = wai.compile(spec, "trl")
    doc = yaml.safe_load(c.files["config.yaml"].split("\n\n", 1)[1])
    assert doc["learning_rate"] == 1e-5 and doc["lora_alpha"] == 8


def test_the_api_raises_the_same() -> None:
    from whileai.spec.load import load_spec

    spec = load_spec(OPD).model_copy(update={"overrides": {"seq_len": 512}})
    with pytest.raises(SpecError) as e:
        wai.compile(spec, "prime-rl")
    assert e.value.field == "overrides.seq_len"
