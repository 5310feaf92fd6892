"""Derived values follow overrides: an override of the sampling cap alone would leave seq_len, the
teacher's max_model_len and the cost at the old cap, so it is refused with the spec field to
change; changing that field re-derives every one of them."""

from __future__ import annotations

import pytest
import tomllib
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError

T = wai.Endpoint(url="http://localhost:8001/v1", model="Qwen/Qwen3-32B")


def run(max_tokens: int = 8192, **fields: object) -> wai.RunSpec:
    return wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", lora=False,
                       method=wai.OPD(T, max_tokens=max_tokens), **fields)  # type: ignore[arg-type]


def test_the_cap_override_is_refused_naming_the_spec_field(tmp_path: object) -> None:
    with pytest.raises(SpecError) as e:
        wai.compile(run(overrides={"orchestrator.train.sampling.max_completion_tokens": 4096}), "prime-rl")
    assert e.value.field == "overrides.orchestrator.train.sampling.max_completion_tokens"
    assert "set method.max_tokens = 4096" in str(e.value) and "seq_len" in str(e.value)
    r = CliRunner().invoke(app, ["compile", "examples/opd.toml", "--set",
                                 "orchestrator.train.sampling.max_completion_tokens=4096"])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1


def test_the_spec_field_re_derives_everything() -> None:
    c = wai.compile(run(4096), "prime-rl")
    doc = tomllib.loads(c.text)
    assert doc["seq_len"] == 2048 + 4096
    assert doc["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 4096
    teacher = tomllib.loads(c.files["opd.teacher.toml"])
    assert teacher["vllm"]["max_model_len"] == 2048 + 4096 + 1  # seq_len + 1: it scores
    assert c.cost is not None and c.cost.tokens_per_rollout == 2048 + 4096


@pytest.mark.parametrize("target", ["prime-rl", "trl"])
def test_an_override_of_a_derived_key_names_the_spec_value_it_replaced(target: str) -> None:
    """The ignore shows the spec field's own value (prompt_tokens=2048), not the value whileai
    derived from it for the key (seq_len 10240), which the reason names. (A seq_len below
    prompt_tokens + max_tokens is refused: tests/targets/test_story.py.)"""
    if target == "prime-rl":
        remote = wai.Endpoint(url="https://teacher.example.com/v1", model="Qwen/Qwen3-32B")  # not served
        method = wai.OPD(remote, max_tokens=8192)
        spec = run(overrides={"seq_len": 16384}).model_copy(update={"method": method})
        c = wai.compile(spec, target)
        got = {i.field: i for i in c.ignores}["prompt_tokens"]
        assert got.value == 2048 and "whileai wrote 10240 there" in got.reason
    else:
        spec = wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-1.7B", prompts=16,
                           method=wai.GRPO(samples=4), overrides={"per_device_train_batch_size": 4})
        c = wai.compile(spec, target)
        got = {i.field: i for i in c.ignores}["prompts"]
        assert got.value == 16 and "whileai wrote" in got.reason
