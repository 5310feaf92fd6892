"""Several nodes: the spec's layout rules, prime-rl's multi_node deployment and SLURM table,
the loader's deployment rules, an OPD teacher's servers, and the 32B goldens."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import tomllib
from helpers import EXAMPLES, ROOT, golden

import whileai as wai
from whileai.errors import SpecError
from whileai.report.text import render_text
from whileai.spec.layout import Slurm
from whileai.spec.load import build, load_spec
from whileai.spec.run import RunSpec
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.catalog import catalog
from whileai.targets.prime_rl.check import check_document

SCALE = EXAMPLES / "scale"
GOLDEN = ROOT / "tests" / "golden" / "prime-rl" / "scale"
BIG = "Qwen/Qwen3-32B"


def run(**fields: Any) -> RunSpec:
    method = fields.pop("method", {"type": "grpo"})
    return build(RunSpec, {"taskset": "reverse-text", "model": BIG, "method": method} | fields)


def toml(c: Any, name: str | None = None) -> dict[str, Any]:
    return tomllib.loads(c.files[name or c.main])


# -- the spec ------------------------------------------------------------------------------
@pytest.mark.parametrize(("fields", "field", "words"), [
    ({"gpus": 16}, "gpus", ["take 2 nodes", "set nodes = 2"]),
    ({"gpus": 12}, "gpus", ["set nodes = 2", "16 GPUs"]),
    ({"gpus": 6, "gpus_per_node": 4}, "gpus", ["set nodes = 2"]),
    ({"nodes": 2, "gpus": 8}, "gpus", ["nodes x gpus_per_node = 16"]),
    ({"nodes": 2, "inference_gpus": 4}, "inference_gpus", ["inference_nodes"]),
    ({"nodes": 2, "inference_nodes": 2}, "inference_nodes", ["at least one node must train"]),
    ({"nodes": 4, "inference_replicas": 3}, "inference_replicas", ["divisor of the 2 inference"]),
    ({"nodes": 2, "inference_nodes": 0, "inference_replicas": 1}, "inference_replicas", ["unset"]),
    ({"nodes": 4, "nodes_per_fsdp_group": 3}, "nodes_per_fsdp_group", ["divisor of the 2 trainer"]),
    ({"nodes": 2, "inference_tp": 3}, "inference_tp", ["divisor of gpus_per_node (8)"]),
    ({"inference_nodes": 1}, "inference_nodes", ["only with nodes > 1"]),
    ({"nodes_per_fsdp_group": 1}, "nodes_per_fsdp_group", ["only with nodes > 1"]),
    ({"gpus": 4, "inference_tp": 3}, "inference_tp", ["divisor of the 2 inference GPUs"]),
    ({"slurm": {"time": "soon"}}, "slurm.time", ["HH:MM:SS"]),
    ({"slurm": {"job_name": "a b"}}, "slurm.job_name", ["letters"]),
    ({"slurm": {"partition": "gpu;rm"}}, "slurm.partition", ["partition names"]),
    ({"slurm": {"jobname": "x"}}, "slurm.jobname", ["did you mean 'job_name'"]),
    ({"slurm": {"pre_run_command": "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123"}},
     "slurm.pre_run_command", ["looks like a secret"]),
])
def test_layout_errors_name_the_field_and_what_is_allowed(fields: dict[str, Any], field: str,
                                                          words: list[str]) -> None:
    with pytest.raises(SpecError) as e:
        run(**fields)
    assert e.value.field == field, str(e.value)
    for w in words:
        assert w in str(e.value)
    assert "hf_abc" not in str(e.value)


def test_layout_defaults_split_whole_nodes() -> None:
    assert run().layout.text() == "2 GPUs (1 inference GPU, 1 trainer GPU)"
    lay = run(nodes=5).layout
    assert (lay.gpus, lay.trainer_nodes, lay.inference_nodes, lay.replicas, lay.nodes_per_replica) \
        == (40, 3, 2, 2, 1)
    lay = run(nodes=8, inference_nodes=6, inference_replicas=2, gpus_per_node=4).layout
    assert (lay.gpus, lay.trainer_gpus, lay.inference_gpus, lay.nodes_per_replica) == (32, 8, 24, 3)


def test_slurm_fields_are_the_pins_slurm_keys() -> None:
    """Each [slurm] field of the spec is a key of prime-rl's SlurmConfig at the pin."""
    keys = set(catalog().schema["$defs"]["SlurmConfig"]["properties"])
    assert set(Slurm.model_fields) == keys


