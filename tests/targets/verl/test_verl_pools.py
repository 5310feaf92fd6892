"""An OPD run's GPUs add up: verl places the trainer's pool and the teacher's own pool side by side
(trainer/ppo/v1/trainer_base.py:818-846) and refuses a cluster with fewer GPUs than both
(single_controller/ray/base.py:234-242). On one node the pool is carved out of the node's GPUs
where it does not fit beside the trainer; past one node the teacher's node is in the run lines;
the report counts what the lines provide and names the slowest pool."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from helpers import ROOT

import whileai as wai
from whileai.report.text import render_text
from whileai.targets.verl import check as verl_check
from whileai.targets.verl import knobs
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import parse
from whileai.targets.verl.target import TARGET

NO_VERL = ("WHILEAI_VERL_PYTHON is not set and verl is not importable here: set it to a Python with "
           "verl 0.9.1 (pip install 'whileai[verl]'; docs/verl.md)")


def opd(teacher: str = "Qwen/Qwen3-32B", **fields: object) -> wai.RunSpec:
    method = {"type": "opd", "teacher": {"url": "http://t:8001/v1", "model": teacher}}
    return wai.RunSpec.model_validate({"taskset": "reverse-text", "model": "Qwen/Qwen3-8B", "method": method,
                                       "prompts": 64} | fields)


def overrides(c: wai.Compiled) -> dict[str, str]:
    cmd = parse(c.files["run.sh"], {"PWD": "/run"})[0]
    return dict(o.lstrip("+").split("=", 1) for o in cmd.overrides)


def pools(o: dict[str, str]) -> dict[str, list[int]]:
    """verl's resource_pool_spec from the overrides, as trainer_base.py:818-846 builds it."""
    return {"global_pool": [int(o["trainer.n_gpus_per_node"])] * int(o["trainer.nnodes"]),
            "teacher_pool": [int(o["distillation.n_gpus_per_node"])] * int(o["distillation.nnodes"])}


def test_an_8_gpu_node_holds_the_trainer_and_the_teachers_pool():
    c = compile(opd(gpus=8))
    o = overrides(c)
    trainer, teacher = (sum(v) for v in pools(o).values())
    assert trainer + teacher <= 8 and trainer >= 1 and teacher >= 2
    assert 64 * c.run.method.samples % trainer == 0  # verl's batch rule (utils/config.py:121-125)
    assert c.commands == ("bash run.sh",)
    assert TARGET.machine(c.run, [c]).gpus == trainer + teacher
    assert c.cost is not None and c.cost.held_gpus == trainer + teacher


def test_a_teacher_that_leaves_the_trainer_no_gpu_is_refused_naming_gpus():
    with pytest.raises(wai.SpecError) as e:
        compile(opd(teacher="Qwen/Qwen3-235B-A22B", gpus=8))
    assert e.value.field == "gpus" and "nodes >= 2" in str(e.value) and "gpus >= 9" in str(e.value)


def test_a_batch_no_trainer_share_splits_is_refused_naming_gpus():
    """3 prompts x 2 samples over a rollout TP of 4: no trainer size works, whatever the node."""
    method = {"type": "opd", "samples": 2, "teacher": {"url": "http://t:8001/v1", "model": "Qwen/Qwen3-32B"}}
    with pytest.raises(wai.SpecError, match="divisible by the rollout TP 4") as e:
        compile(opd(gpus=8, prompts=3, inference_tp=4, method=method))
    assert e.value.field == "gpus"


def test_a_teacher_memory_out_of_range_is_refused_by_the_rule_not_a_crash():
    key = "distillation.teacher_models.teacher_model.inference.gpu_memory_utilization"
    with pytest.raises(wai.SpecError, match="not a fraction of a GPU's memory"):
        compile(opd(overrides={key: 0}))


