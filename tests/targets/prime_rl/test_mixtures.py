"""Mixtures (`[[sources]]`): several training sources in one prime-rl run, each with its own
taskset, arguments, ratio and method; TRL and the arms refuse them in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomllib
from helpers import EXAMPLES, ROOT

import whileai as wai
from whileai.errors import SpecError
from whileai.spec import mixture
from whileai.spec.load import build, load_spec
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.check import check_document

GRPO_OPD = EXAMPLES / "mixtures" / "grpo-opd.toml"
T8 = {"url": "http://localhost:8001/v1", "model": "Qwen/Qwen3-8B"}


def mix(*sources: dict[str, Any], **fields: Any) -> wai.RunSpec:
    base = {"taskset": "reverse-text", "model": "Qwen/Qwen3-1.7B", "method": {"type": "grpo"},
            "sources": list(sources)}
    run: wai.RunSpec = build(wai.RunSpec, base | fields)  # a spec error as the CLI shows it
    return run


def toml(c: wai.Compiled, name: str | None = None) -> dict[str, Any]:
    return tomllib.loads(c.files[name or c.main])


def test_the_pins_mixed_config_as_a_spec() -> None:
    """examples/mixtures/grpo-opd.toml compiles to what configs/debug/algo/mixed_grpo_opd.toml
    says: two reverse-text sources named by method, the second with its own opd algo."""
    c = prime_rl.compile(load_spec(GRPO_OPD), name="grpo-opd.toml")
    doc = toml(c)
    grpo, opd = doc["orchestrator"]["train"]["source"]
    assert (grpo["name"], opd["name"]) == ("reverse-text-grpo", "reverse-text-opd")
    assert doc["orchestrator"]["algo"]["type"] == "grpo" and "algo" not in grpo
    assert opd["algo"]["type"] == "opd" and opd["algo"]["teacher"]["base_url"] == "http://localhost:8001/v1"
    assert (doc["orchestrator"]["batch_size"], doc["orchestrator"]["group_size"]) == (128, 16)
    assert [s["name"] for s in doc["orchestrator"]["eval"]["source"]] == ["reverse-text"]
    assert check_document(doc) == []
    assert c.commands[0].startswith("CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model "
                                    "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
    assert any("mixture of 2 training sources" in n for n in c.notes)


def test_each_source_gets_its_own_table_and_every_field_is_accounted_for() -> None:
    run = mix({"taskset": "gsm8k", "ratio": 3.0, "method": {"type": "opd", "teacher": T8, "samples": 2,
                                                            "temperature": 0.7, "max_tokens": 512,
                                                            "learning_rate": 1e-3}},
              {"taskset": "alphabet-sort", "taskset_args": {"min_turns": 2}, "ratio": 0.5})
    c = prime_rl.compile(run)
    src = toml(c)["orchestrator"]["train"]["source"]
    assert [s["name"] for s in src] == ["reverse-text", "gsm8k", "alphabet-sort"]
    assert [s["ratio"] for s in src] == [1.0, 3.0, 0.5]
    gsm8k, sort = src[1], src[2]
    assert gsm8k["env"]["taskset"] == {"id": "gsm8k", "split": "train"}  # trains on train
    assert gsm8k["group_size"] == 2
    assert gsm8k["sampling"] == {"temperature": 0.7, "max_completion_tokens": 512}
    assert gsm8k["algo"]["teacher"]["name"] == "Qwen/Qwen3-8B"
    assert sort["algo"] == {"type": "grpo"}  # the run's method, written out (no hidden copy)
    assert sort["env"]["taskset"]["min_turns"] == 2 and "group_size" not in sort
    ignored = {i.field: i.reason for i in c.ignores}
    assert "one optimizer" in ignored["sources[0].method.learning_rate"]
    assert toml(c)["trainer"]["optim"]["lr"] == run.learning_rate  # the run's method's
    reads = {(r.field, r.path) for r in c.reads}
    assert "sources[1].method.type" not in {f for f, _ in reads}  # unset: no field of its own
    assert ("type", "orchestrator.train.source[2].algo.type") in reads  # the run's method.type
    assert toml(c)["seq_len"] == run.prompt_tokens + 4096  # the longest source's cap


def test_names_shares_and_what_the_report_says() -> None:
    assert mixture._names([("rt", "grpo", None), ("rt", "opd", None)]) == ["rt-grpo", "rt-opd"]
    assert mixture._names([("rt", "grpo", None), ("rt", "grpo", None)]) == ["rt-grpo-0", "rt-grpo-1"]
    assert mixture._names([("gsm8k", "grpo", None), ("x", "opd", "gsm8k")]) == ["gsm8k-grpo", "gsm8k"]
    run = mix({"taskset": "gsm8k", "ratio": 3.0, "method": {"type": "grpo", "samples": 4}}, ratio=1.0)
    # tasks are drawn by ratio, each a group: rollout share = ratio x group size, normalized
    assert mixture.shares(run) == pytest.approx([8 / 20, 12 / 20])
    assert "reverse-text (grpo, ratio 1, 8 per group: 40%); gsm8k (grpo, ratio 3, 4 per group: 60%)" \
        in mixture.summary(run)


def test_eval_reads_each_training_taskset_on_its_held_out_split() -> None:
    run = mix({"taskset": "gsm8k", "method": {"type": "grpo"}},
              {"taskset": "reverse-text", "method": {"type": "opd", "teacher": T8}},
              {"taskset": "alphabet-sort", "eval": False})
    c = prime_rl.compile(run)
    evals = toml(c)["orchestrator"]["eval"]["source"]
    assert [(e["name"], e["env"]["taskset"]) for e in evals] == [
        ("reverse-text", {"id": "reverse-text"}), ("gsm8k", {"id": "gsm8k", "split": "test"})]
    notes = {r.field: r.path for r in c.reads if r.field.endswith(".eval")}
    assert notes["sources[1].eval"] == "<no eval source of its own>"  # the run's eval source reads it
    assert notes["sources[2].eval"] == "<no eval source>"
    warn = next(w for w in c.warnings if w.rule == "holdout-is-training-data")
    assert "training sources 'reverse-text-grpo', 'reverse-text-opd'" in warn.message
    assert "gsm8k" not in warn.message  # its eval source reads 'test', training 'train'
    one = prime_rl.compile(mix({"taskset": "gsm8k"}, eval={"taskset": "gsm8k"}))
    assert [e["name"] for e in toml(one)["orchestrator"]["eval"]["source"]] == ["gsm8k"]
    assert any(i.field == "sources[0].eval" and "the one eval source" in i.reason for i in one.ignores)
    off = prime_rl.compile(mix({"taskset": "gsm8k"}, eval={"enabled": False}))
    assert "eval" not in toml(off)["orchestrator"]


def test_the_honest_holdout_rule_checks_every_source() -> None:
    """A gsm8k source told to train on 'test' is read by its eval source too: the warning names it."""
    run = mix({"taskset": "gsm8k", "taskset_args": {"split": "test"}})
    warn = next(w for w in prime_rl.compile(run).warnings if w.rule == "holdout-is-training-data")
    assert "eval source 'gsm8k' reads the rows training source 'gsm8k' reads (gsm8k: split 'test'" \
        in warn.message


def test_every_teacher_is_planned_and_served() -> None:
    """An OPD source's teacher shares GPU 0; an SFT source's larger teacher gets GPUs of its own
    and its own inference TOML; each is served before rl starts."""
    run = mix({"taskset": "reverse-text", "name": "rt-opd", "method": {"type": "opd", "teacher": T8}},
              {"taskset": "gsm8k", "method": {"type": "sft", "teacher": {
                  "url": "http://localhost:8002/v1", "model": "Qwen/Qwen3-32B"}}}, gpus=4)
    c = prime_rl.compile(run, name="m.toml")
    assert [t["mode"] for t in c.to_dict()["teachers"]] == ["share", "local"]
    assert set(c.files) == {"m.toml", "m.teacher-2.toml"}
    second = toml(c, "m.teacher-2.toml")
    assert second["vllm"]["model"] == "Qwen/Qwen3-32B" and second["output_dir"] == "outputs/teacher-2"
    assert "the SFT teacher's server" in c.files["m.teacher-2.toml"]
    assert c.commands[0].startswith("CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model Qwen/Qwen3-8B")
    assert c.commands[1].startswith("CUDA_VISIBLE_DEVICES=4,5 uv run inference @ m.teacher-2.toml")
    assert toml(c)["inference"]["vllm"]["gpu_memory_utilization"] == 0.4
    assert c.cost is not None and c.cost.flops is not None
    # per source: the SFT source's teacher samples (its 32B price the sampling, above the 1.7B
    # student's), the OPD one scores; the GRPO source's tokens reach no teacher
    cost, flops = c.cost, c.cost.flops
    assert cost.sampler == "student/teacher" and flops.teacher is not None and flops.sample is not None
    assert flops.sample > 2 * 1.7e9 * cost.rollouts * cost.tokens_per_rollout
    assert 0 < cost.teacher_tokens < cost.sampled_tokens
    with pytest.raises(SpecError, match="one vLLM server serves one model"):
        prime_rl.compile(mix({"taskset": "gsm8k", "method": {"type": "opd", "teacher": T8}},
                             {"taskset": "gsm8k", "name": "g2", "method": {"type": "sft", "teacher": {
                                 "url": T8["url"], "model": "Qwen/Qwen3-4B"}}}))
    with pytest.raises(SpecError) as e:
        prime_rl.compile(mix({"taskset": "gsm8k", "method": {"type": "opd", "teacher": {
            "url": "http://localhost:8000/v1", "model": "Qwen/Qwen3-8B"}}}))
    assert e.value.field == "sources[0].method.teacher.url"


def test_the_rules_speak_per_source() -> None:
    """A source's own method gets its warnings, named after the source; an OPSD source gets its
    own algo renderer."""
    run = mix({"taskset": "gsm8k", "method": {"type": "opsd"}}, model="Qwen/Qwen3-1.7B")
    c = prime_rl.compile(run)
    small = [w for w in c.warnings if w.rule == "opsd-small-model"]
    assert small and small[0].message.startswith("source 'gsm8k' (opsd): ")
    assert toml(c)["orchestrator"]["train"]["source"][1]["algo"]["renderer"]["name"] == "qwen3"


def test_spec_checks_each_source() -> None:
    with pytest.raises(SpecError, match=r"sources\[0\].taskset_args.min_turn.*did you mean 'min_turns'"):
        mix({"taskset": "alphabet-sort", "taskset_args": {"min_turn": 2}})
    with pytest.raises(SpecError, match=r"sources\[0\].roles"):
        mix({"taskset": "wordle", "roles": ["player"]})
    with pytest.raises(SpecError, match=r"sources\[0\].ratio: 0 is not allowed; input should be greater"):
        mix({"taskset": "gsm8k", "ratio": 0})
    with pytest.raises(SpecError, match="unset in a mixture"):
        mix({"taskset": "gsm8k"}, lora=False, then={"method": {"type": "grpo"}})
    with pytest.raises(SpecError, match="duplicate train source names"):
        prime_rl.compile(mix({"taskset": "gsm8k", "name": "x"}, {"taskset": "wordle", "name": "x"}))
    ratio = prime_rl.compile(wai.RunSpec.model_validate(
        {"taskset": "reverse-text", "model": "m", "method": {"type": "grpo"}, "ratio": 2.0}))
    assert any(i.field == "ratio" and "nothing to weigh" in i.reason for i in ratio.ignores)


def test_the_python_api_takes_sources() -> None:
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model="Qwen/Qwen3-8B")
    c = wai.prime_rl_config("reverse-text", "grpo", model="Qwen/Qwen3-1.7B", sources=[
        wai.Source(taskset="gsm8k", ratio=2.0, method=wai.OPD(teacher))])
    names = [s["name"] for s in toml(c)["orchestrator"]["train"]["source"]]
    assert names == ["reverse-text", "gsm8k"]
    with pytest.raises(SpecError, match="TRL has no per-source algorithms"):
        wai.trl_config("reverse-text", "grpo", model="m", sources=[wai.Source(taskset="gsm8k")])


def test_trl_and_the_arms_refuse_a_mixture_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from whileai.cli.app import app
    from whileai.launch.arms import load_arms

    result = CliRunner().invoke(app, ["compile", str(GRPO_OPD), "-b", "trl", "-o", str(tmp_path / "t")])
    assert result.exit_code == 2 and not (tmp_path / "t").exists()
    line = result.output.strip()
    assert "\n" not in line and "TRL has no per-source algorithms" in line and "Traceback" not in line
    with pytest.raises(SpecError, match="an arm is one method on one taskset"):
        load_arms([str(EXAMPLES / "grpo.toml"), str(GRPO_OPD)])
    inspect = CliRunner().invoke(app, ["inspect", str(GRPO_OPD), "--local-student", "x"])
    assert inspect.exit_code == 2 and "inspect shows one method's signal" in inspect.output


def test_done_when_the_loader_accepts_mixtures() -> None:
    """Issue 9's bar: a GRPO+OPD mixture compiles and prime-rl's own loader at the pin accepts it
    (tests/fixtures/prime-rl/loader-verdicts.json, recorded by scripts/gen_loader_fixture.py)."""
    import json

    verdicts = json.loads((ROOT / "tests" / "fixtures" / "prime-rl" / "loader-verdicts.json").read_text())
    by_name = {v["name"]: v for v in verdicts["variants"]}
    for name in ("mixture-grpo-opd", "mixture-sft-grpo", "mixture-three-sources-ratios",
                 "mixture-gsm8k-reverse-text-args", "mixture-opsd-source", "mixture-two-teachers",
                 "scale-mixture-grpo-opd-4nodes"):
        v = by_name[name]
        assert v["whileai_verdict"]["accepted"] and v["loader_accepted"] and not v["launch_error"], name
    for name in ("mixture-duplicate-names", "mixture-ratio-zero", "mixture-opsd-source-with-teacher",
                 "mixture-grpo-source-frozen-sampling", "mixture-sft-source-from-policy",
                 "mixture-batch-not-divisible", "mixture-hierarchical-grpo-source", "mixture-agg-name"):
        v = by_name[name]
        assert v["loader_accepted"] is False and not v["whileai_verdict"]["accepted"], name