# -- prime-rl: multi_node ------------------------------------------------------------------
@pytest.mark.parametrize("spec", sorted(p.name for p in SCALE.glob("*nodes.toml")))
def test_scale_examples_compile_to_golden_files(spec: str) -> None:
    """32B students, GRPO and OPD on 2, 4 and 8 nodes, SFT on 4 (loader verdicts: the battery's
    scale-*)."""
    c = prime_rl.compile(load_spec(SCALE / spec), name=spec)
    for name, text in c.files.items():
        golden(GOLDEN / name, text)
    golden(GOLDEN / spec.replace(".toml", ".report.txt"), render_text(c, 100) + "\n")
    doc = toml(c)
    dep = doc["deployment"]
    nodes = int(spec.split("-")[-1].removesuffix("nodes.toml"))
    assert dep["type"] == "multi_node" and "num_train_gpus" not in dep and "num_infer_gpus" not in dep
    assert dep["num_train_nodes"] + dep["num_infer_nodes"] * dep["num_infer_replicas"] == nodes
    assert doc["slurm"]["partition"] == "gpu" and doc["output_dir"].startswith("/shared/")
    assert doc["inference"]["vllm"]["tensor_parallel_size"] == 2  # 32B in bf16 + KV headroom
    assert doc["inference"]["vllm"]["data_parallel_size_local"] == 4
    assert check_document(doc) == []
    assert c.commands[-2].startswith(f"uv run rl @ {spec} --dry-run")
    assert c.commands[-1].startswith(f"uv run rl @ {spec}  # submits")
    assert {w.rule for w in c.warnings} >= {"shared-filesystem"}
    if spec.startswith(("opd", "sft")):  # a frozen teacher: OPD's scores, SFT's samples
        teacher = tomllib.loads(c.files[spec.replace(".toml", ".teacher.toml")])
        assert teacher["deployment"] == {"type": "multi_node", "num_nodes": 1, "gpus_per_node": 8}
        assert teacher["vllm"]["tensor_parallel_size"] == 8  # 235B: one node
        assert teacher["server"]["port"] == 8001 and teacher["slurm"]["job_name"].endswith("-teacher")
        assert check_document(teacher, entry="inference") == []
        assert c.commands[0].startswith(f"uv run inference @ {spec.replace('.toml', '.teacher.toml')}")
    if spec.startswith("sft"):
        assert doc["orchestrator"]["algo"]["sampling"]["source"]["base_url"] == "http://teacher-node:8001/v1"
        assert c.cost is not None and c.cost.sampler == "teacher"
        assert c.cost.teacher_tokens == c.cost.sampled_tokens > 0
        assert c.cost.gpu_hours is not None and c.cost.gpu_hours.teacher is None  # no scoring


def test_nemotron_layout_reproduces_the_pins_deployment_and_slurm_keys() -> None:
    """The values of examples/advanced/nemotron-3-super/swe.toml at 559b447 (asserted here; the
    file is compared directly when WHILEAI_PRIME_RL_PIN points at the pin's tree)."""
    c = prime_rl.compile(load_spec(SCALE / "nemotron-3-super-layout.toml"))
    doc = toml(c)
    assert doc["deployment"] == {"type": "multi_node", "num_train_nodes": 4, "num_infer_nodes": 1,
                                 "num_infer_replicas": 4, "gpus_per_node": 8}
    assert doc["slurm"]["job_name"] == "nemotron-3-super-swe" and doc["slurm"]["partition"] == "prod"
    assert doc["slurm"]["pre_run_command"].startswith("uv sync --all-extras --all-packages --group mamba-ssm")
    assert doc["model"]["name"] == "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"
    assert doc["inference"]["vllm"]["tensor_parallel_size"] == 8
    pin = os.environ.get("WHILEAI_PRIME_RL_PIN")
    if pin:
        real = tomllib.loads((Path(pin) / "examples/advanced/nemotron-3-super/swe.toml").read_text())
        ours = dict(doc["deployment"])
        assert ours.pop("type") == real["deployment"]["type"] and ours.pop("gpus_per_node") == 8
        assert ours == {k: v for k, v in real["deployment"].items() if k != "type"}
        assert real["slurm"]["pre_run_command"].startswith(doc["slurm"]["pre_run_command"])
        tp = real["inference"]["vllm"]["tensor_parallel_size"]
        assert doc["inference"]["vllm"]["tensor_parallel_size"] == tp


