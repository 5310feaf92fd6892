"""The seed snippet runs as written, and the Python API raises one exception type."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

import whileai as wai


def test_seed_snippet_as_written(chdir_tmp: Path) -> None:
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
    opd = wai.OPD(teacher)
    opsd = wai.OPSD(privileged="answer")
    grpo = wai.GRPO()
    cfg = wai.prime_rl_config("reverse-text", opsd, model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT",
                              out="opsd.toml")
    text = str(cfg)
    lines = text.splitlines()
    assert lines[0] == "prime-rl config: opsd.toml"
    assert lines[1].startswith("  shape: 2 GPUs on 1 node")  # the first screen, then the detail
    at = lines.index("  detail:")
    assert "method opsd, model PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT, taskset reverse-text, " \
           "2 GPUs (1 inference GPU, 1 trainer GPU)" in lines[at + 1]
    assert lines[at + 2].startswith("  100 steps x 64 prompts x 1 rollout =")
    assert "privileged -> orchestrator.algo.demo_key = 'answer'" in text
    assert "learning_rate -> trainer.optim.lr = 5e-06" in text
    assert "  ignores:" in lines and "anchor='ema:0.01': prime-rl opsd scores against the live policy" in text
    assert lines[-2:] == ["  run:", "    uv run rl @ opsd.toml"]
    assert tomllib.loads(Path("opsd.toml").read_text())["orchestrator"]["algo"]["type"] == "opsd"
    for m in (opd, grpo):
        assert wai.prime_rl_config("reverse-text", m, model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT",
                                   out=f"{m.type}.toml").out == f"{m.type}.toml"
    assert opd.top_k == 32 and opd.samples == 4 and opd.max_tokens == 8192 and opsd.samples == 1


def test_endpoint_string_form_and_method_strings() -> None:
    assert wai.OPD("vllm:a/b@http://h:9000/v1").teacher == wai.Endpoint(url="http://h:9000/v1", model="a/b")
    c = wai.prime_rl_config("reverse-text", "grpo", model="Qwen/Qwen3-0.6B")
    assert c.run.method == wai.GRPO()


@pytest.mark.parametrize("make,field", [
    (lambda: wai.OPD("vllm:a/b@http://h:1/v1", samples=0), "samples"),
    (lambda: wai.OPD("vllm:a/b@http://h:1/v1", top_k=0), "top_k"),
    (lambda: wai.GRPO(temperature=3.0), "temperature"),
    (lambda: wai.OPSD(template="no placeholder"), "template"),
    (lambda: wai.Endpoint(url="http://user:pw@h/v1", model="m"), "url"),
    (lambda: wai.prime_rl_config("reverse-text", wai.GRPO(), model="m", gpus=1), "gpus"),
    (lambda: wai.prime_rl_config("reverse-text", wai.GRPO(), model="m", prompts=0), "prompts"),
    (lambda: wai.prime_rl_config("reverse-text", wai.GRPO(), model="m",
                                 overrides={"trainer.optim.lrr": 1.0}), "overrides.trainer.optim.lrr"),
])
def test_api_raises_one_value_error_type(make, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(wai.SpecError) as info:
        make()
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(f"{field}:")


def test_specs_are_frozen() -> None:
    g = wai.GRPO()
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        g.samples = 3  # type: ignore[misc]
