"""The Target protocol: what a training framework's package gives the faces, and nothing more.

A target is one package under `whileai/targets/<name>/` whose `target` module defines one object
that satisfies `Target`, and one line in `whileai.targets.registry.TARGETS`. The faces (`cli/`,
`api.py`, `preflight/`, `rehearse/`, `launch/`) look a target up in the registry and ask it; none
of them compares a target's name. `docs/layout.md` ("Adding a target") lists the files to write.

    from whileai.targets import registry
    t = registry.get("trl")
    c = t.compile(run, name="opd", out=None, options=Options(cpu=True))   # a pure compile
    t.shape.suffix            # None: a run directory; ".toml": one file
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.run import Launcher


class Shape(NamedTuple):
    """What a target writes: one file with this suffix (a prime-rl TOML) or, with suffix None,
    a run directory (a TRL run); `why` says it in the error for an output of the wrong kind."""

    suffix: str | None
    why: str


class Options(NamedTuple):
    """Switches a face passes through to a target; each target says which it reads."""

    cpu: bool = False  # train on the CPU (TRL's use_cpu); a GPU-only target refuses it


class Machine(NamedTuple):
    """What a run needs of the machine it starts on, as `whileai preflight` checks it."""

    gpus: int  # GPUs on this machine
    gpus_why: str  # how that number comes about, for the check's line
    broadcasts: int  # full weight copies kept on disk besides checkpoints
    keeps_rollouts: bool  # rollouts of max_off_policy_steps + 1 steps are kept on disk
    loads_models: bool  # the models are loaded in this process: they must be here, and fit
    commit: str | None  # the run starts from the framework's own checkout at this commit
    no_checkout: str  # without a commit: why no checkout is checked


class Target(Protocol):
    """One training framework at one pinned version."""

    name: str  # the -b/--backend value and the report's first word: "prime-rl", "trl"
    pin: str  # the framework and version the files are written for, e.g. "trl==1.16.0"
    shape: Shape  # one file (its suffix) or a run directory
    options: dict[str, str]  # the Options fields it reads -> what each does
    refuses: dict[str, str]  # the Options fields it does not read -> why (an error when set)
    rehearsable: bool  # `whileai rehearse` can run its own launcher on a CPU
    teachers_in_process: str  # "": teachers are servers preflight probes; else why they are not
    student_server: str  # how a student endpoint is called: "score" (prime-rl), "vllm-serve"

    @property
    def launcher(self) -> Launcher | None:
        """How it runs paired arms (recipes/04-train/<target>/run.py, whileai.targets.run);
        None: it has no paired-arms run. Imported when asked, so the registry stays light."""
        ...

    def compile(self, run: RunSpec, *, name: str, out: str | None, options: Options) -> Compiled:
        """The run (both stages of a two-stage run) compiled: pure, writes nothing. name: the
        main file's name (file targets) or the spec's name; out: where it will be written."""
        ...

    def verify(self, compiled: list[Compiled]) -> list[tuple[bool, str]]:
        """`compile --check`: the target's own check of what was just compiled (and written),
        one (passed, line) each, ending at the first failure; SpecError where it cannot check.
        `verify([])` raises that SpecError too: compile --check asks it before writing anything,
        so a check that cannot run leaves no run behind."""
        ...

    def claims(self, path: Path) -> bool:
        """`whileai check`: whether `path` is this target's kind of file (or directory)."""
        ...

    def check(self, path: Path, entry: str) -> list[tuple[str, str]]:
        """`whileai check` on a file written by hand: ("ok" | "warning" | "error", line) in
        order. entry: the entry point the file is for, or "auto"."""
        ...

    def machine(self, run: RunSpec, stages: list[Compiled]) -> Machine:
        """What the run needs of the machine that starts it."""
        ...
