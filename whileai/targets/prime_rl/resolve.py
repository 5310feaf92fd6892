"""An offline stand-in for `rl @ cfg --dry-run`: split one rl TOML into its per-process configs.

prime-rl's loader copies the shared top-level fields into the trainer, orchestrator and
inference configs when they are unset there (README "Loading"); every other key keeps the
default of the pinned schema. `resolve()` does the same for the keys a run depends on and
says where each final value came from, so a dry run can be read without prime-rl installed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from whileai.catalogs.targets import Catalog, prime_rl
from whileai.report.fieldmap import get_path, set_path

# shared top-level field → where the loader copies it
SHARED: dict[str, list[str]] = {
    "model.name": ["trainer.model.name", "orchestrator.model.name", "inference.vllm.model"],
    "max_steps": ["trainer.max_steps", "orchestrator.max_steps"],
    "seq_len": ["trainer.model.seq_len", "orchestrator.seq_len"],
    "output_dir": ["trainer.output_dir", "orchestrator.output_dir", "inference.output_dir"],
    "monitors.wandb": ["trainer.monitors.wandb", "orchestrator.monitors.wandb"],
    "ckpt": ["trainer.ckpt", "orchestrator.ckpt"],
    "tokenizer": ["trainer.tokenizer", "orchestrator.tokenizer"],
}
# the values a reader checks before spending GPU hours
KEY_VALUES = [
    "trainer.model.name", "trainer.max_steps", "trainer.model.seq_len", "trainer.optim.lr",
    "trainer.model.lora.rank", "orchestrator.model.name", "orchestrator.batch_size",
    "orchestrator.group_size", "orchestrator.max_off_policy_steps", "orchestrator.algo.type",
    "orchestrator.renderer.name", "orchestrator.train.sampling.temperature",
    "orchestrator.train.sampling.max_completion_tokens", "orchestrator.eval.interval",
    "inference.vllm.model", "inference.vllm.enable_lora", "inference.vllm.gpu_memory_utilization",
    "inference.server.port", "deployment.num_infer_gpus", "deployment.num_train_gpus",
]


@dataclass(frozen=True)
class Resolved:
    path: str
    value: Any
    origin: str  # "set", "shared <field>", "default" or "unset"


def resolve(doc: dict[str, Any], catalog: Catalog | None = None) -> tuple[dict[str, Any], list[Resolved]]:
    """The document with shared fields copied down, and the final value of each key value."""
    cat = catalog or prime_rl()
    out = copy.deepcopy(doc)
    origins: dict[str, str] = {}
    for shared, copies in SHARED.items():
        value = get_path(doc, shared)
        if value is None:
            continue
        for dest in copies:
            table = dest.split(".")[0]
            if table in doc and get_path(doc, dest) is None:
                set_path(out, dest, copy.deepcopy(value))
                origins[dest] = f"shared {shared}"
    rows = []
    for path in KEY_VALUES:
        value = get_path(out, path)
        if value is not None:
            rows.append(Resolved(path, value, origins.get(path, "set")))
            continue
        default = _default(cat, path)
        rows.append(Resolved(path, default, "default" if default is not None else "unset"))
    return out, rows


def _default(cat: Catalog, path: str) -> Any:
    for node in cat.lookup(path):
        if "default" in node:
            return node["default"]
    parent, _, key = path.rpartition(".")
    for node in cat.lookup(parent) if parent else []:
        d = node.get("default")
        if isinstance(d, dict) and key in d:
            return d[key]
    return None


def render(rows: list[Resolved]) -> str:
    width = max(len(r.path) for r in rows)
    return "\n".join(f"  {r.path:<{width}}  {r.value!r:<28} ({r.origin})" for r in rows)
