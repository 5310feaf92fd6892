"""verl's rehearsal as the target's `rehearsal` hook (whileai.targets.hooks.Rehearsal).

    stages = REHEARSAL.read(Path("examples/opd.toml"), serve=None, sets=None, compile=...)  # or a run folder
    result = REHEARSAL.rehearse(stages, python=None, steps=2, timeout=600, keep=None, say=print)

The stages (stages.py), verl's Python (env.py) and the run (run.py) live beside it. Light: the
target module imports it; each method imports the work it does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whileai.rehearse.verdict import Result
    from whileai.targets.compiled import Compiled
    from whileai.targets.hooks import Rehearsal


class VerlRehearsal:
    """verl 0.9.1's own code for each stage of a run folder on a CPU, stand-ins where a GPU is
    needed (targets/verl/rehearse/, docs/rehearse.md)."""

    def read(self, config: Path, *, serve: list[str] | None, sets: list[str] | None,
             compile: Callable[[], Compiled]) -> list[Any]:
        from whileai.errors import SpecError

        if serve:
            raise SpecError("--serve", serve[0], "nothing for verl (run.sh serves its own teachers)")
        if config.is_dir() or config.suffix == ".sh":
            if sets:
                raise SpecError("--set", sets[0], "nothing with a verl run folder (edit run.sh)")
            from whileai.targets.verl.rehearse.stages import from_folder

            return from_folder(config)
        return self.stages(compile())

    def stages(self, compiled: Compiled) -> list[Any]:
        from whileai.errors import SpecError
        from whileai.targets.verl.rehearse.stages import NAME, from_compiled

        if compiled.target != NAME:
            raise SpecError("--target", compiled.target, f"{NAME} (a verl rehearsal runs verl's run folders)")
        return from_compiled(compiled)

    def setup(self, folder: Path, *, python: str | None, stages: list[Any] | None) -> tuple[list[str], bool]:
        from whileai.targets.verl.rehearse.env import setup

        return setup(folder, python)

    def rehearse(self, stages: list[Any], *, python: str | None, steps: int, timeout: float,
                 keep: Path | None, say: Callable[[str], None]) -> Result:
        from whileai.rehearse.session import checked
        from whileai.targets.verl.rehearse.env import find_python, usable
        from whileai.targets.verl.rehearse.run import rehearse

        checked(steps, timeout, keep, kept="verdict.json")
        return rehearse(stages, python=usable(find_python(python), python), timeout=timeout, keep=keep,
                        say=say)

    def lines(self, result: Result) -> list[str]:
        from whileai.rehearse.report import lines
        from whileai.targets.verl.rehearse.run import step_line

        return [x for line in lines(result, step_line) for x in line.split("\n")]


REHEARSAL: Rehearsal = VerlRehearsal()
