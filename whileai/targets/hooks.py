"""The optional hooks a Target carries past its files (whileai.targets.base): each is an object or
None, and None says plainly that the target has no such thing, in one line from the face.

    t = registry.get(name)
    t.rehearsal     # Rehearsal | None: `whileai rehearse` (None: "<target> is not rehearsable")
    t.migration     # Migrator | None: `whileai migrate` (None: "nothing to migrate for <target>")

A hook's module is light: the target's `target` module imports it to fill the attribute, so it
imports its own work inside its methods. The faces (cli/, the recipes) print what a hook returns;
a hook prints nothing and writes only inside the folders it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from whileai.rehearse.verdict import Result
    from whileai.targets.compiled import Compiled


class Rehearsal(Protocol):
    """`whileai rehearse`: the target's own launcher for a few steps on a CPU, stand-ins for what
    needs a GPU (docs/rehearse.md). Stages are the target's own records, passed back as they are."""

    def read(self, config: Path, *, serve: list[str] | None, sets: list[str] | None,
             compile: Callable[[], Compiled]) -> list[Any]:
        """The stages a rehearsal runs, from a run spec (`compile()` compiles it for this target,
        its --set applied) or from the target's own file; SpecError for a flag that does not apply."""
        ...

    def stages(self, compiled: Compiled) -> list[Any]:
        """The stages a rehearsal runs, from a spec compiled for this target (a recipe's arm)."""
        ...

    def setup(self, folder: Path, *, python: str | None, stages: list[Any] | None) -> tuple[list[str], bool]:
        """`--setup DIR [SPEC]`: find and prepare the target's environment in `folder`, check what
        `stages` (a spec's, or None) need of it; the lines to print and whether it can rehearse."""
        ...

    def rehearse(self, stages: list[Any], *, python: str | None, steps: int, timeout: float,
                 keep: Path | None, say: Callable[[str], None]) -> Result:
        """Rehearse the stages for `steps` steps within `timeout` seconds in the environment that
        `python` names (None: the target's default); `say` gets the progress lines."""
        ...

    def lines(self, result: Result) -> list[str]:
        """The verdict as lines (whileai.rehearse.report, with the target's own step facts)."""
        ...


class KeyChange(Protocol):
    """One key a migration changed, dropped or left for a person to decide."""

    @property
    def kind(self) -> str: ...  # "unknown", "dropped", "decision", or a change written through

    @property
    def old(self) -> str: ...  # the key as the old file has it

    @property
    def why(self) -> str: ...

    def line(self) -> str:
        """The change in one line, as `whileai migrate` prints it."""
        ...


class MigratedFile(Protocol):
    """One file carried from the release it was written for to the target's pin."""

    @property
    def text(self) -> str: ...  # the migrated file

    @property
    def release(self) -> str: ...  # the release it was written for (said with --from, or detected)

    @property
    def detected(self) -> bool: ...  # the release was detected from the keys

    @property
    def entry(self) -> str: ...  # the entry point the file is for (said with --entry, or detected)

    @property
    def also(self) -> Sequence[str]: ...  # other releases that know every key as well

    @property
    def kept(self) -> Sequence[str]: ...  # the old keys that stay as they are

    @property
    def changes(self) -> Sequence[KeyChange]: ...

    @property
    def decisions(self) -> Sequence[KeyChange]: ...  # what stops the file being written


class Migrator(Protocol):
    """`whileai migrate`: a target's files written for an older release of it, carried to the pin
    (docs/migrate.md)."""

    @property
    def entries(self) -> tuple[str, ...]: ...  # the entry points a file may be for; the first is the default

    def releases(self) -> list[str]:
        """The releases it migrates from, oldest first; the last is the pin's."""
        ...

    def release(self, given: str) -> str:
        """`--from` as a person types it (`0.7`, `v0.7.0`) -> one of releases(); SpecError otherwise."""
        ...

    def migrate(self, path: Path, text: str, release: str | None, entry: str | None) -> MigratedFile:
        """The file at `path` (its `text`) migrated; SpecError for a file that is not one of the
        target's older files (a whileai spec, an empty file, another program's)."""
        ...

    def refused(self, migrated: MigratedFile) -> list[str]:
        """What the pin's own checks refuse in the migrated text, one line each."""
        ...
