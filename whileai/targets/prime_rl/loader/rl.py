"""The `rl` entry point's own load-time rules (prime-rl 559b447 configs/rl.py and
utils/validation.py): shared fields copied into the trainer, orchestrator and inference, and
the cross-field rules between them. The deployment rules (nodes, [slurm], routers, engines
per node) live in whileai.targets.prime_rl.loader.deploy and run here as one rule.

`propagate` is validation.py's `propagate_shared_fields` as a table: a shared value fills
each target that is unset, and a target set to a *different* value is a conflict. The rules
then read the propagated document, as the loader's after-validators do.
"""

from __future__ import annotations

import copy
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlparse

from whileai.catalogs.paths import get_path
from whileai.targets.prime_rl.loader.trainer import protected_env_vars
from whileai.targets.prime_rl.loader.view import Found, RuleSet, View

RL = RuleSet("RLConfig")
# validation.py:10: shared field → the sub-config fields it fills when they are unset
SHARED: list[tuple[str, tuple[str, ...]]] = [
    ("model.name", ("trainer.model.name", "inference.vllm.model", "orchestrator.model.name")),
    ("model.vlm", ("trainer.model.vlm", "orchestrator.model.vlm")),
    ("log.level", ("trainer.log.level", "orchestrator.log.level", "inference.log.level")),
    ("log.json_logging", ("trainer.log.json_logging", "orchestrator.log.json_logging",
                          "inference.log.json_logging")),
    ("ckpt.output_dir", ("trainer.ckpt.output_dir",)),
    *[(f"ckpt.{k}", (f"trainer.ckpt.{k}", f"orchestrator.ckpt.{k}"))
      for k in ("interval", "keep_last", "keep_interval")],
    *[(f"monitors.wandb.{k}", (f"trainer.monitors.wandb.{k}", f"orchestrator.monitors.wandb.{k}"))
      for k in ("project", "entity", "name", "group", "tags", "offline")],
    ("monitors.file.path", ("trainer.monitors.file.path", "orchestrator.monitors.file.path")),
    ("monitors.prime.name", ("orchestrator.monitors.prime.name",)),
    ("tokenizer.name", ("trainer.tokenizer.name", "orchestrator.tokenizer.name")),
    ("tokenizer.trust_remote_code", ("trainer.tokenizer.trust_remote_code",
                                     "orchestrator.tokenizer.trust_remote_code")),
    ("tokenizer.chat_template", ("trainer.tokenizer.chat_template",
                                 "orchestrator.tokenizer.chat_template", "inference.vllm.chat_template")),
    ("rollout_transport", ("trainer.rollout_transport", "orchestrator.rollout_transport")),
    ("max_steps", ("trainer.max_steps", "orchestrator.max_steps")),
    ("seq_len", ("trainer.model.seq_len", "orchestrator.seq_len")),
    ("slurm", ("inference.slurm",)),
    ("trainer.tokenizer.chat_template", ("inference.vllm.chat_template",)),  # validation.py:140
]
# a bare table enables the section on these sub-configs; "None" disables it there too
PRESENCE = {"ckpt": ("trainer", "orchestrator"), "monitors.wandb": ("trainer", "orchestrator"),
            "monitors.file": ("trainer", "orchestrator"), "monitors.prime": ("orchestrator",)}


def propagate(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str, Any]]]:
    """The document after the loader's shared-field copies, and the conflicts it finds as
    (shared key, sub-config key, shared value)."""
    out = copy.deepcopy(doc)
    conflicts: list[tuple[str, str, Any]] = []
    for shared, targets in SHARED:
        value = get_path(out, shared)
        if value is None:
            continue
        for target in targets:
            sub = get_path(out, target)
            if sub is not None and sub != value and shared != "trainer.tokenizer.chat_template":
                conflicts.append((shared, target, value))
        for target in targets:
            _fill(out, target, copy.deepcopy(value))
    for key, targets in PRESENCE.items():
        value = get_path(out, key)
        if isinstance(value, dict) or value == "None":
            for target in targets:
                _fill(out, f"{target}.{key}", {} if isinstance(value, dict) else "None")
    return out, conflicts


