"""The rehearsal's `pools` step: Ray started on this CPU with the node's GPUs declared as logical
resources, then verl's own resource-pool code places (or refuses) the run's pools.

- `main_ppo`: the pools spec built by verl's own `BaseTaskRunner.init_resource_pool_mgr`
  (trainer/main_ppo_v0.py:67-99; the v1 trainer that main_ppo runs builds the same spec,
  trainer/ppo/v1/trainer_base.py:817-848, but imports `transfer_queue`), then
  `ResourcePoolManager.create_resource_pool()` (single_controller/ray/base.py:195-216) with its
  check, "Total available GPUs X is less than total desired GPUs Y" (base.py:226-242), then each
  pool's placement groups (base.py:131-163, as the trainer's worker groups ask for them), then an
  OPD teacher pool split among its teachers and replicas by verl's own `MultiTeacherModelManager`
  (experimental/teacher_loop/teacher_model.py:63-71,99-153,190-203), its vLLM servers stood in.
- `main_generation_server`: one pool per rollout replica, sized by verl's own `RolloutReplica`
  (workers/rollout/replica.py:107-117), as `init_standalone` builds it (replica.py:199-208).
- `sft_trainer`: runs under torchrun, not Ray: the step does not apply.

Runs inside verl's Python (inside.py); verl and Ray are imported here, in `run`.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from whileai.targets.verl.rehearse.context import Context, StepRecord

COLOCATE = 3  # ResourcePoolManager.max_colocate_count (base.py:192): CPUs a GPU bundle asks for
PLACE_SECONDS = 30.0  # how long a placement group may stay pending before the step calls it unplaceable


class Unplaceable(RuntimeError):
    """Ray cannot place a pool's placement group: on the cluster, verl would wait for it forever
    (`ray.get([pg.ready() ...])`, base.py:160, has no timeout)."""


def run(ctx: Context) -> StepRecord:
    step = StepRecord("pools", True)
    if ctx.job == "sft_trainer":
        step.facts = {"applies": False, "why": "sft_trainer runs under torchrun (one process per "
                      "GPU), not Ray: no resource pools (trainer/sft_trainer.py)"}
        return step
    try:
        _pools(ctx, step)
    except Exception as e:  # verl's own refusal: the step fails with what it ran and stood in so far
        from whileai.targets.verl.rehearse.inside import first_line, where

        step.ok, step.error, step.cause = False, first_line(e), where(e, ctx.folder)
    return step


def _pools(ctx: Context, step: StepRecord) -> None:
    spec, mapping = (_ppo_spec(ctx, step) if ctx.job == "main_ppo" else _generation_spec(ctx, step))
    step.facts["pools"] = {k: list(v) for k, v in spec.items()}
    step.facts["desired_gpus"] = sum(sum(v) for v in spec.values())
    declared = ctx.gpus_per_node * ctx.nodes
    step.facts["declared_gpus"] = declared
    step.facts["nodes"] = ctx.nodes
    if ctx.nodes > 1:
        step.stood_in.append(
            f"{ctx.nodes} nodes of {ctx.gpus_per_node} GPUs -> one Ray node declaring {declared} "
            "logical GPUs: Ray's per-node packing (STRICT_PACK, single_controller/ray/base.py:131) is "
            "checked by the step's own arithmetic, not by Ray")
        _check_packing(spec, ctx.gpus_per_node, ctx.nodes, step)
    _with_ray(ctx, declared, sum(sum(v) for v in spec.values()), lambda: _place(ctx, spec, mapping, step),
              step)


def _ppo_spec(ctx: Context, step: StepRecord) -> tuple[dict[str, list[int]], dict[Any, str]]:
    """verl's own pools spec and role mapping for main_ppo (main_ppo_v0.py:67-99,101-121)."""
    from verl.trainer.main_ppo_v0 import BaseTaskRunner

    config = copy.deepcopy(ctx.config)  # init_resource_pool_mgr writes reward_model's nnodes
    runner = SimpleNamespace(mapping={}, role_worker_mapping={})
    manager = BaseTaskRunner.init_resource_pool_mgr(runner, config)  # type: ignore[arg-type]
    BaseTaskRunner.add_teacher_model_resource_pool(runner, config)  # type: ignore[arg-type]
    step.ran.append("verl.trainer.main_ppo_v0.BaseTaskRunner.init_resource_pool_mgr")
    step.stood_in.append(
        "the v1 trainer's pools spec (trainer/ppo/v1/trainer_base.py:817-848, what main_ppo runs "
        "with trainer.use_v1) -> v0's BaseTaskRunner.init_resource_pool_mgr "
        "(trainer/main_ppo_v0.py:67-99), which builds the same spec without importing transfer_queue")
    step.stood_in.append(
        "the actor, rollout and critic worker classes (main_ppo_v0.py:35-63) -> not registered: "
        "they need a GPU; only the pools they map to are placed")
    ctx_spec = {k: list(v) for k, v in manager.resource_pool_spec.items()}
    step.facts["teachers"] = _teacher_sizes(config)
    return ctx_spec, dict(runner.mapping)