def test_slurm_table_is_written_key_for_key_and_defaults_to_a_job_name() -> None:
    full = {"job_name": "j", "partition": "gpu", "account": "a", "time": "1-00:00:00",
            "nodelist": "n[1-4]", "exclude": "n9", "template_path": "t.sbatch.j2",
            "project_dir": "/shared/prime-rl", "pre_run_command": "echo hi",
            "cleanup_grace_period": 60, "shared_fs": False}
    assert toml(prime_rl.compile(run(nodes=2, slurm=full)))["slurm"] == full
    bare = prime_rl.compile(run(nodes=2))
    assert toml(bare)["slurm"] == {"job_name": "grpo-reverse-text"}
    assert "slurm-partition-default" in {w.rule for w in bare.warnings}
    one = prime_rl.compile(run(gpus=2, model="Qwen/Qwen3-0.6B", slurm={"partition": "gpu"}))
    assert toml(one)["deployment"]["type"] == "single_node" and toml(one)["slurm"]["partition"] == "gpu"
    assert "--dry-run" in one.commands[0]


def test_engines_fit_the_node_or_the_compile_says_why() -> None:
    small = toml(prime_rl.compile(run(model="Qwen/Qwen3-8B", gpus=4)))
    assert "tensor_parallel_size" not in small["inference"]["vllm"]
    assert toml(prime_rl.compile(run(gpus=4)))["inference"]["vllm"]["tensor_parallel_size"] == 2
    with pytest.raises(SpecError, match="not divisible by tensor_parallel_size 2") as e:
        prime_rl.compile(run(gpus=2))  # one inference GPU cannot hold 32B
    assert "64 GB of bf16 weights" in str(e.value) and "set inference_tp" in str(e.value)
    with pytest.raises(SpecError, match=r"32 must divide deployment.gpus_per_node \(8\)") as e:
        prime_rl.compile(run(model="deepseek-ai/DeepSeek-V3", nodes=4))  # 671B: 32 GPUs
    assert "enable_expert_parallel" in str(e.value)
    c = prime_rl.compile(run(nodes=2, inference_tp=1))
    assert toml(c)["inference"]["vllm"]["tensor_parallel_size"] == 1
    assert "engine-too-small" in {w.rule for w in c.warnings}
    unknown = prime_rl.compile(run(model="my-org/finetune", nodes=2))
    assert toml(unknown)["inference"]["vllm"]["tensor_parallel_size"] == 1
    assert any("unknown from its name" in f.reason for f in unknown.fixed)


@pytest.mark.parametrize(("fields", "path"), [
    ({"gpus": 2}, "deployment.num_infer_gpus"),
    ({"model": "deepseek-ai/DeepSeek-V3", "nodes": 4}, "inference.vllm.tensor_parallel_size"),
])
def test_compile_refuses_an_engine_layout_in_the_words_check_uses(fields: dict[str, Any],
                                                                   path: str) -> None:
    """One rule for engines that do not fit: compile refuses with the loader mirror's problem,
    the one `whileai check` reports on the same file written by hand."""
    with pytest.raises(SpecError) as e:
        prime_rl.compile(run(**fields))
    tp = 2 if "gpus" in fields else 32
    fits = prime_rl.compile(run(**fields, inference_tp=1))  # the same layout, engines of one GPU
    doc = toml(fits)
    doc["inference"]["vllm"]["tensor_parallel_size"] = tp
    found = deployment_problems(doc)
    assert e.value.field == path == found[0].path
    assert found[0].message in str(e.value)


