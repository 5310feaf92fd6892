"""Every warning rule fires on its condition and stays quiet without it."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import STUDENT

import whileai as wai
from whileai.rules.facts import Facts
from whileai.rules.research import family, size_b
from whileai.targets import registry

T = "http://localhost:8001/v1"
RULES = registry.rules()  # the shared rules, then each target's own


def opd(teacher: str = "Qwen/Qwen3-8B", **kw: Any) -> wai.OPD:
    return wai.OPD(wai.Endpoint(url=T, model=teacher), **kw)


def sft(teacher: str = "Qwen/Qwen3-8B", **kw: Any) -> wai.SFT:
    return wai.SFT(wai.Endpoint(url=T, model=teacher), **kw)


def run(method: Any, model: str = "Qwen/Qwen3-1.7B-Instruct", **kw: Any) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=model, method=method, **kw)


# rule id → (run, facts) that fire it, (run, facts) that do not
CASES: dict[str, tuple[tuple[wai.RunSpec, dict], tuple[wai.RunSpec, dict]]] = {
    "tokenizer-mismatch": ((run(opd("meta-llama/Llama-3.1-8B-Instruct")), {}), (run(opd()), {})),
    "top-k-small": ((run(opd(top_k=1)), {}), (run(opd(top_k=32)), {})),
    "top-k-no-nucleus": ((run(opd()), {"support_top_k": 32, "top_p": 1.0}),
                         (run(opd()), {"support_top_k": None, "top_p": 1.0})),
    "sampled-token-top-p": ((run(opd()), {"estimator": "sampled_token", "top_p": 0.9}),
                            (run(opd()), {"estimator": "sampled_token", "top_p": 1.0})),
    "max-tokens-long": ((run(opd(max_tokens=16384)), {}), (run(opd(max_tokens=8192)), {})),
    "sft-cold-start": ((run(opd(), model="Qwen/Qwen3-1.7B-Base"), {}), (run(opd()), {})),
    "teacher-ceiling": ((run(opd("Qwen/Qwen3-1.7B"), model="Qwen/Qwen3-1.7B-SFT"), {}),
                        (run(opd("Qwen/Qwen3-8B")), {})),
    "opsd-thinking-model": ((run(wai.OPSD(), model="Qwen/Qwen3-8B"), {}),
                            (run(wai.OPSD(), model="Qwen/Qwen3-4B-Instruct-2507"), {})),
    "opsd-small-model": ((run(wai.OPSD(), model=STUDENT), {}),
                         (run(wai.OPSD(), model="Qwen/Qwen3-14B-Instruct"), {})),
    "opsd-unanchored": ((run(wai.OPSD()), {"anchor": "live"}), (run(wai.OPSD()), {"anchor": "ema"})),
    "opsd-long-run": ((run(wai.OPSD(), steps=1000), {}), (run(wai.OPSD(), steps=100), {})),
    "lora-lr-high": ((run(opd(learning_rate=1e-3)), {}), (run(opd(learning_rate=1e-4)), {})),
    "support-truncated": ((run(opd()), {"support_top_k": 32}), (run(opd()), {"support_top_k": None})),
    "needs-grpo-arm": ((run(wai.OPSD()), {}), (run(wai.GRPO()), {})),
    "temperature-off-policy": ((run(opd(temperature=0.7)), {}), (run(opd(temperature=1.0)), {})),
    "lora-rank-low": ((run(opd(), lora_rank=8), {}), (run(opd(), lora_rank=64), {})),
    "eval-never-runs": ((run(wai.GRPO()), {"eval_interval": 25, "steps": 5}),
                        (run(wai.GRPO()), {"eval_interval": 5, "steps": 5})),
    "divergence-not-honoured": ((run(opd(divergence="forward_kl")), {"divergence": "reverse_kl"}),
                                (run(opd()), {"divergence": "reverse_kl"})),
    "eval-skips-final-step": ((run(wai.GRPO()), {"eval_interval": 30, "steps": 100}),
                              (run(wai.GRPO()), {"eval_interval": 25, "steps": 100})),
    "shared-filesystem": ((run(wai.GRPO()), {"on_slurm": True, "nodes": 2, "output_dir": "outputs"}),
                          (run(wai.GRPO()), {"on_slurm": True, "nodes": 1, "output_dir": "outputs"})),
    "slurm-partition-default": ((run(wai.GRPO()), {"on_slurm": True, "slurm_partition": None}),
                                (run(wai.GRPO()), {"on_slurm": True, "slurm_partition": "gpu"})),
    "engine-too-small": ((run(wai.GRPO()), {"engine_tp": 1, "engine_need": 2}),
                         (run(wai.GRPO()), {"engine_tp": 2, "engine_need": 2})),
    "holdout-is-training-data": (
        (run(wai.GRPO()), {"holdout": {"same_rows": True, "taskset": "reverse-text",
                                       "arg": "dataset_split", "train": "train", "advice": "x"}}),
        (run(wai.GRPO()), {"holdout": {"same_rows": False}})),
    "taskset-unchecked": ((run(wai.GRPO()), {"unchecked_tasksets": ["me/my-env@1"]}),
                          (run(wai.GRPO()), {"unchecked_tasksets": []})),
    "sft-exposure-bias": ((run(sft(max_tokens=8192)), {}), (run(sft()), {})),
    "ema-lora-adapter": ((run(wai.OPSD(anchor="ema:0.01")), {"adapter_ema": True}),
                         (run(wai.OPSD(anchor="ema:0.01"), lora=False), {"adapter_ema": False})),
    "grpo-no-credit": ((run(wai.GRPO()), {"lone_groups": ("reverse-text",), "train_sources": 1}),
                       (run(wai.GRPO()), {"lone_groups": (), "train_sources": 1})),
    "ema-lora-sharded": ((run(wai.OPSD(anchor="ema:0.01")), {"adapter_ema": True, "strategy": "FSDP2"}),
                         (run(wai.OPSD(anchor="ema:0.01")), {"adapter_ema": True, "strategy": None})),
}


def test_every_rule_has_a_case_and_there_are_at_least_12() -> None:
    assert {r.id for r in RULES} == set(CASES)
    assert len(RULES) >= 12
    assert all(r.citation and r.condition for r in RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_fires_and_stays_quiet(rule: Any) -> None:
    (hit, hit_facts), (miss, miss_facts) = CASES[rule.id]
    finding = rule(hit, Facts(**hit_facts))
    assert finding is not None and finding.rule == rule.id and finding.citation == rule.citation
    assert rule(miss, Facts(**miss_facts)) is None


def test_model_name_heuristics() -> None:
    assert size_b("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT") == 0.6
    assert size_b("Qwen/Qwen3-30B-A3B") == 30
    assert size_b("my/model") is None
    assert family("Qwen/Qwen2.5-7B") == "qwen2.5" and family("Qwen/Qwen3-8B") == "qwen3"


def test_backends_report_the_rules_with_their_facts() -> None:
    from whileai.targets.prime_rl import compile as prime_rl

    c = prime_rl.compile(run(wai.OPSD(anchor="ema:0.01"), model=STUDENT))
    assert {"opsd-unanchored", "opsd-small-model", "needs-grpo-arm"} <= {w.rule for w in c.warnings}


def test_eval_never_runs_reads_the_compiled_values() -> None:
    """--set max_steps=5 with eval every 25 steps: the summary says 5 steps and the eval rule
    fires; eval_strategy=no in TRL says evaluation is off. (With the interval unset, whileai
    derives it from steps, and the override alone is refused: tests/targets/test_story.py.)"""
    from whileai.targets.prime_rl import compile as prime_rl
    from whileai.targets.trl import compile as trl

    c = prime_rl.compile(run(wai.GRPO(), eval={"interval": 25}, overrides={"max_steps": 5}))
    assert c.header()[1].startswith("5 steps x 64 prompts x 8 rollouts")
    w = next(w for w in c.warnings if w.rule == "eval-never-runs")
    assert "25 > 5 steps" in w.message and "step 0" in w.message
    assert "eval-never-runs" not in {w.rule for w in prime_rl.compile(run(wai.GRPO())).warnings}
    t = trl.compile(run(wai.GRPO(), eval={"interval": 25}, checkpoint={"interval": 5},
                        overrides={"eval_strategy": "no", "max_steps": 7}))
    assert t.header()[1].startswith("7 steps")
    assert any(w.rule == "eval-never-runs" and "off" in w.message for w in t.warnings)


@pytest.mark.parametrize("taskset,args,eval_args,same", [
    ("reverse-text", {}, {}, True),  # dataset_split 'train' for both: the default
    ("reverse-text", {}, {"dataset_split": "test"}, False),
    ("gsm8k", {}, {}, False),  # whileai trains on 'train', evaluates on 'test'
    ("gsm8k", {"split": "test"}, {}, True),  # the user's split reaches eval too
    ("alphabet-sort", {"min_turns": 2}, {}, True),  # split accepts only 'train'
    ("wordle", {}, {}, True),  # no split argument at all
])
def test_honest_holdout_from_the_compiled_sources(taskset: str, args: dict, eval_args: dict,
                                                  same: bool) -> None:
    from whileai.targets.prime_rl import compile as prime_rl

    c = prime_rl.compile(wai.RunSpec(taskset=taskset, model="Qwen/Qwen3-0.6B", method=wai.GRPO(),
                                     taskset_args=args, eval={"taskset_args": eval_args}))
    hits = [w for w in c.warnings if w.rule == "holdout-is-training-data"]
    assert bool(hits) == same
    text = str(c)
    assert "the holdout is" not in text  # never called a holdout when it is not one
    assert ("eval reads the rows training reads" in text) == same
    if same and taskset in ("reverse-text", "gsm8k"):
        assert "eval.taskset_args." in hits[0].message  # names the argument that selects rows
    if taskset == "alphabet-sort":
        assert "no held-out split" in hits[0].message and "eval.taskset" in hits[0].message
def test_sft_rules_read_what_sft_is() -> None:
    """SFT's temperature and length belong to the teacher: the on-policy rules stay quiet, the
    exposure-bias rule speaks; the tokenizer, ceiling and GRPO-arm rules apply as to OPD; a
    thinking teacher for a non-thinking OPD student asks for the cold start a two-stage spec
    gives; an SFT stage is that cold start, so it never asks for one."""
    by_id = {r.id: r for r in RULES}
    quiet = run(sft(temperature=0.7, max_tokens=16384), model="Qwen/Qwen3-1.7B-Base")
    for rid in ("temperature-off-policy", "max-tokens-long", "sft-cold-start"):
        assert by_id[rid](quiet, Facts()) is None, rid
    assert by_id["sft-exposure-bias"](quiet, Facts()) is not None
    assert by_id["tokenizer-mismatch"](run(sft("meta-llama/Llama-3.1-8B-Instruct")), Facts()) is not None
    assert by_id["teacher-ceiling"](run(sft("Qwen/Qwen3-1.7B"), model="Qwen/Qwen3-1.7B-SFT"), Facts())
    assert by_id["needs-grpo-arm"](run(sft()), Facts()) is not None
    cold = by_id["sft-cold-start"](run(opd("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")), Facts())
    assert cold is not None and "then" in cold.message
    assert by_id["sft-cold-start"](run(opd("Qwen/QwQ-32B"), model="Qwen/QwQ-32B-mini"), Facts()) is None


def test_tokenizer_rule_says_what_a_text_level_teacher_means() -> None:
    """TRL's SFT hands the teacher's text to the student (re-tokenized): the loss stays sound,
    so the warning says so instead of calling the signal wrong."""
    rule = next(r for r in RULES if r.id == "tokenizer-mismatch")
    mixed = run(sft("meta-llama/Llama-3.1-8B-Instruct"))
    tokens, text = rule(mixed, Facts()), rule(mixed, Facts(teacher_reads="text"))
    assert tokens is not None and "SFT targets are silently wrong" in tokens.message
    assert text is not None and "re-tokenized" in text.message and "silently wrong" not in text.message


@pytest.mark.parametrize("sets,fires,says", [
    ({"orchestrator.group_size": 1}, ["reverse-text"], "consecutive empty train batches"),
    ({"orchestrator.group_size": 1, "orchestrator.train.filter_zero_advantages": False},
     ["reverse-text"], "zero credit"),
    ({}, [], ""),
])
def test_grpo_groups_of_one_earn_no_credit(sets: dict, fires: list, says: str) -> None:
    """prime-rl's GRPO advantage is reward - the group's mean (algo/grpo.py:30): a group of one
    single-trace episode is 0 on every token. The spec cannot ask for it (samples >= 2); an
    override can, and compile says what prime-rl then does (its filter on or off)."""
    from whileai.targets.prime_rl import compile as prime_rl

    c = prime_rl.compile(run(wai.GRPO(), overrides=sets))
    hits = [w for w in c.warnings if w.rule == "grpo-no-credit"]
    assert c.facts.lone_groups == tuple(fires) and len(hits) == len(fires)
    assert all(says in w.message and "'reverse-text'" in w.message for w in hits)


def test_grpo_no_credit_reads_each_source_and_its_seats() -> None:
    """A mixture's GRPO source of groups of one is named, and the other sources go on with fewer
    traces; OPD needs no group; a kuhn-poker hand is two traces (its seats compare), so a group
    of one still has credit there."""
    from whileai.targets.prime_rl import compile as prime_rl

    mix = run(wai.GRPO(), sources=[{"taskset": "reverse-text", "method": {"type": "opd", "teacher":
                                    f"vllm:Qwen/Qwen3-8B@{T}"}}],
              overrides={"orchestrator.group_size": 1, "orchestrator.train.source[1].group_size": 1})
    c = prime_rl.compile(mix)
    (w,) = [w for w in c.warnings if w.rule == "grpo-no-credit"]
    assert c.facts.lone_groups == (c.facts.lone_groups[0],) and "fewer traces than batch_size" in w.message
    poker = wai.RunSpec(taskset="kuhn-poker", model="Qwen/Qwen3-0.6B", method=wai.GRPO(),
                        overrides={"orchestrator.group_size": 1})
    assert prime_rl.compile(poker).facts.lone_groups == ()
    duel = wai.RunSpec(taskset="me/duel@0.1", roles=["red", "blue"], model="Qwen/Qwen3-0.6B",
                       method=wai.GRPO(), overrides={"orchestrator.group_size": 1})
    assert prime_rl.compile(duel).facts.lone_groups == ()  # an unknown env's two seats, from its roles