def _fill(doc: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    if not isinstance(doc.get(parts[0]), dict):
        return
    node: Any = doc
    for p in parts[:-1]:
        if not isinstance(node, dict):
            return
        node = node.setdefault(p, {})
    if isinstance(node, dict) and parts[-1] not in node:
        node[parts[-1]] = value


def run_dir(doc: dict[str, Any]) -> str:
    """rl.py:389: the trainer's and orchestrator's output_dir, output_dir / run.dir (run.dir
    defaults to run.name, which the loader makes up when unset: `<run name>` here)."""
    got = doc.get("run")
    run: dict[str, Any] = got if isinstance(got, dict) else {}
    name = run.get("dir") or run.get("name") or "<run name>"
    return str(PurePosixPath(str(doc.get("output_dir", "outputs"))) / str(name))


def weight_broadcast(r: View) -> str:
    """rl.py:449: the shared type, else filesystem with LoRA or without [inference], else nccl."""
    kind = r["weight_broadcast.type"] if r.present("weight_broadcast") else None
    if kind is None:
        return "filesystem" if r.present("trainer.model.lora") or not r.present("inference") else "nccl"
    return str(kind)


def _gpus(r: View) -> int | None:
    if r["deployment.type"] != "single_node":
        return None
    train, infer = r.get("deployment.num_train_gpus", int), r.get("deployment.num_infer_gpus", int)
    return train + infer if isinstance(train, int) and isinstance(infer, int) else None


@RL("wandb-offline", "rl.py:85")
def _wandb_offline(r: View) -> Found:
    if r.present("monitors.wandb") and r["monitors.wandb.offline"] is True:
        return "monitors.wandb.offline", ("shared W&B mode is always on under rl and needs the "
                                          "server; set offline per process in trainer/orchestrator")
    return None


@RL("gpus-per-node", "rl.py:187")
def _gpu_count(r: View) -> Found:
    total, per_node = _gpus(r), r.get("deployment.gpus_per_node", int, 8)
    if total is not None and total > per_node:
        return "deployment", f"{total} GPUs (train + inference) exceed gpus_per_node {per_node}"
    return None


@RL("nccl-two-gpus", "rl.py:352; whileai for the shared/default transport")
def _nccl(r: View) -> Found:
    total = _gpus(r)
    if total is None or total >= 2:
        return None
    if r["trainer.weight_broadcast.type"] == "nccl":
        return "trainer.weight_broadcast.type", "NCCL weight transfer needs at least 2 GPUs"
    if weight_broadcast(r) == "nccl":
        how = ("the shared weight_broadcast" if r.present("weight_broadcast")
               else "the default for full weights with [inference]")
        return "weight_broadcast.type", (
            f"the weight transfer resolves to NCCL ({how}), "
            f"which needs at least 2 GPUs; this run has {total}. prime-rl's loader accepts it and "
            "the run fails when it builds the process group: set weight_broadcast.type = 'filesystem'")
    return None


@RL("quantized-transfer", "rl.py:362")
def _quantized(r: View) -> Found:
    if r["weight_broadcast.type"] != "nccl" or r["weight_broadcast.quantize_in_weight_transfer"] is not True:
        return None
    if not r.present("inference"):
        return "weight_broadcast.quantize_in_weight_transfer", "needs an [inference] table"
    if r["trainer.model.impl"] != "custom":
        return "trainer.model.impl", "quantize_in_weight_transfer needs impl = 'custom'"
    return None


@RL("run-dir", "rl.py:389")
def _output_dirs(r: View) -> Found:
    out = []
    run = r["run.dir"] or r["run.name"]
    for sub in ("trainer", "orchestrator"):
        if not r.has(f"{sub}.output_dir"):
            continue
        written = PurePosixPath(str(r[f"{sub}.output_dir"]))
        if not run or written != PurePosixPath(str(r["output_dir"])) / str(run):
            out.append((f"{sub}.output_dir", "under rl the sub-config output_dir is derived from "
                        "output_dir / run.name: set output_dir (and run.name) instead"))
    return out


@RL("shared-model-name", "validation.py:216")
def _model_name(r: View) -> Found:
    orch = r["orchestrator.model.name"]
    if r.present("inference"):
        if r["inference.vllm.model"] != orch:
            return "inference.vllm.model", (f"{r['inference.vllm.model']!r} differs from the "
                                            f"orchestrator's model {orch!r}")
        return None
    trainer = str(r["trainer.model.name"])
    if not trainer.startswith("Jackmin108/") and trainer != orch:
        return "orchestrator.model.name", f"{orch!r} differs from the trainer's model {trainer!r}"
    return None


@RL("shared-chat-template", "validation.py:282")
def _chat_template(r: View) -> Found:
    trainer = r["trainer.tokenizer.chat_template"]
    if trainer != r["orchestrator.tokenizer.chat_template"]:
        return "orchestrator.tokenizer.chat_template", "differs from the trainer's chat_template"
    if r.present("inference") and trainer != r["inference.vllm.chat_template"]:
        return "inference.vllm.chat_template", "differs from the trainer's chat_template"
    return None


@RL("shared-steps-and-lengths", "validation.py:261, :271")
def _steps(r: View) -> Found:
    if r["trainer.max_steps"] != r["orchestrator.max_steps"]:
        return "orchestrator.max_steps", (f"{r['orchestrator.max_steps']!r} differs from "
                                          f"trainer.max_steps {r['trainer.max_steps']!r}")
    trainer, orch = r.get("trainer.model.seq_len", int), r.get("orchestrator.seq_len", int)
    if isinstance(trainer, int) and isinstance(orch, int) and trainer < orch:
        return "trainer.model.seq_len", (f"{trainer} is below orchestrator.seq_len {orch}: the "
                                         "trainer must hold every sequence the orchestrator builds")
    return None


def _both_sides(r: View, table: str, key: str, what: str) -> Found:
    """validation.py:194, :238: a table on the trainer needs it on the orchestrator too (and
    the reverse), with the same `key`."""
    trainer, orch = r.present(f"trainer.{table}"), r.present(f"orchestrator.{table}")
    if trainer != orch:
        return (f"{'orchestrator' if trainer else 'trainer'}.{table}",
                f"{what} must be configured on both trainer and orchestrator (use [{table}])")
    if trainer and r[f"trainer.{table}.{key}"] != r[f"orchestrator.{table}.{key}"]:
        return f"orchestrator.{table}.{key}", f"differs from trainer.{table}.{key}"
    return None


@RL("shared-ckpt", "validation.py:194")
def _ckpt(r: View) -> Found:
    found = _both_sides(r, "ckpt", "interval", "checkpoints")
    if not found and not r.present("resume") and r["trainer.resume"] != r["orchestrator.resume"]:
        return "orchestrator.resume", "differs from trainer.resume (use the shared [resume])"
    return found


@RL("shared-wandb", "validation.py:238")
def _wandb(r: View) -> Found:
    return _both_sides(r, "monitors.wandb", "project", "W&B")


@RL("lora-filesystem", "rl.py:449")
def _lora(r: View) -> Found:
    if r.present("trainer.model.lora") and weight_broadcast(r) != "filesystem":
        return "weight_broadcast.type", ("LoRA needs filesystem weight transfer: set "
                                         "weight_broadcast.type = 'filesystem'")
    return None


@RL("rollout-transport", "rl.py:501")
def _transport(r: View) -> Found:
    if r["trainer.rollout_transport.type"] != r["orchestrator.rollout_transport.type"]:
        return "orchestrator.rollout_transport.type", "differs from trainer.rollout_transport.type"
    return None


@RL("eplb-transfer", "rl.py:523")
def _eplb(r: View) -> Found:
    if r.present("inference") and r["inference.vllm.enable_eplb"] is True and not (
            weight_broadcast(r) == "nccl" and r["weight_broadcast.quantize_in_weight_transfer"] is True):
        return "inference.vllm.enable_eplb", ("needs weight_broadcast.type = 'nccl' with "
                                              "quantize_in_weight_transfer = true")
    return None


@RL("lora-rank-alpha", "rl.py:538")
def _lora_match(r: View) -> Found:
    if not r.present("trainer.model.lora"):
        return None
    for key in ("rank", "alpha"):
        mine = r[f"orchestrator.model.lora.{key}"] if r.present("orchestrator.model.lora") else None
        if mine is not None and mine != r[f"trainer.model.lora.{key}"]:
            return f"orchestrator.model.lora.{key}", f"differs from trainer.model.lora.{key}"
    return None


@RL("router-replay-kv-offload", "rl.py:631")
def _replay(r: View) -> Found:
    if r["trainer.enable_router_replay"] is True and r.present("inference") \
            and r.present("inference.kv_cache_offload"):
        return "inference.kv_cache_offload", "router replay cannot run with KV cache offload"
    return None


@RL("inference-tensor-parallel", "rl.py:670")
def _tp(r: View) -> Found:
    if r["deployment.type"] != "single_node" or not r.present("inference"):
        return None
    gpus, tp = r.get("deployment.num_infer_gpus", int), r.get("inference.vllm.tensor_parallel_size", int)
    dp = r.get("inference.vllm.data_parallel_size", int, 1)
    if isinstance(gpus, int) and isinstance(tp, int) and tp > 0 and gpus != dp * tp and gpus % tp:
        return "deployment.num_infer_gpus", f"{gpus} is not divisible by tensor_parallel_size {tp}"
    return None


@RL("client-port", "whileai: entrypoints/rl.py launch check")
def _client_port(r: View) -> Found:
    """`uv run rl` refuses to launch when the policy client and the inference server disagree
    on the port (the loader itself accepts the file)."""
    if not r.present("inference") or r.present("slurm") or r["dry_run"] is True:
        return None
    sources = r.items("orchestrator.train.source")
    auto = not r.has("orchestrator.model.client.base_url") and all(
        (s["algo.type"] if s.present("algo") else r["orchestrator.algo.type"]) == "sft" for s in sources)
    port = urlparse(str(r["orchestrator.model.client.base_url"])).port
    server = r["inference.server.port"]
    if not auto and port != server:
        return "inference.server.port", (f"{server} differs from the policy client's port {port} "
                                         "(orchestrator.model.client.base_url); `uv run rl` "
                                         "refuses to launch")
    return None


RL("env-vars-protected", "shared.py:27")(protected_env_vars)


@RL("deployment-nodes", "rl.py:305, :332, :625, :644, :658, :767")
def _nodes(r: View) -> Found:
    from whileai.targets.prime_rl.loader.deploy import node_rules

    return node_rules(r.doc) if isinstance(r.doc, dict) else None
