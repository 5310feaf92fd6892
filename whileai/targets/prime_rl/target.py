"""prime-rl as a Target (whileai.targets.base): one TOML for `uv run rl @ file.toml`.

Light on purpose: the registry imports this module to find the target, and the compiler
(`compile`, the field map, the loader mirror) is imported when a spec is compiled.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from whileai.targets.base import Checkout, Machine, Options, Shape
from whileai.targets.prime_rl.migrate.hook import MIGRATION
from whileai.targets.prime_rl.pin import COMMIT
from whileai.targets.prime_rl.pin import TARGET as PIN
from whileai.targets.prime_rl.rehearse.hook import REHEARSAL

if TYPE_CHECKING:
    from collections.abc import Sequence

    from whileai.rules.base import Rule
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.probe import Probe
    from whileai.targets.run import Launcher

REPO = "https://github.com/PrimeIntellect-ai/prime-rl"  # where `whileai preflight` says to clone it


class PrimeRL:
    name = "prime-rl"
    pin = PIN
    shape = Shape(".toml", "prime-rl reads TOML")
    options: dict[str, str] = {}
    refuses = {"cpu": "prime-rl trains and serves on GPUs"}
    rehearsal = REHEARSAL  # its own launcher on a CPU, stand-ins for servers and trainer (rehearse/)
    migration = MIGRATION  # a TOML for an older prime-rl release, carried to the pin (migrate/)

    @property
    def launcher(self) -> Launcher:
        from whileai.targets.prime_rl.launch import LAUNCHER

        return LAUNCHER

    def compile(self, run: RunSpec, *, name: str, out: str | None, options: Options) -> Compiled:
        if run.then is not None:
            from whileai.targets.prime_rl.stages import compile_stages

            return compile_stages(run, name.removesuffix(".toml"))
        from whileai.targets.prime_rl.compile import compile

        return compile(run, name=name)

    def verify(self, compiled: list[Compiled]) -> list[tuple[bool, str]]:
        # every compile already ran the catalogue and the loader mirror (a refusal raised)
        return [(True, "checked: every file (each stage of a two-stage run) passed the pinned "
                       "prime-rl catalogue and loader rules")]

    def claims(self, path: Path) -> bool:
        return path.suffix == ".toml" and not path.is_dir()

    def check(self, path: Path, entry: str) -> list[tuple[str, str]]:
        from whileai.targets.prime_rl.check import check_file
        from whileai.targets.prime_rl.migrate.hint import moves, old_release_hint

        return check_file(path, entry, older=(old_release_hint, moves))

    def machine(self, run: RunSpec, stages: list[Compiled]) -> Machine:
        lay = run.layout
        if lay.nodes == 1:
            held = sum(t.held_gpus or 0 for s in stages for t in s.teachers)
            teacher = f" + {held} for the teacher" if held else ""
            need, what = lay.gpus + held, f"on this node: {lay.text()}{teacher}"
        else:
            need, what = lay.gpus_per_node, f"on each of {lay.nodes} nodes"
        return Machine(gpus=need, gpus_why=what, nodes=lay.nodes, copies=2,
                       copies_are="weight broadcast(s)", keeps_rollouts=True,
                       checkout=Checkout("prime-rl", COMMIT, REPO, "uv sync"))

    def probes(self, run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
        from whileai.targets.prime_rl.probe import probes

        return probes(run, stages, student)

    def rules(self) -> Sequence[Rule]:
        from whileai.targets.prime_rl.rules import RULES

        return RULES


TARGET = PrimeRL()
