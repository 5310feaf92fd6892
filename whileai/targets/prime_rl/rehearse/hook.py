"""prime-rl's rehearsal as the target's `rehearsal` hook (whileai.targets.hooks.Rehearsal).

Light: prime-rl's `target` module imports it; each method imports the work it does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whileai.rehearse.verdict import Result
    from whileai.targets.compiled import Compiled
    from whileai.targets.hooks import Rehearsal

NAME = "prime-rl"  # the target's name, as its Compiled records say it


class PrimeRLRehearsal:
    """prime-rl's own `rl` launcher, orchestrator and env servers for N steps on a CPU, with
    stand-ins for the inference servers and the trainer (targets/prime_rl/rehearse/)."""

    def read(self, config: Path, *, serve: list[str] | None, sets: list[str] | None,
             compile: Callable[[], Compiled]) -> list[Any]:
        from whileai.errors import SpecError
        from whileai.spec.load import loads_toml, read_text
        from whileai.targets.prime_rl.check import looks_like_spec
        from whileai.targets.prime_rl.rehearse.inputs import from_toml

        text = read_text(config, "config", 8 << 20, "TOML file")
        if looks_like_spec(loads_toml(text, where=str(config))):
            if serve:
                raise SpecError("--serve", serve[0],
                                "nothing with a spec (its teachers' run lines are compiled)")
            return self.stages(compile())
        if sets:
            raise SpecError("--set", sets[0], "nothing with a prime-rl TOML (edit the file)")
        from whileai.files.names import spec_name

        return from_toml(text, spec_name(config), serve)

    def stages(self, compiled: Compiled) -> list[Any]:
        from whileai.errors import SpecError
        from whileai.targets.prime_rl.rehearse.inputs import from_compiled

        if compiled.target != NAME:
            raise SpecError("--target", compiled.target,
                            f"{NAME} (a prime-rl rehearsal runs prime-rl's files)")
        return list(from_compiled(compiled))

    def setup(self, folder: Path, *, python: str | None, stages: list[Any] | None) -> tuple[list[str], bool]:
        from whileai.targets.prime_rl.rehearse.env import held_day, setup, taskset_modules

        texts = [s.text for s in stages or []]
        need = taskset_modules(texts) if stages is not None else None
        return setup(folder, python_flag=python, tasksets=need, held=held_day(texts))

    def rehearse(self, stages: list[Any], *, python: str | None, steps: int, timeout: float,
                 keep: Path | None, say: Callable[[str], None]) -> Result:
        from whileai.rehearse.session import checked
        from whileai.targets.prime_rl.rehearse.env import find_python, runnable
        from whileai.targets.prime_rl.rehearse.run import rehearse

        checked(steps, timeout, keep, kept="tiny")  # the flags, then the environment, before any folder
        return rehearse(stages, python=runnable(find_python(python)), steps=steps, timeout=timeout, keep=keep,
                        say=say)

    def lines(self, result: Result) -> list[str]:
        from whileai.rehearse.report import lines
        from whileai.targets.prime_rl.rehearse.logs import step_line

        return lines(result, step_line)


REHEARSAL: Rehearsal = PrimeRLRehearsal()
