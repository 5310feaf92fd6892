"""An offline stand-in for `rl @ cfg --dry-run`: split one rl TOML into its per-process configs.

prime-rl's loader copies the shared top-level fields into the trainer, orchestrator and
inference configs when they are unset there, and points the trainer's and orchestrator's
output_dir at the run directory, output_dir / run.name (configs/rl.py:389; inference keeps its
own output_dir). `resolve()` does the same through the loader mirror's own table
(whileai.targets.prime_rl.loader.rl: SHARED, propagate, run_dir) and says where each final
value came from, so a dry run can be read without prime-rl installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whileai.catalogs.targets import Catalog
from whileai.targets.fieldmap import get_path, set_path
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog
from whileai.targets.prime_rl.loader.rl import SHARED, propagate, run_dir

# the values a reader checks before spending GPU hours
KEY_VALUES = [
    "trainer.output_dir", "orchestrator.output_dir", "inference.output_dir",
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
    cat = catalog or prime_rl_catalog()
    out, _ = propagate(doc)
    origins: dict[str, str] = {}
    for shared, copies in SHARED:
        for dest in copies:
            if get_path(doc, dest) is None and get_path(out, dest) is not None:
                origins.setdefault(dest, f"shared {shared}")
    where = run_dir(doc)
    for sub in ("trainer", "orchestrator"):
        if isinstance(out.get(sub), dict):
            set_path(out, f"{sub}.output_dir", where)
            origins[f"{sub}.output_dir"] = "output_dir / run.name"
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