def _teacher_sizes(config: Any) -> dict[str, int]:
    from verl.trainer.distillation import is_distillation_enabled

    if not is_distillation_enabled(config.get("distillation")):
        return {}
    from verl.utils.config import omega_conf_to_dataclass

    d = omega_conf_to_dataclass(config.distillation)
    return {str(k): int(t.world_size) for k, t in d.teacher_models.items()}


def _generation_spec(ctx: Context, step: StepRecord) -> tuple[dict[str, list[int]], dict[Any, str]]:
    """One pool per rollout replica of main_generation_server (main_generation_server.py:40-56)."""
    from verl.workers.rollout.replica import RolloutReplica

    class SizedReplica(RolloutReplica):  # verl's own __init__ sizes it; nothing is launched
        async def launch_servers(self) -> None:
            return None

    cfg = ctx.config
    tp = cfg.actor_rollout_ref.rollout.tensor_model_parallel_size
    n = (cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes) // tp  # main_generation_server.py:42
    spec: dict[str, list[int]] = {}
    for rank in range(n):
        r = SizedReplica(replica_rank=rank, config=cfg.actor_rollout_ref.rollout,
                    model_config=cfg.actor_rollout_ref.model, gpus_per_node=cfg.trainer.n_gpus_per_node)
        spec[f"rollout_pool_{rank}"] = [r.gpus_per_replica_node] * r.nnodes  # replica.py:199-201
    step.ran.append("verl.workers.rollout.replica.RolloutReplica.__init__ (its sizes)")
    step.stood_in.append(
        "each replica's init_standalone (workers/rollout/replica.py:189-216) -> its pool spec and "
        "ResourcePoolManager as replica.py:199-208 builds them, placed; no vLLM server is started")
    step.facts["replicas"] = n
    return spec, {}


def _check_packing(spec: dict[str, list[int]], per_node: int, nodes: int, step: StepRecord) -> None:
    """Several nodes on one Ray node: whether each placement group (one per node entry of a pool,
    STRICT_PACK: all its bundles on one node, base.py:131-155) fits some node, in any arrangement."""
    groups = sorted((n for v in spec.values() for n in v), reverse=True)
    free = [per_node] * nodes

    def fits(i: int) -> bool:
        if i == len(groups):
            return True
        for j in range(nodes):
            if free[j] >= groups[i]:
                free[j] -= groups[i]
                if fits(i + 1):
                    return True
                free[j] += groups[i]
        return False

    if sum(groups) <= per_node * nodes and not fits(0):
        raise Unplaceable(
            f"the pools' placement groups {groups} (GPUs each, one node each: STRICT_PACK) do not fit "
            f"{nodes} nodes of {per_node} GPUs in any arrangement: Ray would leave one pending and "
            "verl would wait for it forever (single_controller/ray/base.py:160)")


def _with_ray(ctx: Context, gpus: int, desired: int, body: Any, step: StepRecord) -> None:
    """Ray on this CPU: `gpus` logical GPUs, enough logical CPUs for verl's bundles, no dashboard,
    its temp folder under the scratch folder (or a short one: Ray's socket paths are limited)."""
    import ray

    scratch = ctx.scratch / "ray"
    short = len(str(scratch)) > 40  # ray's session sockets sit several folders deeper (AF_UNIX: 107)
    temp = Path(tempfile.mkdtemp(prefix="wr-ray-")) if short else scratch
    temp.mkdir(parents=True, exist_ok=True)
    ctx.scratch.mkdir(parents=True, exist_ok=True)
    (ctx.scratch / "ray-temp").write_text(str(temp))  # where Ray's processes keep their session
    step.stood_in.append(
        f"the node -> Ray on this CPU with {gpus} logical GPUs (ray.init(num_gpus=...)) and "
        f"{COLOCATE} logical CPUs a GPU bundle (base.py:146: {{'CPU': max_colocate_count, 'GPU': 1}})")
    t0 = time.perf_counter()
    ray.init(num_gpus=gpus, num_cpus=COLOCATE * max(gpus, desired) + 2, include_dashboard=False,
             _temp_dir=str(temp), log_to_driver=False, configure_logging=False)
    step.facts["ray_start_seconds"] = round(time.perf_counter() - t0, 2)
    step.ran.append(f"ray {ray.__version__}: a local head node")
    try:
        body()
    finally:
        ray.shutdown()
        if short:
            shutil.rmtree(temp, ignore_errors=True)


