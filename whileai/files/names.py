"""The names of the files whileai writes, in one place: `compile`, `arms`, `preflight`,
`rehearse` and the recipes all ask here, so a line one command prints names the file another
writes for the same spec.

    stem = spec_name("specs/opd-gsm8k.toml", run)  # "opd-gsm8k" (a spec built in Python: "opd")
    main_file(stem, ".toml")                         # "opd-gsm8k.toml"
    teacher_file(stem, 1)                            # "opd-gsm8k.teacher.toml" (the 2nd: .teacher-2.toml)
    stage_name(stem, 2, "opd")                       # "opd-gsm8k-2-opd" (a two-stage spec's stage 2)
    arm_group("opd-gsm8k@2")                         # "opd-gsm8k": a repeat's files are named as its arm's
    inspect_folder(stem)                             # "inspect-opd-gsm8k" (`whileai inspect` without --out)

A spec's name is its file's stem; a spec with no file (the Python API) is named by its method.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec

REPEAT = "@"  # an arm's repeat k is named <arm>@k (whileai.launch.arms.repeat)


def spec_name(spec: str | os.PathLike[str] | None, run: RunSpec | None = None) -> str:
    """The name every file written for `run` starts with (and an arm's name): the stem of its
    spec file `spec`, or its method type when it has none."""
    if spec is not None:
        return Path(spec).stem
    if run is None:
        raise ValueError("spec_name: a spec file or a run")
    return run.method.type


def main_file(stem: str, suffix: str | None) -> str:
    """The target's main file (a file target: `suffix`, e.g. ".toml"), or its run directory's
    name (a directory target: suffix None)."""
    return stem + (suffix or "")


def teacher_suffix(k: int = 1) -> str:
    """What marks the run's k-th served teacher (1-based) in its file's, folder's and job's names:
    nothing for the first, `-2` for the second, ..."""
    return "" if k == 1 else f"-{k}"


def teacher_file(stem: str, k: int = 1) -> str:
    """The `uv run inference` config of the run's k-th served teacher (1-based)."""
    return f"{stem}.teacher{teacher_suffix(k)}.toml"


def stage(i: int, method: str) -> str:
    """Stage i of a two-stage run, by its position and method: `1-sft`, `2-opd` (a TRL run
    directory's stage folders)."""
    return f"{i}-{method}"


def stage_name(stem: str, i: int, method: str) -> str:
    """Stage i's files' stem in a two-stage run written beside its spec's: <stem>-<i>-<method>
    (prime-rl's <stem>-1-sft.toml, <stem>-2-opd.toml)."""
    return f"{stem}-{stage(i, method)}"


def inspect_folder(stem: str) -> str:
    """`whileai inspect SPEC`'s folder when no --out is given."""
    return f"inspect-{stem}"


def arm_group(arm: str) -> str:
    """The arm a repeat belongs to (`opd@2` -> `opd`): its files carry the arm's name."""
    return arm.split(REPEAT, 1)[0]


__all__ = ["REPEAT", "arm_group", "inspect_folder", "main_file", "spec_name", "stage", "stage_name",
           "teacher_file", "teacher_suffix"]
