"""prime-rl's deployment rules at 559b447, for any rl document (compiled or hand-written) and
for `uv run inference` documents: what the loader raises about nodes, GPUs, SLURM and routers.

Each rule cites the loader's validator (configs/rl.py, configs/inference.py) and, where the
loader is silent but the launcher would fail, says so (an engine wider than a node starts
nothing). Values of the wrong type are the schema's to report: rules skip what they cannot judge.
"""

from __future__ import annotations

from typing import Any

from whileai.catalogs.paths import get_path
from whileai.catalogs.targets import Problem

GPUS_PER_NODE = 8  # the pin's DeploymentConfig default (whileai.spec.layout.DEFAULT_GPUS_PER_NODE:
# the same number; the loader mirror stays free of pydantic for `whileai check`)


def _int(v: Any, default: int) -> int | None:
    if v is None:
        return default
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _table(v: Any) -> dict[str, Any] | None:
    """A table, or None for an absent one and for the string "None" (the loader's null)."""
    return v if isinstance(v, dict) else None


def infer_nodes_of(infer: dict[str, Any] | None) -> int:
    """Inference nodes per replica as the loader infers them from [inference] (rl.py:305)."""
    if infer is None:
        return 0
    dep = _table(infer.get("deployment")) or {}
    kind = dep.get("type", "single_node")
    if kind == "multi_node":
        return _int(dep.get("num_nodes"), 2) or 0
    if kind == "disaggregated":
        n = [_int(dep.get(k), 1) or 0 for k in ("prefill_nodes_per_replica", "num_prefill_replicas",
                                                "decode_nodes_per_replica", "num_decode_replicas")]
        return n[0] * n[1] + n[2] * n[3]
    return 1


def node_rules(doc: dict[str, Any]) -> list[Problem]:
    """Nodes, SLURM, routers and engines of an rl document (rl.py:305-767); the single-node GPU
    count and tensor-parallel rules are the rl rule set's own (loader/rl.py)."""
    dep = _table(doc.get("deployment")) or {}
    infer = _table(doc.get("inference"))
    slurm = _table(doc.get("slurm")) is not None
    out: list[Problem] = []
    offload = _table((infer or {}).get("kv_cache_offload"))
    if offload and offload.get("type") == "mooncake" and not slurm:
        out.append(Problem("inference.kv_cache_offload.type", "mooncake KV offload needs [slurm]: "
                           "the per-node store is launched by the sbatch template (rl.py:644)"))
    vllm = _table((infer or {}).get("vllm")) or {}
    tp = _int(vllm.get("tensor_parallel_size"), 1)
    per = _int(dep.get("gpus_per_node"), GPUS_PER_NODE)
    kind = dep.get("type", "single_node")
    if kind != "multi_node":
        return out
    if not slurm:
        out.append(Problem("slurm", "a [slurm] table is required: 'Must use SLURM for multi-node "
                           "deployment.' (rl.py:332)"))
    inferred = infer_nodes_of(infer)
    nodes = _int(dep.get("num_infer_nodes"), inferred)
    ikind = (_table((infer or {}).get("deployment")) or {}).get("type", "single_node")
    if nodes is None:
        return out
    if "num_infer_nodes" in dep and infer is not None and ikind == "multi_node" and nodes != inferred:
        out.append(Problem("deployment.num_infer_nodes", f"({nodes}) must equal "
                           f"inference.deployment.num_nodes ({inferred}) for multi-node inference "
                           "(rl.py:305)"))
    if ikind == "disaggregated" and nodes != inferred:
        out.append(Problem("deployment.num_infer_nodes", f"({nodes}) must equal the disaggregated "
                           f"inference nodes per replica ({inferred}) (rl.py:767)"))
    if nodes > 0 and infer is None:
        out.append(Problem("inference", f"must be configured: the deployment has {nodes} inference "
                           "node(s) per replica (rl.py:332)"))
    if nodes == 0 and infer is not None:
        out.append(Problem("inference", "cannot be configured with num_infer_nodes = 0: set "
                           "num_infer_nodes > 0 or remove [inference] (rl.py:332)"))
    if nodes == 0 and _table(get_path(doc, "trainer.data.fake")) is None:
        out.append(Problem("trainer.data.fake", "must be set when num_infer_nodes = 0: no "
                           "orchestrator or inference server runs, so the trainer needs fake data "
                           "(rl.py:332)"))
    if infer is not None and "router" in infer and _table(infer.get("router")) is None:
        out.append(Problem("inference.router", "multi-node deployments require a router to front "
                           "the per-rank engines (rl.py:625)"))
    train = _int(dep.get("num_train_nodes"), 0)
    group = dep.get("nodes_per_fsdp_group")
    if isinstance(group, int) and not isinstance(group, bool) and group > 0 and train and train % group:
        out.append(Problem("deployment.nodes_per_fsdp_group", f"deployment.num_train_nodes ({train}) "
                           f"must be divisible by deployment.nodes_per_fsdp_group ({group}) "
                           "(rl.py:658)"))
    if infer is not None and ikind != "disaggregated" and tp and per:
        out += _engines(vllm, tp, per, nodes)
    return out


