"""prime-rl's deployment: one node (single_node) or several on SLURM (multi_node), as field-map
rows, plus what compile needs around them (the inference engines' sizes, a run on fake data,
the run section, the layout fact).

DEPLOY_ROWS go where the deployment keys belong; ENGINE_ROWS after the `[inference]` table is
created. Whether a layout loads (GPUs per node, engines in whole tensor-parallel slices, nodes
and SLURM) is the loader mirror's alone (whileai.targets.prime_rl.loader), for compiled and
hand-written files alike.
"""

from __future__ import annotations

from shlex import quote
from typing import Any

from whileai.cost import estimate as cost
from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.spec import mixture
from whileai.spec.layout import Slurm
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Fixed, Ignore, Read
from whileai.targets.fieldmap import Drop, Fix, Row, To, get_path

DEFAULT_GPUS_PER_NODE = 8
NO_INFERENCE = "inference_nodes = 0: no inference, so no rollouts (a trainer benchmark on fake data)"


def single(r: RunSpec) -> bool:
    return not r.layout.multi


def multi(r: RunSpec) -> bool:
    return r.layout.multi


def serves(r: RunSpec) -> bool:
    """Whether the run has inference (a multi-node run may have none: fake data)."""
    return single(r) or r.layout.inference_nodes > 0


def on_slurm(r: RunSpec) -> bool:
    return multi(r) or r.slurm is not None


def job_name(r: RunSpec) -> str:
    if r.slurm is not None and r.slurm.job_name:
        return r.slurm.job_name
    base = r.taskset.split("/")[-1].split("@")[0]
    return f"{r.method.type}-{base}"


def engine_tp(r: RunSpec) -> tuple[int, str]:
    """GPUs per inference engine (vLLM tensor_parallel_size) and why."""
    if r.inference_tp is not None:
        return r.inference_tp, "inference_tp"
    size = sizes.params(r.model)
    if size is None:
        return 1, (f"the size of {r.model} is unknown from its name: vLLM's default of one GPU "
                   "per engine; set inference_tp if it needs more")
    need = sizes.serve_gpus(size.total_b)
    return need, (f"{size.text()}: {sizes.weights_gb(size.total_b):g} GB of bf16 weights plus KV "
                  f"headroom take {need} GPU{'s' if need > 1 else ''} ({sizes.SERVE_FORMULA})")


def _tp_written(r: RunSpec) -> bool:
    return serves(r) and r.inference_tp is None and (multi(r) or engine_tp(r)[0] > 1)


def _dp_local(r: RunSpec) -> int:
    return r.gpus_per_node // engine_tp(r)[0]


def _infer_nodes_note(r: RunSpec) -> str:
    lay = r.layout
    return (f"prime-rl counts inference nodes per replica: {lay.inference_nodes} "
            f"node{'s' if lay.inference_nodes != 1 else ''} in {lay.replicas} "
            f"replica{'s' if lay.replicas != 1 else ''}")


_ONE = "one node"


def _set(r: RunSpec, field: str) -> bool:
    """A one-node run whose `field` is set (rows with a computed value run even when unset)."""
    return single(r) and getattr(r, field) is not None


