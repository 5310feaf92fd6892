"""prime-rl as a Target (whileai.targets.base): one TOML for `uv run rl @ file.toml`.

Light on purpose: the registry imports this module to find the target, and the compiler
(`compile`, the field map, the loader mirror) is imported when a spec is compiled.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from whileai.targets.base import Machine, Options, Shape
from whileai.targets.prime_rl.pin import COMMIT
from whileai.targets.prime_rl.pin import TARGET as PIN

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.run import Launcher


class PrimeRL:
    name = "prime-rl"
    pin = PIN
    shape = Shape(".toml", "prime-rl reads TOML")
    options: dict[str, str] = {}
    refuses = {"cpu": "prime-rl trains and serves on GPUs"}
    rehearsable = True
    teachers_in_process = ""  # teachers are servers the orchestrator calls over HTTP
    student_server = "score"  # a student endpoint is probed as prime-rl scores on it

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
        from whileai.targets.prime_rl.checkfile import check_file

        return check_file(path, entry)

    def machine(self, run: RunSpec, stages: list[Compiled]) -> Machine:
        lay = run.layout
        if lay.nodes == 1:
            held = sum(t.held_gpus or 0 for s in stages for t in s.teachers)
            teacher = f" + {held} for the teacher" if held else ""
            need, what = lay.gpus + held, f"on this node: {lay.text()}{teacher}"
        else:
            need, what = lay.gpus_per_node, f"on each of {lay.nodes} nodes"
        return Machine(gpus=need, gpus_why=what, broadcasts=2, keeps_rollouts=True,
                       loads_models=False, commit=COMMIT, no_checkout="")


TARGET = PrimeRL()
