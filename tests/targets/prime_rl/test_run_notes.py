"""Reads and notes that are true at run time: prime-rl SFT's max_off_policy_steps has no effect
(teacher-sampled traces never go stale) and its temperature also divides the student's logits;
OPSD's default template says what the taskset's privileged field holds; a two-stage run's
stage 2 (after an SFT cold start) gets no sft-cold-start warning on the stage-1 weights."""

from __future__ import annotations

import tomllib

import whileai as wai

T = wai.Endpoint(url="http://localhost:8001/v1", model="Qwen/Qwen3-8B")


def test_prime_rl_sft_ignores_max_off_policy_steps() -> None:
    run = wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.SFT(T, temperature=0.7))
    c = wai.compile(run, "prime-rl")
    ignored = {i.field: i.reason for i in c.ignores}
    assert "never goes stale" in ignored["max_off_policy_steps"]
    assert "max_off_policy_steps" not in tomllib.loads(c.text)["orchestrator"]
    assert "max_off_policy_steps has no effect" in c.header()[1]
    note = next(r.note for r in c.reads if r.field == "temperature")
    assert "divides the student's logits by 0.7 in the cross-entropy" in note
    opd = wai.compile(run.model_copy(update={"method": wai.OPD(T)}), "prime-rl")
    assert tomllib.loads(opd.text)["orchestrator"]["max_off_policy_steps"] == 8


def test_opsd_template_says_what_gsm8k_answer_is() -> None:
    gsm = tomllib.loads(wai.compile(wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-8B",
                                                method=wai.OPSD()), "prime-rl").text)
    template = gsm["orchestrator"]["algo"]["template"]
    assert "reference solution" not in template and "final answer" in template
    assert "{demonstration}" in template
    rev = tomllib.loads(wai.compile(wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-8B",
                                                method=wai.OPSD()), "prime-rl").text)
    assert rev["orchestrator"]["algo"]["template"].startswith("A reference solution")  # it is one
    own = wai.OPSD(template="Hint: {demonstration}")
    mine = tomllib.loads(wai.compile(wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-8B",
                                                 method=own), "prime-rl").text)
    assert mine["orchestrator"]["algo"]["template"] == "Hint: {demonstration}"


def test_stage_two_after_sft_gets_no_cold_start_warning() -> None:
    r1 = wai.Endpoint(url="http://localhost:8001/v1", model="deepseek-ai/DeepSeek-R1-Distill-Qwen-32B")
    run = wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", lora=False, method=wai.SFT(r1),
                      then=wai.Stage(method=wai.OPD(r1)))
    for backend in ("prime-rl",):
        c = wai.compile(run, backend)
        assert "sft-cold-start" not in {w.rule for w in c.warnings}
        assert "sft-cold-start" not in {w.rule for w in c.stages[1].warnings}
    alone = wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.OPD(r1))
    assert "sft-cold-start" in {w.rule for w in wai.compile(alone, "prime-rl").warnings}