DEPLOY_ROWS: list[Row] = [
    # one node
    To("gpus", "deployment.num_train_gpus", lambda r: r.train_gpus, when=lambda r: _set(r, "gpus"),
       note=lambda r: f"{r.total_gpus} GPUs minus {r.infer_gpus} for inference"),
    To("gpus", "deployment.num_infer_gpus", lambda r: r.infer_gpus, when=lambda r: _set(r, "gpus"),
       note="half of the GPUs, rounded down"),
    Fix("deployment.num_train_gpus", 1, "gpus unset: prime-rl's default layout, 1 trainer GPU",
        when=lambda r: single(r) and r.gpus is None),
    Fix("deployment.num_infer_gpus", 1, "gpus unset: prime-rl's default layout, 1 inference GPU",
        when=lambda r: single(r) and r.gpus is None and r.inference_gpus is None),
    To("inference_gpus", "deployment.num_infer_gpus", when=single),
    Fix("deployment.type", "single_node", "one machine; inference takes the first GPUs", when=single),
    To("nodes", "deployment.type", lambda r: "single_node", when=lambda r: _set(r, "nodes"),
       note=_ONE),
    To("gpus_per_node", "deployment.gpus_per_node",
       when=lambda r: single(r) and r.gpus_per_node != DEFAULT_GPUS_PER_NODE,
       note="prime-rl refuses more GPUs than this on one node"),
    Drop("gpus_per_node", "one node with prime-rl's default gpus_per_node (8): nothing to write",
         when=lambda r: single(r) and r.gpus_per_node == DEFAULT_GPUS_PER_NODE),
    # several nodes
    Fix("deployment.type", "multi_node", "nodes > 1: prime-rl places the trainer and inference "
        "on whole nodes through SLURM", when=multi),
    To("nodes", "deployment.num_train_nodes", lambda r: r.layout.trainer_nodes, when=multi,
       note=lambda r: f"{r.nodes} nodes minus {r.layout.inference_nodes} for inference"),
    To("nodes", "deployment.num_infer_nodes", lambda r: r.layout.nodes_per_replica,
       when=lambda r: multi(r) and r.inference_nodes is None,
       note=lambda r: "inference_nodes unset: half the nodes, rounded down; " + _infer_nodes_note(r)),
    To("inference_nodes", "deployment.num_infer_nodes", lambda r: r.layout.nodes_per_replica,
       when=lambda r: multi(r) and r.inference_nodes is not None,
       note=lambda r: _infer_nodes_note(r) if serves(r) else NO_INFERENCE),
    To("inference_replicas", "deployment.num_infer_replicas", when=multi),
    Fix("deployment.num_infer_replicas", lambda r: r.layout.replicas, "inference_replicas unset: "
        "one replica per inference node (prime-rl's nemotron-3-super and glm-4.5-air examples)",
        when=lambda r: multi(r) and serves(r) and r.inference_replicas is None),
    To("gpus_per_node", "deployment.gpus_per_node", when=multi),
    Drop("gpus", lambda r: f"several nodes take whole nodes: nodes x gpus_per_node = "
         f"{r.total_gpus}, written as node counts", when=multi),
    To("nodes_per_fsdp_group", "deployment.nodes_per_fsdp_group", when=multi,
       note=lambda r: f"prime-rl sets trainer.model.dp_replicate = {r.layout.trainer_nodes} / "
       f"{r.nodes_per_fsdp_group}"),
    # SLURM
    Fix("slurm", lambda r: {"job_name": job_name(r)}, "several nodes run through SLURM only "
        "(prime-rl: 'Must use SLURM for multi-node deployment'); add a [slurm] table for the "
        "partition, account and time", when=lambda r: multi(r) and r.slurm is None),
    *[To(f"slurm.{key}", f"slurm.{key}") for key in Slurm.model_fields],
    Fix("slurm.job_name", job_name, "slurm.job_name unset: the method and taskset",
        when=lambda r: r.slurm is not None and r.slurm.job_name is None),
]

ENGINE_ROWS: list[Row] = [
    To("inference_tp", "inference.vllm.tensor_parallel_size", when=serves),
    Fix("inference.vllm.tensor_parallel_size", lambda r: engine_tp(r)[0],
        lambda r: engine_tp(r)[1], when=_tp_written),
    Fix("inference.vllm.data_parallel_size", lambda r: r.layout.nodes_per_replica * _dp_local(r),
        lambda r: f"engines per replica: {r.layout.nodes_per_replica} node(s) x gpus_per_node / "
        f"tensor_parallel_size (the loader's multi-node rule; its template starts one engine "
        "per tensor-parallel slice)", when=lambda r: multi(r) and serves(r)),
    Fix("inference.vllm.data_parallel_size_local", _dp_local,
        "engines per node: gpus_per_node / tensor_parallel_size",
        when=lambda r: multi(r) and serves(r)),
]