def test_zero_inference_nodes_needs_an_explicit_fake_data_benchmark() -> None:
    with pytest.raises(SpecError, match="need inference nodes") as e:
        prime_rl.compile(run(nodes=2, inference_nodes=0))
    assert "trainer.data.fake" in str(e.value)
    c = prime_rl.compile(run(nodes=2, inference_nodes=0, lora=False,
                             overrides={"trainer.data.fake.batch_size": 8}))
    doc = toml(c)
    assert "inference" not in doc and doc["deployment"]["num_infer_nodes"] == 0
    assert doc["trainer"]["data"]["fake"] == {"batch_size": 8}
    assert not any(r.path.startswith("inference") for r in c.reads)
    assert c.cost is not None and c.cost.gpu_hours is not None and c.cost.gpu_hours.sample is None


@pytest.mark.parametrize(("doc", "path", "words"), [
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2}, "inference": {}}, "slurm", ["SLURM"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2}, "slurm": {},
      "inference": {"router": "None"}}, "inference.router", ["router"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2, "num_infer_nodes": 1}, "slurm": {},
      "inference": {"deployment": {"type": "multi_node", "num_nodes": 2}}}, "deployment.num_infer_nodes",
     ["must equal inference.deployment.num_nodes (2)"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2}, "slurm": {}}, "trainer.data.fake",
     ["fake data"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2, "num_infer_nodes": 0}, "slurm": {},
      "inference": {}}, "inference", ["num_infer_nodes = 0"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2, "num_infer_nodes": 2}, "slurm": {}},
     "inference", ["must be configured"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 2, "nodes_per_fsdp_group": 3},
      "slurm": {}, "trainer": {"data": {"fake": {}}}}, "deployment.nodes_per_fsdp_group", ["divisible"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 1, "num_infer_nodes": 2}, "slurm": {},
      "inference": {"vllm": {"tensor_parallel_size": 8, "enable_expert_parallel": True}}},
     "inference.vllm.data_parallel_size", ["(16)"]),
    ({"deployment": {"type": "multi_node", "num_train_nodes": 1, "num_infer_nodes": 1}, "slurm": {},
      "inference": {"vllm": {"tensor_parallel_size": 16}}}, "inference.vllm.tensor_parallel_size",
     ["none"]),
    ({"deployment": {"num_train_gpus": 8, "num_infer_gpus": 1}}, "deployment",
     ["9 GPUs", "exceed gpus_per_node 8"]),
    ({"deployment": {"num_infer_gpus": 3}, "inference": {"vllm": {"tensor_parallel_size": 2}}},
     "deployment.num_infer_gpus", ["3 is not divisible by tensor_parallel_size 2"]),
    ({"inference": {"kv_cache_offload": {"type": "mooncake"}}}, "inference.kv_cache_offload.type", ["slurm"]),
])
def test_deployment_rules_on_hand_written_files(doc: dict[str, Any], path: str, words: list[str]) -> None:
    problems = deployment_problems(doc)
    assert [p.path for p in problems][:1] == [path], problems
    for w in words:
        assert w in problems[0].message


def deployment_problems(doc: dict[str, Any]) -> list[Any]:
    """What `whileai check` says about a hand-written rl file's deployment (the loader mirror's
    rl rules), less the tables these fragments leave out on purpose."""
    return [p for p in check_document(doc, entry="rl")
            if not (p.path in ("trainer", "orchestrator") and p.message == "is required")]


def test_deployment_rules_accept_the_pins_layouts() -> None:
    ok = [{"deployment": {"type": "multi_node", "num_train_nodes": 4, "num_infer_nodes": 1,
                          "num_infer_replicas": 4}, "slurm": {},
           "inference": {"vllm": {"tensor_parallel_size": 8, "enable_expert_parallel": True}}},
          {"deployment": {"type": "multi_node", "num_train_nodes": 2}, "slurm": {},
           "trainer": {"data": {"fake": {"batch_size": 4}}}},
          {"deployment": {"type": "multi_node", "num_train_nodes": 1, "num_infer_nodes": 1},
           "slurm": {}, "inference": {"vllm": {"data_parallel_size": 2, "tensor_parallel_size": 4}}}]
    for doc in ok:
        assert deployment_problems(doc) == []