def _place(ctx: Context, spec: dict[str, list[int]], mapping: dict[Any, str], step: StepRecord) -> None:
    from verl.single_controller.ray.base import ResourcePoolManager

    manager = ResourcePoolManager(resource_pool_spec=spec, mapping=mapping,
                                  **({"max_colocate_count": 2} if ctx.job != "main_ppo" else {}))
    manager.create_resource_pool()  # verl's own check: "Total available GPUs ..." (base.py:238-242)
    step.ran.append("verl.single_controller.ray.base.ResourcePoolManager.create_resource_pool")
    for name, pool in manager.resource_pool_dict.items():
        _placed(name, pool)
    step.ran.append("verl.single_controller.ray.base.RayResourcePool.get_placement_groups (each pool)")
    step.facts["placed"] = {k: list(v) for k, v in spec.items()}
    if "teacher_pool" in manager.resource_pool_dict:
        _teachers(ctx, manager.resource_pool_dict["teacher_pool"], step)


def _placed(name: str, pool: Any) -> None:
    """verl's placement of one pool, bounded: a group Ray cannot place stays pending forever."""
    done: list[BaseException | None] = []

    def place() -> None:
        try:
            pool.get_placement_groups()
            done.append(None)
        except BaseException as e:  # handed to the step
            done.append(e)

    t = threading.Thread(target=place, daemon=True)
    t.start()
    t.join(PLACE_SECONDS)
    if not done:
        raise Unplaceable(f"Ray left pool {name!r} ({pool.store} GPUs, STRICT_PACK) pending for "
                          f"{PLACE_SECONDS:.0f} s: verl would wait for it forever "
                          "(single_controller/ray/base.py:160)")
    if done[0] is not None:
        raise done[0]


def _teachers(ctx: Context, pool: Any, step: StepRecord) -> None:
    """verl's own MultiTeacherModelManager on the placed teacher pool: split among teachers
    (teacher_model.py:190-203), each teacher's size check and replica split with node alignment
    (teacher_model.py:61-101,118-153); the vLLM replicas and the router stood in."""
    import verl.experimental.teacher_loop.teacher_model as tm

    class ReplicaStandIn:  # stands in for a vLLM replica: takes its sub-pool, starts nothing
        def __init__(self, **kwargs: Any) -> None:
            self._server_handle, self._server_address = None, ""

        async def init_colocated(self, resource_pool: Any) -> None:
            return None

    saved = (tm.get_rollout_replica_class, tm.TeacherModelManager._initialize_load_balancer_handle)
    tm.get_rollout_replica_class = lambda name: ReplicaStandIn  # type: ignore[assignment]
    tm.TeacherModelManager._initialize_load_balancer_handle = _no_router  # type: ignore[method-assign]
    try:
        manager = tm.MultiTeacherModelManager(copy.deepcopy(ctx.config), pool)
    finally:
        tm.get_rollout_replica_class, tm.TeacherModelManager._initialize_load_balancer_handle = saved
    step.ran.append("verl.experimental.teacher_loop.teacher_model.MultiTeacherModelManager "
                    "(the teacher pool split, each teacher's size and node-alignment checks)")
    step.stood_in.append(
        "each teacher's vLLM replicas (teacher_model.py:80-91 get_rollout_replica_class, "
        "init_colocated at :102-107) -> a stand-in that takes its sub-pool and starts nothing")
    step.stood_in.append("each teacher's router (teacher_model.py:155-161) -> not started")
    step.facts["teacher_replicas"] = {k: len(m.rollout_replicas)
                                      for k, m in manager.teacher_model_managers.items()}


def _no_router(self: Any) -> None:
    """Stands in for TeacherModelManager._initialize_load_balancer_handle (teacher_model.py:155-161)."""
    self.load_balancer_handle = None
