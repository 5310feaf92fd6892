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

from whileai.targets.options import Options

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from whileai.rules.base import Rule
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.hooks import Migrator, Rehearsal
    from whileai.targets.probe import Probe
    from whileai.targets.run import Launcher


class Shape(NamedTuple):
    """What a target writes: one file with this suffix (a prime-rl TOML) or, with suffix None,
    a run directory (a TRL run); `why` says it in the error for an output of the wrong kind."""

    suffix: str | None
    why: str


class Checkout(NamedTuple):
    """The framework's own source tree a run starts from, at its pinned commit, as
    `whileai preflight --checkout PATH` checks it."""

    name: str  # the framework, as the check names it: "machine: <name> checkout"
    commit: str  # the pinned commit
    repo: str  # where to clone it from
    sync: str  # run inside it once it is at the commit (installs its environment), e.g. "uv sync"


class Machine(NamedTuple):
    """What a run needs of the machine it starts on, as `whileai preflight` checks it. A target
    fills what applies to it; the rest keep their neutral defaults."""

    gpus: int  # GPUs on this machine (one node), or on each node (several)
    gpus_why: str  # how that number comes about, for the check's line
    nodes: int = 1  # past one, the GPUs are on the nodes the run is given: preflight runs on the
    # login node it is submitted from, and says so on each machine check it makes there
    copies: int = 0  # full weight copies kept on disk besides checkpoints, in the target's words:
    copies_are: str = ""  # e.g. "weight broadcast(s)" (prime-rl), "final save(s)" (TRL)
    keeps_rollouts: bool = False  # rollouts of max_off_policy_steps + 1 steps are kept on disk
    checkout: Checkout | None = None  # the run starts from the framework's own checkout


class Target(Protocol):
    """One training framework at one pinned version."""

    name: str  # the -b/--backend value and the report's first word: "prime-rl", "trl"
    pin: str  # the framework and version the files are written for, e.g. "trl==1.16.0"
    shape: Shape  # one file (its suffix) or a run directory
    options: dict[str, str]  # the Options fields it reads -> what each does
    refuses: dict[str, str]  # the Options fields it does not read -> why (an error when set)
    rehearsal: Rehearsal | None  # `whileai rehearse`: its own launcher on a CPU; None: not rehearsable
    migration: Migrator | None  # `whileai migrate`: older files to the pin; None: nothing to migrate

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

    def probes(self, run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
        """What `whileai preflight` calls for the run, and how (whileai.targets.probe): its
        teachers, the student's inference server when one is given (`--student-endpoint`), the
        models it loads in-process; each stage's Compiled in order. [] when there is nothing."""
    def rules(self) -> Sequence[Rule]:
        """The target's own warning rules (whileai.rules.base.Rule), run on its compiled files
        after the shared ones (whileai.rules.research); `whileai rules` lists every target's
        (whileai.targets.registry.rules). Empty where it has none."""
        ...
