"""prime-rl's deployment: one node (single_node) or several on SLURM (multi_node), as field-map
rows of the run's plan (whileai.targets.prime_rl.plan), plus what compile needs around them (the
inference engines' width, a run on fake data, the run section, the layout fact).

`rows(plan)` go where the deployment keys belong; `engine_rows(plan)` after the `[inference]`
table is created. Whether a layout loads (GPUs per node, engines in whole tensor-parallel
slices, nodes and SLURM) is the loader mirror's alone (whileai.targets.prime_rl.loader), for
compiled and hand-written files alike.
"""

from __future__ import annotations

from shlex import quote
from typing import TYPE_CHECKING, Any

from whileai.cost import sizes
from whileai.spec.layout import DEFAULT_GPUS_PER_NODE, Slurm
from whileai.targets.fieldmap import Drop, Fix, Row, To, const, get_path
from whileai.targets.prime_rl import nodes
from whileai.words import counted

if TYPE_CHECKING:
    from whileai.targets.prime_rl.plan import CompilePlan

NO_INFERENCE = "inference_nodes = 0: no inference, so no rollouts (a trainer benchmark on fake data)"
_ONE = "one node"


def _tp_written(p: CompilePlan) -> bool:
    return p.serves and p.run.inference_tp is None and (p.multi or p.engine[0] > 1)


def rows(p: CompilePlan) -> list[Row]:
    """The deployment keys of the plan's layout: one node, or several through SLURM."""
    r, lay, one, several = p.run, p.layout, not p.multi, p.multi
    per_replica = (f"prime-rl counts inference nodes per replica: {lay.inference_nodes} "
                   f"node{'s' if lay.inference_nodes != 1 else ''} in {lay.replicas} "
                   f"replica{'s' if lay.replicas != 1 else ''}")
    default_per = r.gpus_per_node == DEFAULT_GPUS_PER_NODE
    return [
        # one node
        To("gpus", "deployment.num_train_gpus", const(lay.trainer_gpus),
           when=const(one and r.gpus is not None),
           note=f"{lay.gpus} GPUs minus {lay.inference_gpus} for inference"),
        To("gpus", "deployment.num_infer_gpus", const(lay.inference_gpus),
           when=const(one and r.gpus is not None), note="half of the GPUs, rounded down"),
        Fix("deployment.num_train_gpus", 1, "gpus unset: prime-rl's default layout, 1 trainer GPU",
            when=const(one and r.gpus is None)),
        Fix("deployment.num_infer_gpus", 1, "gpus unset: prime-rl's default layout, 1 inference GPU",
            when=const(one and r.gpus is None and r.inference_gpus is None)),
        To("inference_gpus", "deployment.num_infer_gpus", when=const(one)),
        Fix("deployment.type", "single_node", "one machine; inference takes the first GPUs",
            when=const(one)),
        To("nodes", "deployment.type", const("single_node"), when=const(one and r.nodes is not None),
           note=_ONE),
        To("gpus_per_node", "deployment.gpus_per_node", when=const(one and not default_per),
           note="prime-rl refuses more GPUs than this on one node"),
        Drop("gpus_per_node", f"one node with prime-rl's default gpus_per_node "
             f"({DEFAULT_GPUS_PER_NODE}): nothing to write", when=const(one and default_per)),
        # several nodes
        Fix("deployment.type", "multi_node", "nodes > 1: prime-rl places the trainer and inference "
            "on whole nodes through SLURM", when=const(several)),
        To("nodes", "deployment.num_train_nodes", const(lay.trainer_nodes), when=const(several),
           note=f"{r.nodes} nodes minus {lay.inference_nodes} for inference"),
        To("nodes", "deployment.num_infer_nodes", const(lay.nodes_per_replica),
           when=const(several and r.inference_nodes is None),
           note="inference_nodes unset: half the nodes, rounded down; " + per_replica),
        To("inference_nodes", "deployment.num_infer_nodes", const(lay.nodes_per_replica),
           when=const(several and r.inference_nodes is not None),
           note=per_replica if p.serves else NO_INFERENCE),
        To("inference_replicas", "deployment.num_infer_replicas", when=const(several)),
        Fix("deployment.num_infer_replicas", lay.replicas, "inference_replicas unset: one replica "
            "per inference node (prime-rl's nemotron-3-super and glm-4.5-air examples)",
            when=const(several and p.serves and r.inference_replicas is None)),
        To("gpus_per_node", "deployment.gpus_per_node", when=const(several)),
        Drop("gpus", f"several nodes take whole nodes: nodes x gpus_per_node = {lay.gpus}, "
             "written as node counts", when=const(several)),
        To("nodes_per_fsdp_group", "deployment.nodes_per_fsdp_group", when=const(several),
           note=f"prime-rl sets trainer.model.dp_replicate = {lay.trainer_nodes} / "
           f"{r.nodes_per_fsdp_group}"),
        # SLURM
        Fix("slurm", {"job_name": nodes.job_name(r)}, "several nodes run through SLURM only "
            "(prime-rl: 'Must use SLURM for multi-node deployment'); add a [slurm] table for the "
            "partition, account and time", when=const(several and r.slurm is None)),
        *SLURM_ROWS,
    ]


SLURM_ROWS: list[Row] = [
    *[To(f"slurm.{key}", f"slurm.{key}") for key in Slurm.model_fields],
    Fix("slurm.job_name", nodes.job_name, "slurm.job_name unset: the method and taskset",
        when=lambda r: r.slurm is not None and r.slurm.job_name is None),
]


