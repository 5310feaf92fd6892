"""Hugging Face TRL as a Target (whileai.targets.base): a run directory for `trl` or `accelerate`.

Light on purpose: the registry imports this module to find the target; the compiler and TRL's
own parser (for `compile --check`) are imported when used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from whileai.targets.base import Machine, Options, Shape
from whileai.targets.trl.pin import TARGET as PIN

if TYPE_CHECKING:
    from collections.abc import Sequence

    from whileai.rules.base import Rule
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.probe import Probe
    from whileai.targets.run import Launcher


class TRL:
    name = "trl"
    pin = PIN
    shape = Shape(None, "a TRL run is a folder")
    options = {"cpu": "train on the CPU: use_cpu true, bf16 false (TRL defaults to bf16, a GPU's)"}
    refuses: dict[str, str] = {}
    rehearsal = None  # not rehearsable
    migration = None  # nothing to migrate: whileai writes for one release

    @property
    def launcher(self) -> Launcher:
        from whileai.targets.trl.launch import LAUNCHER

        return LAUNCHER

    def compile(self, run: RunSpec, *, name: str, out: str | None, options: Options) -> Compiled:
        if run.then is not None:
            from whileai.targets.trl.stages import compile_stages

            return compile_stages(run, out, options.cpu)
        from whileai.targets.trl.compile import compile

        return compile(run, cpu=options.cpu, out=out)

    def verify(self, compiled: list[Compiled]) -> list[tuple[bool, str]]:
        """TRL's own parser on each written run directory (each stage's, for a two-stage run);
        stops at the first that fails."""
        from whileai.errors import SpecError
        from whileai.targets.trl.check import check_dir, need_trl

        need_trl()  # first: `verify([])` is compile --check asking before it writes anything
        out: list[tuple[bool, str]] = []
        for c in [s for r in compiled for s in (r.stages or (r,))]:
            if c.out is None:
                raise SpecError("--check", True, "a written run directory: pass -o DIR")
            problems = check_dir(Path(c.out).parent)
            if problems:
                return out + [(False, p) for p in problems]
            out.append((True, f"checked: {Path(c.out).parent} parses with TRL's own parser (no "
                              "unknown keys)"))
        return out

    def claims(self, path: Path) -> bool:
        """A TRL run directory: a folder holding its config.yaml, or a folder with no run script of
        its own (no config.yaml and no run.sh: TRL's check says what is missing). A folder whose
        runs start from a run.sh and has no config.yaml is not TRL's layout; another target's
        claim, or none, decides it."""
        return path.is_dir() and ((path / "config.yaml").is_file() or not (path / "run.sh").exists())

    def check(self, path: Path, entry: str) -> list[tuple[str, str]]:
        from whileai.errors import SpecError, raw
        from whileai.targets.trl.check import check_dir

        if entry != "auto":
            return [("error", str(SpecError("--entry", entry, "auto for a TRL run directory (its "
                                            "command is in its config.yaml)")))]
        if not (path / "config.yaml").is_file():  # a folder, but no TRL run: say so before TRL
            return [("error", str(SpecError("config", raw(f"{path} is a folder without config.yaml"),
                                            "a prime-rl TOML or a TRL run directory that `whileai "
                                            "compile -t trl -o DIR` wrote")))]
        try:
            problems = check_dir(path)
        except SpecError as e:
            return [("error", f"{path}: {e.value}; {e.allowed}" if e.field == "--check"
                     else f"{path}: {e}")]  # `check` has no --check flag to name
        if problems:
            return [*(("error", f"{path}: {p}") for p in problems),
                    ("error", f"{path} is not a TRL run directory TRL's parser accepts")]
        return [("ok", f"{path} parses with TRL's own parser (no unknown keys)")]

    def machine(self, run: RunSpec, stages: list[Compiled]) -> Machine:
        return Machine(gpus=run.gpus or 1, gpus_why="(TRL: one per training process)", copies=1,
                       copies_are="final save(s)")  # trl/scripts/grpo.py:156, sft.py:119: save_model

    def probes(self, run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
        from whileai.targets.trl.probe import probes

        return probes(run, stages, student)

    def rules(self) -> Sequence[Rule]:
        from whileai.targets.trl.rules import RULES

        return RULES


TARGET = TRL()
