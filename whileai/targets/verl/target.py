"""verl 0.9.1 as a Target (whileai.targets.base): a run directory whose run.sh runs verl.

Light on purpose: the registry imports this module to find the target; the compiler and verl's
own check (`compile --check`, `whileai check`) are imported when used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from whileai.targets.base import Machine, Options, Shape
from whileai.targets.verl.pin import TARGET as PIN

if TYPE_CHECKING:
    from collections.abc import Sequence

    from whileai.rules.base import Rule
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.hooks import Rehearsal
    from whileai.targets.probe import Probe
    from whileai.targets.run import Launcher


class Verl:
    name = "verl"
    pin = PIN
    shape = Shape(None, "a verl run is a folder (run.sh, data/, reward.py)")
    options: dict[str, str] = {}
    refuses = {"cpu": "verl trains and samples on GPUs only (vLLM rollouts, FSDP with NCCL)"}
    migration = None  # nothing to migrate: whileai writes for one release

    @property
    def rehearsal(self) -> Rehearsal:
        """`whileai rehearse -t verl`: verl's own code on a CPU (targets/verl/rehearse/)."""
        from whileai.targets.verl.rehearse.hook import REHEARSAL

        return REHEARSAL

    @property
    def launcher(self) -> Launcher:
        from whileai.targets.verl.launch import LAUNCHER

        return LAUNCHER

    def compile(self, run: RunSpec, *, name: str, out: str | None, options: Options) -> Compiled:
        from whileai.targets.verl.compile import compile

        return compile(run, out=out)

    def verify(self, compiled: list[Compiled]) -> list[tuple[bool, str]]:
        """verl 0.9.1's own check of each compiled run.sh (verl imported there)."""
        from whileai.targets.verl.check import verify

        return verify(compiled)

    def claims(self, path: Path) -> bool:
        from whileai.targets.verl.check import claims

        return claims(path)

    def check(self, path: Path, entry: str) -> list[tuple[str, str]]:
        from whileai.targets.verl.check import check

        return check(path, entry)

    def machine(self, run: RunSpec, stages: list[Compiled]) -> Machine:
        from whileai.targets.verl import knobs

        pool = knobs.pool(run)  # what run.sh asks Ray for on this node: never more than the node has
        beside = pool.gpus if pool and knobs.nodes(run) == 1 else 0
        return Machine(gpus=knobs.gpus_per_node(run) + beside, nodes=knobs.nodes(run),
                       gpus_why="(verl: trainer.n_gpus_per_node, plus an OPD teacher's pool on one "
                       "node; past one node the teacher has a node of its own)")

    def probes(self, run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
        from whileai.targets.verl.probe import probes

        return probes(run, stages, student)

    def rules(self) -> Sequence[Rule]:
        return ()  # the shared rules only


TARGET = Verl()