def check(run: RunSpec, overrides: dict[str, Any]) -> None:
    """What the backend refuses before it writes: no inference without an explicit fake-data
    benchmark. Engines that do not fit the GPUs are the loader mirror's to refuse
    (whileai.targets.prime_rl.loader: inference-tensor-parallel, deployment-nodes), on the
    compiled file as `whileai check` reads it; `tp_hint` says why the width was chosen."""
    if not serves(run) and not any(k.startswith("trainer.data.fake") for k in overrides):
        raise SpecError("inference_nodes", 0, "at least 1: every method learns from rollouts "
                        "the orchestrator gathers, which need inference nodes (prime-rl runs "
                        "no orchestrator without them)", hint="for a trainer-only "
                        "throughput benchmark on fake data, set it explicitly with "
                        "--set trainer.data.fake.batch_size=N (prime-rl docs/scaling.md)")


def tp_hint(run: RunSpec, path: str) -> str:
    """What the spec offers when the loader refuses the engine width whileai chose (the
    model's size), not one the spec or an override set."""
    if path not in ("deployment.num_infer_gpus", "inference.vllm.tensor_parallel_size") \
            or run.inference_tp is not None or not _tp_written(run) \
            or "inference.vllm.tensor_parallel_size" in run.overrides:
        return ""
    tp, why = engine_tp(run)
    if single(run):
        return f"engines of {tp} GPUs: {why}; raise gpus / inference_gpus, or set inference_tp"
    return (f"engines of {tp} GPUs: {why}; set inference_tp, or serve a mixture-of-experts model "
            "with expert parallelism through overrides (inference.vllm.enable_expert_parallel)")


def without_inference(run: RunSpec, doc: dict[str, Any], reads: list[Read], ignores: list[Ignore],
                      fixed: list[Fixed]) -> None:
    """A run with no inference nodes writes no [inference]: what would have gone there is
    reported as ignored (in place)."""
    if serves(run):
        return
    doc.pop("inference", None)
    gone = [r for r in reads if r.path.startswith("inference.")]
    reads[:] = [r for r in reads if not r.path.startswith("inference.")]
    fixed[:] = [f for f in fixed if not f.path.startswith("inference")]
    said = {i.field for i in ignores} | {r.field for r in reads}
    for r in gone:
        if r.field not in said:
            ignores.append(Ignore(field=r.field, value=r.value, reason=NO_INFERENCE))
            said.add(r.field)


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


