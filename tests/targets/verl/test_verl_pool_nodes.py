"""A teacher pool over several nodes holds as many replicas as its GPUs on every node allow: verl
refuses a teacher whose num_replicas x per-replica GPUs differs from the distillation pool's
n_gpus_per_node x nnodes (workers/config/distillation.py:282-287; a single teacher's num_replicas
is that quotient, :306), so the replicas whileai writes and counts follow the pool's nodes."""

from __future__ import annotations

import pytest
from test_verl_pools import opd, overrides

from whileai.targets.verl.compile import compile

TEACHER = "distillation.teacher_models.teacher_model."


@pytest.mark.parametrize("teacher_nodes", [None, 2, 3])
def test_the_teachers_replicas_fill_every_node_of_its_pool(teacher_nodes: int | None) -> None:
    given = {} if teacher_nodes is None else {"distillation.nnodes": teacher_nodes}
    o = overrides(compile(opd(nodes=2, gpus_per_node=8, slurm={"partition": "gpu"}, overrides=given)))
    pool = int(o["distillation.n_gpus_per_node"]) * int(o["distillation.nnodes"])
    assert int(o["distillation.nnodes"]) == (teacher_nodes or 1)
    replicas, tp = int(o[TEACHER + "num_replicas"]), int(o[TEACHER + "inference.tensor_model_parallel_size"])
    assert replicas * tp == pool
