"""One verl job's Hydra overrides over the catalogue's composed defaults, and a refusal of one.

    run = Job({"data.train_batch_size": "16", "+trainer.x": "1"}, "main_ppo")
    run.get("data.train_batch_size") -> 16; run.get("actor_rollout_ref.rollout.n") -> 1 (the default)

The keys as written (`+` kept) map to the raw values Hydra gets; whileai.targets.verl.lax reads
them through this. Pure; nothing here imports verl.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from whileai.targets.verl import catalog
from whileai.targets.verl.pin import VERSION
from whileai.targets.verl.values import parse_value


class Refusal(NamedTuple):
    """One mistake: the key as written, its raw value, why, what is allowed, what verl does."""

    key: str
    value: str
    message: str
    allowed: str
    verl: str  # what verl 0.9.1 itself does with it, one line
    rule: str = ""  # an id of RULES

    def line(self) -> str:
        return (f"{self.key}={self.value}: {self.message}; allowed: {self.allowed} "
                f"(verl {VERSION} {self.verl}) [{self.rule}]")


class Job:
    """A job's overrides over the catalogue's composed defaults."""

    def __init__(self, overrides: Mapping[str, str], job: str,
                 launcher: tuple[int, int] | None = None) -> None:
        self.job, self.raw, self.launcher = job, dict(overrides), launcher
        self.set = {k.lstrip("+~"): (k, v) for k, v in overrides.items()}

    def get(self, key: str) -> Any:
        """The value the job composes for `key` (INTERPOLATION when it cannot be known here)."""
        if key in self.set:
            return parse_value(self.set[key][1])
        entry = catalog.lookup(key, self.job)
        return entry.default if entry else None

    def ints(self, *keys: str) -> list[int] | None:
        """The keys' integers, or None when one is not an integer here (unset, `${...}`)."""
        values = [self.get(k) for k in keys]
        return values if all(type(v) is int for v in values) else None

    def world(self, prefix: str) -> int | None:
        """GPUs of one replica: TP x DP x PP under `prefix` (a size the config lacks counts 1)."""
        sizes = [self.size(prefix + k) for k in ("tensor_model_parallel_size", "data_parallel_size",
                                                 "pipeline_model_parallel_size")]
        if any(s is None or s < 1 for s in sizes):
            return None
        return sizes[0] * sizes[1] * sizes[2]  # type: ignore[operator]

    def written(self, key: str) -> tuple[str, str]:
        """The key as written and its raw value (the default, shown, when not set)."""
        return self.set.get(key, (key, repr(self.get(key))))

    def teachers(self) -> list[str]:
        """The teacher entries verl keeps (a second one makes verl drop `teacher_model`)."""
        names = {k.split(".")[2] for k in self.set if k.startswith("distillation.teacher_models.")
                 and k.count(".") >= 3}
        extra = sorted(names - {"teacher_model"})
        return extra or ["teacher_model"]

    def size(self, key: str) -> int | None:
        """A parallel size: the job's value, 1 where the config has no such key."""
        value = self.get(key) if catalog.lookup(key, self.job) or key.lstrip("+") in self.set else 1
        return value if type(value) is int else None

    def refuse(self, key: str, message: str, allowed: str, verl: str, rule: str) -> Refusal:
        """A refusal of `key` as the job writes it (verl's default shown when it is not set)."""
        written, raw = self.written(key)
        return Refusal(written, raw, message, allowed, verl, rule)


def launcher_gpus(words: Sequence[str]) -> tuple[int, int] | None:
    """(GPUs a node, nodes) a torchrun launcher starts (`--nproc_per_node=8 --nnodes=1`), or None."""
    found: dict[str, str] = {}
    it = iter(words)
    for w in it:
        name, eq, value = w.partition("=")
        name = name.replace("-", "_").lstrip("_")
        if name in ("nproc_per_node", "nnodes"):
            found[name] = value if eq else next(it, "")
    per_node, nodes = found.get("nproc_per_node", ""), found.get("nnodes", "1")
    if not (per_node.isdigit() and nodes.isdigit()):
        return None
    return int(per_node), int(nodes)