def estimate(run: RunSpec, doc: dict[str, Any], plans: list[Any]) -> cost.Cost | None:
    """The cost estimate from the compiled document's batch and layout (whileai.cost.estimate): one part
    per training source (a mixture's share of the rollouts each), each teacher where its plan
    serves it (its own GPUs, GPU 0 beside the policy, or elsewhere: not timed)."""
    got = gpus_of(doc)
    steps = get_path(doc, "max_steps")
    batch = get_path(doc, "orchestrator.batch_size")
    seq = get_path(doc, "seq_len")
    completion = get_path(doc, "orchestrator.train.sampling.max_completion_tokens")
    if got is None or not all(isinstance(x, int) for x in (steps, batch, seq, completion)):
        return None
    train, infer, nodes, per = got
    pools = {"trainer": train, "inference": infer}
    served: dict[str, str | None] = {}  # teacher URL -> its pool
    for k, p in enumerate(plans):
        if p.held:
            pools[f"teacher-{k}"] = p.held
        served[p.url] = f"teacher-{k}" if p.held else None if p.mode == "endpoint" else "inference"
    parts = []
    for e, share in zip(mixture.entries(run), mixture.shares(run), strict=True):
        cap = get_path(doc, f"orchestrator.train.source[{e.pos}].sampling.max_completion_tokens",
                       completion)
        cap = cap if isinstance(cap, int) else completion
        t = e.method.frozen_teacher
        pool = served.get(t.url) if t is not None else None
        sft = e.method.off_policy
        parts.append(cost.Part(share, cap, e.method.SCORER, e.method.SAMPLER,
                               sizes.params(t.model) if t is not None else None,
                               t.model if t is not None else None,
                               {"train": "trainer", "sample": pool if sft else "inference",
                                "teacher": pool if e.method.SCORER == "teacher" else "inference"}))
    first = parts[0]
    held = sum(p.held or 0 for p in plans) or None
    from whileai.targets.prime_rl.evalcost import eval_rollouts, prompt_source

    evals, eval_cap, how = eval_rollouts(run, doc, steps)
    # prompts at the spec's cap: seq_len (prompt_tokens + the longest cap unless overridden) is the
    # trainer's pack length, which truncates long samples for training and caps no prompt
    work = cost.Work(steps, batch, run.prompt_tokens, completion, sizes.params(run.model),
                     first.teacher, first.scorer, run.model, first.teacher_name,
                     stages=("train", "sample", "teacher") if serves(run) else ("train",),
                     sampler=first.sampler, parts=tuple(parts) if run.sources else (),
                     eval_rollouts=evals, eval_max_tokens=eval_cap, eval_how=how,
                     prompt_how=cost.assumed(run.prompt_tokens, prompt_source(run)))
    where: dict[str, str | None] = {**(first.pools or {}), "eval": "inference"}
    return cost.estimate(work, cost.Pools(train + infer, nodes, per, pools, where, held))


def facts(run: RunSpec, doc: dict[str, Any]) -> dict[str, Any]:
    """What the scale rules (whileai.rules.scale) read, from the compiled document."""
    got = gpus_of(doc)
    tp = get_path(doc, "inference.vllm.tensor_parallel_size", 1)
    size = sizes.params(run.model)
    return {"on_slurm": isinstance(doc.get("slurm"), dict), "nodes": got[2] if got else None,
            "output_dir": doc.get("output_dir", "outputs"),
            "slurm_partition": get_path(doc, "slurm.partition"),
            "engine_tp": tp if isinstance(doc.get("inference"), dict) else None,
            "engine_need": sizes.serve_gpus(size.total_b) if size else None}


def layout_fact(doc: dict[str, Any]) -> str:
    """The layout as the compiled document (overrides included) states it."""
    got = gpus_of(doc)
    if got is None:
        return "GPUs as overridden"
    train, infer, nodes, per = got
    if _deployment(doc).get("type") != "multi_node":
        return f"{infer + train} GPUs ({infer} inference, {train} trainer)"
    reps = _deployment(doc).get("num_infer_replicas", 1)
    what = (f"{infer // per} inference ({reps} replica{'s' if reps != 1 else ''} of "
            f"{infer // per // reps})" if infer else "no inference (fake data)")
    return f"{nodes * per} GPUs on {nodes} nodes x {per} ({train // per} trainer, {what})"


def run_commands(run: RunSpec, fname: str) -> list[str]:
    """How the run starts: locally, or through SLURM as the pin's launcher does it."""
    f = quote(fname)
    if not on_slurm(run):
        return [f"uv run rl @ {f}"]
    out = run.output_dir.rstrip("/")
    return [f"uv run rl @ {f} --dry-run  # writes {out}/<run name>/rl.sbatch and the resolved "
            "configs; submits nothing",
            f"uv run rl @ {f}  # submits that script with sbatch (or: sbatch "
            f"{out}/<run name>/rl.sbatch)"]


__all__ = ["DEPLOY_ROWS", "ENGINE_ROWS", "check", "engine_tp", "estimate", "facts", "gpus_of",
           "job_name",
           "layout_fact", "multi",
           "on_slurm", "run_commands", "serves", "single", "tp_hint", "without_inference"]
