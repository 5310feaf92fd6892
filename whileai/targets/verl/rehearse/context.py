"""What a rehearsal step gets and what it says (standard library only: both sides import it).

A step runs inside verl's Python (inside.py) on one stage of a run folder and returns a `StepRecord`:
whether it passed, what ran for real (verl's own classes and functions), what stood in for a GPU
(each stand-in with the verl file and line it mirrors), the facts it measured, and on failure the
first line of the error with where it came from. inside.py prints each StepRecord as one JSON line; the
hook (whileai's Python) reads them back with `StepRecord.from_json`.

    def run(ctx: Context) -> StepRecord: ...      # one module per step: pools, data, reward, loss
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Context:
    folder: Path  # the run folder (run.sh's own folder; $PWD in its overrides)
    job: str  # verl's entry point: "main_ppo", "sft_trainer" or "main_generation_server"
    overrides: list[str]  # the command's Hydra overrides, $PWD expanded to `folder`
    gpus_per_node: int  # the GPUs a node of the spec has: Ray's logical GPUs on this CPU
    nodes: int  # the nodes the run asks for
    scratch: Path  # a folder of this stage's own (stand-in rows, models, outputs)
    config: Any = None  # verl's composed config (an OmegaConf DictConfig), set by inside.py


@dataclass
class StepRecord:
    name: str  # "pools", "data", "reward", "loss"
    ok: bool
    ran: list[str] = field(default_factory=list)  # verl's own code that ran: "verl.x.y.Class"
    stood_in: list[str] = field(default_factory=list)  # "what -> the verl file:line it mirrors"
    facts: dict[str, Any] = field(default_factory=dict)  # what it measured, for the verdict
    error: str = ""  # the first line of what failed (verl's own message where verl raised)
    cause: str = ""  # where it failed: verl's file:line, or the run folder's file
    seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str)

    @classmethod
    def from_json(cls, line: str) -> StepRecord:
        return cls(**json.loads(line))