def engine_rows(p: CompilePlan) -> list[Row]:
    """The policy's inference engines: their width, and on several nodes how many."""
    tp, why = p.engine
    lay, several = p.layout, p.multi and p.serves
    local = lay.gpus_per_node // tp
    return [
        To("inference_tp", "inference.vllm.tensor_parallel_size", when=const(p.serves)),
        Fix("inference.vllm.tensor_parallel_size", tp, why, when=const(_tp_written(p))),
        Fix("inference.vllm.data_parallel_size", lay.nodes_per_replica * local,
            f"engines per replica: {lay.nodes_per_replica} node(s) x gpus_per_node / "
            "tensor_parallel_size (the loader's multi-node rule; its template starts one engine "
            "per tensor-parallel slice)", when=const(several)),
        Fix("inference.vllm.data_parallel_size_local", local,
            "engines per node: gpus_per_node / tensor_parallel_size", when=const(several)),
    ]


def no_inference(path: str) -> str | None:
    """Why a run without inference nodes has no `path` (a key of [inference]), else None."""
    return NO_INFERENCE if path.startswith("inference.") else None


def tp_hint(p: CompilePlan, path: str) -> str:
    """What the spec offers when the loader refuses the engine width whileai chose (the
    model's size), not one the spec or an override set."""
    if path not in ("deployment.num_infer_gpus", "inference.vllm.tensor_parallel_size") \
            or p.run.inference_tp is not None or not _tp_written(p) \
            or "inference.vllm.tensor_parallel_size" in p.run.overrides:
        return ""
    tp, why = p.engine
    if not p.multi:
        return f"engines of {tp} GPUs: {why}; raise gpus / inference_gpus, or set inference_tp"
    return (f"engines of {tp} GPUs: {why}; set inference_tp, or serve a mixture-of-experts model "
            "with expert parallelism through overrides (inference.vllm.enable_expert_parallel)")


def _deployment(doc: dict[str, Any]) -> dict[str, Any]:
    dep = doc.get("deployment")
    return dep if isinstance(dep, dict) else {}


def gpus_of(doc: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """(trainer GPUs, inference GPUs, nodes, gpus_per_node) as the compiled document states
    them; None when overrides made them unreadable."""
    dep = _deployment(doc)
    per = dep.get("gpus_per_node", DEFAULT_GPUS_PER_NODE)
    if dep.get("type") == "multi_node":
        train, infer = dep.get("num_train_nodes"), dep.get("num_infer_nodes", 0)
        reps = dep.get("num_infer_replicas", 1)
        if not all(isinstance(x, int) for x in (per, train, infer, reps)):
            return None
        return train * per, infer * reps * per, train + infer * reps, per
    train, infer = dep.get("num_train_gpus", 1), dep.get("num_infer_gpus", 1)
    if not all(isinstance(x, int) for x in (per, train, infer)):
        return None
    return train, infer, 1, per


def facts(p: CompilePlan, doc: dict[str, Any], got: tuple[int, int, int, int] | None) -> dict[str, Any]:
    """What the scale rules (whileai.targets.prime_rl.rules) read, from the compiled document (got: its
    GPUs, `gpus_of`) and the plan (the student's size)."""
    tp = get_path(doc, "inference.vllm.tensor_parallel_size", 1)
    size = p.sizes[p.run.model]
    return {"on_slurm": isinstance(doc.get("slurm"), dict), "nodes": got[2] if got else None,
            "output_dir": doc.get("output_dir", "outputs"),
            "slurm_partition": get_path(doc, "slurm.partition"),
            "engine_tp": tp if isinstance(doc.get("inference"), dict) else None,
            "engine_need": sizes.serve_gpus(size.total_b) if size else None}


def layout_fact(doc: dict[str, Any], got: tuple[int, int, int, int] | None, teachers: int = 0) -> str:
    """The layout as the compiled document (overrides included) states it (got: `gpus_of`),
    with the GPUs the teachers' servers hold (`teachers`: what the cost line counts too)."""
    if got is None:
        return "GPUs as overridden"
    train, infer, nodes, per = got
    if _deployment(doc).get("type") != "multi_node":
        held = f", {counted(teachers, 'teacher GPUs')}" if teachers else ""
        return (f"{infer + train + teachers} GPUs ({counted(infer, 'inference GPUs')}, "
                f"{counted(train, 'trainer GPUs')}{held})")
    reps = _deployment(doc).get("num_infer_replicas", 1)
    what = (f"{counted(infer // per, 'inference nodes')} ({counted(reps, 'replicas')} of "
            f"{counted(infer // per // reps, 'nodes')})" if infer else "no inference (fake data)")
    held = f", + {teachers} teacher GPU{'s' if teachers != 1 else ''}" if teachers else ""
    return (f"{nodes * per} GPUs on {nodes} nodes x {per} ({counted(train // per, 'trainer nodes')}, "
            f"{what}){held}")


def run_commands(p: CompilePlan, fname: str) -> list[str]:
    """How the run starts: locally, or through SLURM as the pin's launcher does it."""
    f = quote(fname)
    if not p.on_slurm:
        return [f"uv run rl @ {f}"]
    out = p.run.output_dir.rstrip("/")
    return [f"uv run rl @ {f} --dry-run  # writes {out}/<run name>/rl.sbatch and the resolved "
            "configs; submits nothing",
            f"uv run rl @ {f}  # submits that script with sbatch (or: sbatch "
            f"{out}/<run name>/rl.sbatch)"]


__all__ = ["engine_rows", "facts", "gpus_of", "layout_fact", "no_inference", "rows", "run_commands",
           "tp_hint"]
