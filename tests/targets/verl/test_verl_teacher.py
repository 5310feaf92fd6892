"""An OPD teacher on verl's own pool: the memory and context it is served with, the loss clamps, and
a tensor-parallel size whose weights fit the memory written (verl 0.9.1 serves the teacher at
gpu_memory_utilization 0.5 and the model's whole context unless told: distillation.yaml:91,99)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

import whileai as wai
from whileai.catalogs.paths import get_path
from whileai.cost import sizes
from whileai.targets.verl import catalog
from whileai.targets.verl import check as verl_check
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import parse

BIG = "Qwen/Qwen3-235B-A22B"
T = "distillation.teacher_models.teacher_model."
NO_VERL = ("WHILEAI_VERL_PYTHON is not set and verl is not importable here: set it to a Python with "
           "verl 0.9.1 (pip install 'whileai[verl]'; docs/verl.md)")


def opd(teacher: str = BIG, **fields: object) -> wai.RunSpec:
    method = {"type": "opd", "teacher": {"url": "http://t:8001/v1", "model": teacher}}
    return wai.RunSpec.model_validate({"taskset": "reverse-text", "model": "Qwen/Qwen3-8B", "method": method,
                                       "nodes": 2, "gpus_per_node": 8, "prompts": 32} | fields)


def overrides(c: wai.Compiled) -> dict[str, str]:
    cmd = parse(c.files["run.sh"], {"PWD": "/run"})[0]
    return dict(o.lstrip("+").split("=", 1) for o in cmd.overrides)


def written(o: dict[str, str], key: str) -> float:
    """The value verl gets: the override, else verl's own default (the pinned catalogue's)."""
    if key in o:
        return float(o[key])
    entry = catalog.lookup(key, "main_ppo")
    assert entry is not None
    return float(entry.default)


def test_a_235b_teacher_gets_a_tp_whose_weights_fit_the_memory_written():
    o = overrides(compile(opd()))
    tp = int(o[T + "inference.tensor_model_parallel_size"])
    memory = written(o, T + "inference.gpu_memory_utilization")
    per_gpu = sizes.weights_gb(235.0) / tp
    assert per_gpu <= sizes.GPU_MEMORY_GB * memory, (tp, memory, per_gpu)
    assert int(o["distillation.n_gpus_per_node"]) % tp == 0


def test_the_teachers_tp_is_sized_with_the_memory_it_gets():
    """Half of each GPU (verl's default, set back by an override) needs TP 16 for 235B: more than
    a node of 8 holds, so it is refused; on 16-GPU nodes it gets TP 16."""
    half = {T + "inference.gpu_memory_utilization": 0.5}
    with pytest.raises(wai.SpecError, match=r"needs 16 at gpu_memory_utilization 0\.5"):
        compile(opd(overrides=half))
    o = overrides(compile(opd(gpus_per_node=16, overrides=half)))
    assert o[T + "inference.tensor_model_parallel_size"] == "16"
    assert sizes.weights_gb(235.0) / 16 <= sizes.GPU_MEMORY_GB * 0.5


def test_the_teachers_context_memory_and_clamps_are_written():
    c = compile(opd(prompt_tokens=1024, method={"type": "opd", "max_tokens": 3072, "teacher": {
        "url": "http://t:8001/v1", "model": BIG}}))
    o = overrides(c)
    # prompt + response the teacher scores, and the one token verl asks for (distillation.py:177)
    assert o[T + "inference.max_model_len"] == str(1024 + 3072 + 1)
    assert float(o[T + "inference.gpu_memory_utilization"]) > 0.5
    assert (o["distillation.distillation_loss.loss_max_clamp"],
            o["distillation.distillation_loss.log_prob_min_clamp"]) == ("10.0", "-10.0")
    why = {f.path: f.reason for f in c.fixed}
    assert "trainer_base.py:837-846" in why[T + "inference.gpu_memory_utilization"]
    assert "run_qwen3_8b_fsdp.sh" in why["distillation.distillation_loss.loss_max_clamp"]
    assert get_path(c.doc, T + "inference.max_model_len") == 1024 + 3072 + 1


def test_an_override_of_the_teachers_memory_or_context_is_kept():
    o = overrides(compile(opd(teacher="Qwen/Qwen3-32B", overrides={
        T + "inference.gpu_memory_utilization": 0.7, T + "inference.max_model_len": 20000})))
    assert (o[T + "inference.gpu_memory_utilization"], o[T + "inference.max_model_len"]) == ("0.7", "20000")


def _verl_python() -> str | None:
    return sys.executable if verl_check.available() else os.environ.get("WHILEAI_VERL_PYTHON")


@pytest.mark.slow
def test_verl_accepts_the_teacher_keys_and_refuses_a_context_without_the_extra_token():
    """verl's own check (Hydra compose, validate_config, DistillationConfig) on the compiled
    command, and on the same command with max_model_len = prompt + response (one short)."""
    python = _verl_python()
    if python is None:
        pytest.skip(NO_VERL)
    cmd = parse(compile(opd()).files["run.sh"], {"PWD": "/run"})[0]
    context = T + "inference.max_model_len="
    [line] = [w for w in cmd.overrides if w.startswith(context)]
    short = [w if w != line else f"{context}{int(line.split('=')[1]) - 1}" for w in cmd.overrides]
    code = ("import json, sys; from whileai.targets.verl import check as c\n"
            "for words in json.load(sys.stdin):\n"
            "    v = c.check_overrides('main_ppo', words)\n"
            "    print(json.dumps([v.accepted, v.step, v.error]))\n")
    done = subprocess.run([python, "-c", code], input=json.dumps([list(cmd.overrides), short]),
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    ok, bad = map(json.loads, done.stdout.splitlines())
    assert ok[0] is True, ok
    assert bad[0] is False and bad[1] == "distillation" and "max_model_len" in bad[2], bad


def test_the_rollout_tp_is_sized_with_the_memory_the_rollout_is_given() -> None:
    """The colocated rollout is written gpu_memory_utilization 0.6 (knobs.MEMORY): a 235B student's
    weights (~59 GB a GPU at TP 8) do not fit 0.6 x 80 GB, so an 8-GPU node is refused, not sized
    as if vLLM had 0.9 of each GPU."""
    from whileai.errors import SpecError
    from whileai.targets.verl import knobs

    grpo = {"taskset": "reverse-text", "model": BIG, "gpus": 8, "method": {"type": "grpo"}}
    with pytest.raises(SpecError) as e:
        compile(wai.RunSpec.model_validate(grpo), out=None)
    assert f"gpu_memory_utilization {knobs.MEMORY:g}" in str(e.value)
    c = compile(wai.RunSpec.model_validate(grpo | {"model": "Qwen/Qwen3-32B"}), out=None)
    tp = int(overrides(c)["actor_rollout_ref.rollout.tensor_model_parallel_size"])
    size = sizes.params("Qwen/Qwen3-32B")
    assert size is not None
    assert tp == sizes.serve_gpus(size.total_b, knobs.MEMORY)
    assert sizes.weights_gb(size.total_b) / tp <= sizes.GPU_MEMORY_GB * knobs.MEMORY