def test_whileai_check_applies_the_deployment_rules(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from whileai.cli.app import app

    f = tmp_path / "mn.toml"
    f.write_text('[deployment]\ntype = "multi_node"\nnum_train_nodes = 2\n[inference]\n[trainer]\n'
                 '[orchestrator]\n[[orchestrator.train.source]]\n[orchestrator.train.source.env.taskset]\n'
                 'id = "reverse-text"\n')
    result = CliRunner().invoke(app, ["check", str(f)])
    assert result.exit_code == 2 and "Must use SLURM" in result.output


# -- an OPD teacher ------------------------------------------------------------------------
def opd(url: str, teacher: str, **fields: Any) -> RunSpec:
    return run(method={"type": "opd", "teacher": {"url": url, "model": teacher}}, **fields)


def test_teacher_placement_follows_the_stated_rule() -> None:
    share = prime_rl.compile(opd("http://localhost:8001/v1", "Qwen/Qwen3-8B", model="Qwen/Qwen3-1.7B"))
    assert share.teacher is not None and share.teacher.mode == "share"
    assert toml(share)["inference"]["vllm"]["gpu_memory_utilization"] == 0.4
    local = prime_rl.compile(opd("http://localhost:8001/v1", BIG, model="Qwen/Qwen3-8B", gpus=4))
    assert local.teacher is not None and local.teacher.mode == "local" and local.teacher.gpus == 2
    assert "gpu_memory_utilization" not in toml(local)["inference"]["vllm"]
    assert local.commands[0].startswith("CUDA_VISIBLE_DEVICES=4,5 uv run inference @ opd.teacher.toml")
    t = toml(local, "opd.teacher.toml")
    assert "slurm" not in t and t["vllm"]["tensor_parallel_size"] == 2
    assert check_document(t, entry="inference") == []
    with pytest.raises(SpecError, match="fits beside the run"):
        prime_rl.compile(opd("http://localhost:8001/v1", "Qwen/Qwen3-235B-A22B", model="Qwen/Qwen3-8B",
                             gpus=4))
    with pytest.raises(SpecError, match="port other than 8100"):
        prime_rl.compile(opd("http://localhost:8100/v1", "Qwen/Qwen3-1.7B", model="Qwen/Qwen3-0.6B"))
    with pytest.raises(SpecError, match="not localhost") as e:
        prime_rl.compile(opd("http://localhost:8001/v1", "Qwen/Qwen3-14B", nodes=2))
    assert e.value.field == "method.teacher.url"
    remote = prime_rl.compile(opd("https://api.example.com/v1", "deepseek-ai/DeepSeek-V3", nodes=2))
    assert remote.teacher is not None and remote.teacher.mode == "endpoint"
    assert remote.teacher.gpus == 32 and "must already be served" in remote.notes[0]
    assert set(remote.files) == {"opd.toml"}
    huge = prime_rl.compile(opd("http://teacher-node:8001/v1", "deepseek-ai/DeepSeek-V3", nodes=2))
    assert huge.teacher is not None and huge.teacher.mode == "endpoint"
    assert "more than one node" in huge.notes[0]
    unknown = prime_rl.compile(opd("http://teacher-node:8001/v1", "org/mystery", nodes=2))
    assert unknown.teacher is not None and unknown.teacher.gpus is None
    assert "size unknown" in unknown.notes[0]


def test_an_sft_teacher_is_planned_sized_and_served_like_opds() -> None:
    """SFT's frozen teacher (orchestrator.algo.sampling.source) goes through the same plan:
    beside the policy, on GPUs of its own with an inference TOML, or its own SLURM job; it
    samples every completion, so its size prices the sampling and it scores nothing."""
    def sft(url: str, teacher: str, **fields: Any) -> RunSpec:
        return run(method={"type": "sft", "teacher": {"url": url, "model": teacher}}, **fields)

    share = prime_rl.compile(sft("http://localhost:8001/v1", "Qwen/Qwen3-8B", model="Qwen/Qwen3-1.7B"))
    assert share.teacher is not None and share.teacher.mode == "share"
    assert toml(share)["inference"]["vllm"]["gpu_memory_utilization"] == 0.4
    local = prime_rl.compile(sft("http://localhost:8001/v1", BIG, model="Qwen/Qwen3-8B", gpus=4))
    assert local.teacher is not None and local.teacher.mode == "local" and local.teacher.gpus == 2
    assert local.commands[0].startswith("CUDA_VISIBLE_DEVICES=4,5 uv run inference @ sft.teacher.toml")
    assert check_document(toml(local, "sft.teacher.toml"), entry="inference") == []
    assert "the SFT teacher's server" in local.files["sft.teacher.toml"]
    remote = prime_rl.compile(sft("https://api.example.com/v1", "deepseek-ai/DeepSeek-V3", nodes=2))
    assert remote.teacher is not None and remote.teacher.mode == "endpoint"
    assert "it samples the training completions" in remote.commands[0]
    with pytest.raises(SpecError, match="port other than 8000"):
        prime_rl.compile(sft("http://localhost:8000/v1", "Qwen/Qwen3-1.7B", model="Qwen/Qwen3-1.7B"))
    est = share.cost
    assert est is not None and est.flops is not None and est.gpu_hours is not None
    tokens = est.rollouts * est.tokens_per_rollout
    assert est.flops.sample == pytest.approx(2 * 8.0e9 * tokens, rel=1e-3)  # 2·N_teacher·tokens
    assert est.flops.train == pytest.approx(6 * 1.7e9 * tokens, rel=1e-3)  # 6·N_student·tokens
    assert est.flops.teacher is None and est.teacher_tokens > 0


def test_json_report_carries_cost_and_teacher(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from whileai.cli.app import app
    from whileai.report.document import Report

    result = CliRunner().invoke(app, ["compile", str(SCALE / "opd-32b-8nodes.toml"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    Report.model_validate(data)
    assert data["cost"]["gpus"] == 64 and data["cost"]["teacher_gpus"] == 8
    assert round(data["cost"]["gpu_hours"]["total"]) == 1088  # 1,087 + 1.41 of eval
    assert data["teacher"]["mode"] == "job" and data["teacher"]["file"] == "opd-32b-8nodes.teacher.toml"
    assert any(line.startswith("cost: ") for line in data["summary"])


def test_api_takes_the_layout_fields() -> None:
    c = wai.prime_rl_config("reverse-text", "grpo", model=BIG, nodes=2, slurm={"partition": "gpu"})
    assert toml(c)["deployment"]["num_train_nodes"] == 1


@pytest.mark.parametrize("path", sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.toml")))
def test_every_example_compiles_for_both_backends(path: str) -> None:
    from whileai.targets.trl import compile as trl
    from whileai.tasksets.builtin import BUILTIN, name_of

    spec = load_spec(EXAMPLES / path)
    if spec.data is not None:  # a file of tasks: prime-rl trains only on taskset packages
        with pytest.raises(wai.SpecError, match="^data: .*never on a file"):
            prime_rl.compile(spec, name=Path(path).name)
    else:
        assert check_document(toml(prime_rl.compile(spec, name=Path(path).name))) == []
    if spec.sources:
        with pytest.raises(wai.SpecError, match="TRL has no per-source algorithms"):
            trl.compile(spec)  # a mixture is prime-rl's only, and TRL says so in one line
        return
    if spec.data is None and name_of(spec.taskset) not in BUILTIN:
        with pytest.raises(wai.SpecError, match="data whileai can generate locally"):
            trl.compile(spec)  # TRL trains from files: such a spec needs `data`, and says so
        return
    assert trl.compile(spec).files["config.yaml"]


# -- TRL: processes ------------------------------------------------------------------------
def test_trl_splits_the_step_over_processes_and_picks_a_strategy() -> None:
    import yaml

    from whileai.targets.trl import compile as trl

    one = trl.compile(run(model="Qwen/Qwen3-8B"))
    assert yaml.safe_load(one.files["accelerate.yaml"])["num_processes"] == 1  # not accelerate's guess
    assert one.commands == ("trl grpo --config config.yaml --accelerate_config accelerate.yaml",)
    four = trl.compile(run(model="Qwen/Qwen3-8B", gpus=4))
    cfg = yaml.safe_load(four.files["config.yaml"])
    acc = yaml.safe_load(four.files["accelerate.yaml"])
    assert cfg["per_device_train_batch_size"] * cfg["gradient_accumulation_steps"] * 4 == 64 * 8
    assert (acc["distributed_type"], acc["num_processes"], acc["num_machines"]) == ("FSDP", 4, 1)
    assert four.commands == ("trl grpo --config config.yaml --accelerate_config accelerate.yaml",)
    assert any(r.path == "<accelerate.yaml: distributed_type>" and r.value == "FSDP2" for r in four.reads)
    distil = trl.compile(opd("http://t:8001/v1", BIG, model="Qwen/Qwen3-8B", nodes=2))
    acc = yaml.safe_load(distil.files["accelerate.yaml"])
    assert (acc["distributed_type"], acc["num_processes"], acc["num_machines"]) == ("DEEPSPEED", 16, 2)
    assert "ZeRO-3" in distil.files["README.md"] and "--machine_rank" in distil.commands[-1]
    cpu = trl.compile(run(model="Qwen/Qwen3-8B", gpus=4), cpu=True)
    assert yaml.safe_load(cpu.files["accelerate.yaml"])["num_processes"] == 1
    assert any(i.field == "gpus" and "--cpu" in i.reason for i in cpu.ignores)
    with pytest.raises(SpecError, match="split evenly over the 16"):
        trl.compile(run(model="Qwen/Qwen3-8B", nodes=2, prompts=3))
    sft = trl.compile(run(model="Qwen/Qwen3-8B", gpus=4, steps=10, prompts=8,
                          method={"type": "sft", "teacher": {"url": "http://t:8001/v1", "model": BIG}}))
    acc = yaml.safe_load(sft.files["accelerate.yaml"])
    assert (acc["distributed_type"], acc["num_processes"]) == ("FSDP", 4)
    sample, train = sft.commands  # the teacher samples once, then `trl sft` on every process
    assert sample.startswith("python sample.py ") and "--prompts 80 " in sample  # 10 x 32 / 4 samples
    assert train == "trl sft --config config.yaml --accelerate_config accelerate.yaml"
    assert sft.cost is not None and sft.cost.gpu_hours is not None and sft.cost.gpu_hours.sample
    # sample.py samples on one GPU, then trl sft trains on the 4 processes: the two add up
    h = sft.cost.gpu_hours
    assert sft.cost.wall_hours == pytest.approx(h.sample / 1 + h.train / 4)


# -- prime-rl's own loader (recorded by scripts/gen_loader_fixture.py) ---------------------
FIXTURE = ROOT / "tests" / "fixtures" / "prime-rl" / "loader-verdicts.json"


def scale_variants() -> list[dict[str, Any]]:
    data = json.loads(FIXTURE.read_text())
    return [v for v in data["variants"] if v["name"].startswith("scale-")]


@pytest.mark.parametrize("variant", scale_variants(), ids=lambda v: v["name"])
def test_prime_rls_loader_agrees_on_every_scale_variant(variant: dict[str, Any], tmp_path: Path) -> None:
    """The loader at 559b447 accepted what whileai wrote (the rl TOML and, for OPD, the
    teacher's inference TOML under `uv run inference`), and today's compile still writes it."""
    assert variant["agree"] is True, variant["loader_error"]
    for extra in variant.get("also", []):
        assert extra["loader_accepted"] is True and extra["entry"] == "inference", extra
    if not variant["whileai_verdict"]["accepted"]:
        return
    spec = tmp_path / f"{variant['name']}.spec.toml"
    spec.write_text(variant["input"]["spec"])
    c = prime_rl.compile(load_spec(spec), name=f"{variant['name']}.toml")
    assert c.text == variant["compiled_toml_or_doc"], "stale fixture: rerun scripts/gen_loader_fixture.py"
    for extra in variant.get("also", []):
        assert c.files[extra["file"]] == extra["toml"]