def _engines(vllm: dict[str, Any], tp: int, per: int, nodes: int) -> list[Problem]:
    """Engines on inference nodes: the expert-parallel rules of rl.py:658, and (whileai, where
    the loader is silent) an engine must fit one node or the template starts none."""
    where = "inference.vllm.tensor_parallel_size"
    if per % tp:
        why = ("rl.py:658, expert parallel" if vllm.get("enable_expert_parallel") is True else
               "the multi-node template starts gpus_per_node / tensor_parallel_size engines per "
               "node: " + ("none" if tp > per else f"{per % tp} GPUs idle"))
        return [Problem(where, f"{tp} must divide deployment.gpus_per_node ({per}) ({why})")]
    if vllm.get("enable_expert_parallel") is not True:
        return []
    dp = _int(vllm.get("data_parallel_size"), 1)
    local = vllm.get("data_parallel_size_local")
    out = []
    if dp is not None and dp * tp != nodes * per:
        out.append(Problem("inference.vllm.data_parallel_size", f"data_parallel_size x "
                           f"tensor_parallel_size ({dp * tp}) must match the inference GPUs per "
                           f"replica ({nodes * per}) for multi-node expert parallel (rl.py:658)"))
    if isinstance(local, int) and local != per // tp:
        out.append(Problem("inference.vllm.data_parallel_size_local", f"must equal gpus_per_node / "
                           f"tensor_parallel_size ({per // tp}) with expert parallel (rl.py:658)"))
    return out


def inference_rules(infer: dict[str, Any] | None, prefix: str = "", slurm: bool = False) -> list[Problem]:
    """InferenceConfig's own deployment and router rules (inference.py:486-503). `slurm`: a
    [slurm] table the loader copies in (rl's top-level one)."""
    if infer is None:
        return []
    out = []
    kind = (_table(infer.get("deployment")) or {}).get("type", "single_node")
    router = infer.get("router", {"type": "vllm-router"})
    rtype = router.get("type", "vllm-router") if isinstance(router, dict) else None
    if kind in ("multi_node", "disaggregated") and not slurm and _table(infer.get("slurm")) is None:
        out.append(Problem(f"{prefix}slurm", "must be set: 'Must use SLURM for multi-node / "
                           "disaggregated deployment.' (inference.py:486)"))
    if rtype is None and kind in ("multi_node", "disaggregated"):
        out.append(Problem(f"{prefix}router", "multi-node / disaggregated deployments require a "
                           "router fronting the per-rank engines (inference.py:503)"))
    if rtype == "llm-d" and kind == "single_node":
        out.append(Problem(f"{prefix}router.type", "the llm-d router needs a multi-node or "
                           "disaggregated SLURM deployment (inference.py:503)"))
    return out