def test_the_cli_exits_2_for_a_teacher_pool_larger_than_the_node(tmp_path):
    spec = tmp_path / "big.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "Qwen/Qwen3-8B"\ngpus = 8\n[method]\ntype = "opd"\n'
                    'teacher = "vllm:Qwen/Qwen3-235B-A22B@http://t:8001/v1"\n')
    done = subprocess.run([sys.executable, "-m", "whileai", "compile", str(spec), "-b", "verl"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "gpus" in done.stderr, done.stderr


def test_a_pool_that_fits_beside_the_trainer_stays_beside_it():
    o = overrides(compile(opd(gpus=4, prompts=32)))  # 4 + the 32B teacher's TP 2 on a node of 8
    assert (o["trainer.n_gpus_per_node"], o["distillation.n_gpus_per_node"]) == ("4", "2")


def test_two_nodes_start_the_teachers_node_and_the_report_counts_what_the_lines_provide():
    c = compile(opd(nodes=2, gpus_per_node=8, slurm={"partition": "gpu"}))
    o = overrides(c)
    slurm = c.files["slurm.sh"]
    nodes = int(re.search(r"--nodes=(\d+)", slurm).group(1))  # type: ignore[union-attr]
    per = int(re.search(r"--gpus-per-node=(\d+)", slurm).group(1))  # type: ignore[union-attr]
    assert c.cost is not None and nodes * per == c.cost.held_gpus
    head = next(line for line in c.commands if line.startswith("ray start --head"))
    other = next(line for line in c.commands if line.startswith("ray start --address"))
    assert f"--num-gpus={per}" in head and f"--num-gpus={per}" in other
    assert f"on each of the other {nodes - 1} nodes" in other
    # verl's pools fit what the lines start: the trainer's 2 nodes and the teacher's own
    assert sum(sum(v) for v in pools(o).values()) <= nodes * per
    assert re.search(rf"≈ [\d.,]+ h on {nodes * per} GPUs", render_text(c, 200))


@pytest.mark.parametrize("teacher_nodes", [2, 3])
def test_a_teacher_pool_of_several_nodes_is_sized_and_started_with_its_node_count(teacher_nodes):
    """distillation.nnodes set: verl wants num_replicas x TP = n_gpus_per_node x nnodes
    (workers/config/distillation.py:281-287), and the run lines must start every one of those nodes
    beside the trainer's; the report counts the GPUs those lines start."""
    c = compile(opd(nodes=2, gpus_per_node=8, slurm={"partition": "gpu"},
                    overrides={"distillation.nnodes": teacher_nodes}))
    o = overrides(c)
    tp = int(o["distillation.teacher_models.teacher_model.inference.tensor_model_parallel_size"])
    replicas = int(o["distillation.teacher_models.teacher_model.num_replicas"])
    assert replicas * tp == sum(pools(o)["teacher_pool"]) == 8 * teacher_nodes
    nodes = int(re.search(r"--nodes=(\d+)", c.files["slurm.sh"]).group(1))  # type: ignore[union-attr]
    assert nodes == 2 + teacher_nodes
    assert f"once the {nodes} nodes have joined" in c.commands[-1]
    assert f"each of the other {nodes - 1} nodes" in c.commands[1]
    assert sum(sum(v) for v in pools(o).values()) == nodes * 8
    assert c.cost is not None and c.cost.held_gpus == nodes * 8
    assert re.search(rf"≈ [\d.,]+ h on {nodes * 8} GPUs", render_text(c, 200))
    assert TARGET.machine(c.run, [c]).gpus == 8  # each node's, as the lines' --num-gpus says


def test_the_report_names_the_slowest_pool_and_adds_the_synchronous_stages():
    """A 0.6B student, a 32B teacher on its TP-2 pool: the teacher is the slowest. verl's step
    takes max(sampling, scoring) + training + validation (agent_loop.py:822-828)."""
    c = compile(opd(model="Qwen/Qwen3-0.6B", gpus=2))
    pool = knobs.pool(c.run)
    assert c.cost is not None and c.cost.gpu_hours is not None and pool is not None and pool.gpus == 2
    h = c.cost.gpu_hours
    sample, train, teacher = h.sample / 2, h.train / 2, h.teacher / 2  # type: ignore[operator]
    assert c.cost.wall_hours == pytest.approx(max(sample, teacher) + train + (h.eval or 0) / 2)
    assert c.cost.wall_hours > max(sample + train, teacher)  # more than the slowest pool alone
    [note] = [n for n in c.notes if n.startswith("pools:")]
    assert note.startswith("pools: the slowest is the teacher's 2 GPUs")
    assert "synchronous" in note and "agent_loop.py:822-828" in note


def _verl_python() -> str | None:
    return sys.executable if verl_check.available() else os.environ.get("WHILEAI_VERL_PYTHON")


RAY = """
import json, sys
import ray
from ray.util import remove_placement_group
from verl.single_controller.ray.base import ResourcePoolManager

ray.init(num_gpus=8, num_cpus=32, include_dashboard=False, log_to_driver=False)
out = {}
try:
    for name, spec in json.loads(sys.stdin.read()).items():
        manager = ResourcePoolManager(resource_pool_spec=spec, mapping={})
        try:
            manager.create_resource_pool()
            groups = {k: p.get_placement_groups() for k, p in manager.resource_pool_dict.items()}
            out[name] = ["placed", {k: [g.bundle_count for g in v] for k, v in groups.items()}]
            for v in groups.values():
                for g in v:
                    remove_placement_group(g)
        except Exception as e:
            out[name] = ["refused", f"{type(e).__name__}: {e}"]
finally:
    ray.shutdown()
print(json.dumps(out))
"""


@pytest.mark.slow
def test_verls_resource_pool_manager_places_the_compiled_pools_on_an_8_gpu_node():
    """Ray with 8 GPUs declared as logical resources (a CPU is enough), verl's own
    ResourcePoolManager: the compiled folder's pools are placed; trainer 8 + pool 2 (what whileai
    wrote before) is refused with verl's own words."""
    python = _verl_python()
    if python is None:
        pytest.skip(NO_VERL)
    spec = pools(overrides(compile(opd(gpus=8))))
    # the refused request first: a placed one holds its GPUs until Ray frees them
    cases = {"beside": {"global_pool": [8], "teacher_pool": [2]}, "compiled": spec}
    done = subprocess.run([python, "-c", RAY], input=json.dumps(cases), capture_output=True, text=True,
                          timeout=300, env={**os.environ, "RAY_DISABLE_IMPORT_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["compiled"] == ["placed", spec], got
    assert got["beside"] == ["refused", "ValueError: Total available GPUs 8.0 is less than total desired "
                                        "GPUs 10"], got
