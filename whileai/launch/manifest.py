"""The launch manifest: one record per arm, rewritten atomically after every spawn and poll.

The manifest (`<out_dir>/manifest.json`) is the only state a launch keeps, so `collect` can run
in a later process, re-running a launch is idempotent, and one failed arm cannot hide the others.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from whileai.files.atomic import atomic_write as atomic_write_text
from whileai.targets.run import Metrics

if TYPE_CHECKING:
    from whileai.targets.compiled import Compiled

State = Literal["planned", "pending", "done", "failed"]
MANIFEST = "manifest.json"


class ArmSpec(BaseModel):
    """What to run for one arm: its files, its command, and what the results need to know."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Arm name; 'name@k' marks repeat k of group 'name'.")
    method: str = Field(description="opd | opsd | grpo | any label; 'grpo' arms are the baseline.")
    group: str = Field(default="", description="Repeats of one setting share a group.")
    files: dict[str, str] = Field(default_factory=dict, description="File name → text.")
    main: str | None = Field(default=None, description="The config file among `files`.")
    argv: list[str] = Field(default_factory=list, description="Local command, run in the arm dir.")
    reads: list[dict[str, Any]] = Field(default_factory=list)
    ignores: list[dict[str, Any]] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list, description="Commands the compiler gave.")
    student: str | None = None
    teacher: str | None = None
    teacher_port: int | None = None
    teacher_serve: str | None = Field(default=None, description="The line that serves the teacher "
                                      "beside the run: compile's (its plan's serve line), or None.")
    taskset: str | None = None
    steps: int | None = None
    seed: int | None = None
    target: str | None = Field(default=None, description="prime-rl | trl | a free label.")
    per_step: dict[str, Any] = Field(
        default_factory=dict, description="Planned spend per step (whileai.cost.budget.per_step): "
        "rollouts, prompts, samples, max_tokens, teacher, gpus.")

    def model_post_init(self, __context: Any) -> None:
        if not self.group:
            self.group = self.name.split("@", 1)[0]

    def slim(self) -> ArmSpec:
        """The spec as the manifest keeps it: files over SLIM_BYTES (data sets) become a
        digest line; they live in the arm's folder, written by `plan`."""
        files = {
            k: v if len(v) <= SLIM_BYTES else
            f"{SLIM_MARK} sha256:{hashlib.sha256(v.encode()).hexdigest()} ({len(v)} chars)"
            for k, v in self.files.items()
        }
        return self.model_copy(update={"files": files})


SLIM_BYTES = 64 * 1024
KEPT = ("modal",)  # meta a re-plan keeps: the Modal app, volume and image the arms were launched on
SLIM_MARK = "(in the arm folder)"


class ArmRecord(BaseModel):
    """An arm and what happened to it."""

    model_config = ConfigDict(extra="forbid")

    spec: ArmSpec
    run_id: str
    dir: str = Field(description="The arm's folder (absolute).")
    backend: str | None = Field(default=None, description="The executor it was spawned on: local, modal.")
    handle: str | None = Field(default=None, description="Local run folder or Modal call id.")
    state: State = "planned"
    attempts: int = 0
    result: Metrics | None = None
    error: str | None = None


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    tag: str
    out_dir: str
    meta: dict[str, Any] = Field(default_factory=dict)
    arms: dict[str, ArmRecord] = Field(default_factory=dict)

    @property
    def path(self) -> Path:
        return Path(self.out_dir) / MANIFEST

    def save(self) -> None:
        atomic_write_text(self.path, self.model_dump_json(indent=1) + "\n")


def load_manifest(path: str | Path) -> Manifest:
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST
    return Manifest.model_validate(json.loads(p.read_text(encoding="utf-8")))


def arm_from_compiled(name: str, c: Compiled, argv: list[str] | None = None) -> ArmSpec:
    """An ArmSpec from a compiler result: its files, report, and first command."""
    from whileai.cost.budget import per_step, steps_of

    d = c.to_dict()
    method = c.run.method
    teacher = method.frozen_teacher
    return ArmSpec(
        name=name,
        method=method.type,
        files=dict(c.files),
        main=c.main,
        argv=argv if argv is not None else main_argv(c.commands),
        reads=d["reads"],
        ignores=d["ignores"],
        commands=list(c.commands),
        student=c.run.model,
        teacher=teacher.model if teacher is not None else None,
        teacher_port=teacher.port if teacher is not None else None,
        teacher_serve=next((t.serve for t in c.teachers if t.serve and t.mode != "endpoint"), None),
        taskset=c.run.taskset,
        steps=steps_of(c),
        seed=c.run.seed,
        target=c.target,
        per_step=per_step(c),
    )


def main_argv(commands: tuple[str, ...] | list[str]) -> list[str]:
    """The run command among the compiler's: the last one that is not a background server
    (`... &`, e.g. the OPD teacher, which the Modal train function serves itself)."""
    for cmd in reversed(commands):
        words = shlex.split(cmd, comments=True)
        if words and words[-1] != "&":
            return words
    return []


def _meta(specs: list[ArmSpec], meta: Mapping[str, Any]) -> dict[str, Any]:
    def one(field: str) -> Any:
        vals = sorted({v for s in specs if (v := getattr(s, field)) is not None}, key=str)
        return vals[0] if len(vals) == 1 else (vals or None)

    base = {"student": one("student"), "teacher": one("teacher"), "taskset": one("taskset"),
            "holdout": one("taskset"), "steps": one("steps")}
    return base | dict(meta)


def plan(
    arms: Mapping[str, Compiled | ArmSpec],
    tag: str,
    out_dir: str | Path,
    *,
    meta: Mapping[str, Any] | None = None,
) -> Manifest:
    """Write each arm's files under `<out_dir>/<arm>/` and return the manifest (saved).

    An existing manifest in `out_dir` is kept: arms already in it keep their state, handle
    and result (so re-planning then launching skips what is pending or done); new arms are
    added. `meta` (holdout, versions, ...) overrides what is inferred from the arms.
    """
    root = Path(out_dir).resolve()
    specs = [a if isinstance(a, ArmSpec) else arm_from_compiled(n, a) for n, a in arms.items()]
    for n, s in zip(arms, specs, strict=True):
        if s.name != n:
            raise ValueError(f"arm key {n!r} differs from its spec name {s.name!r}")
    old = load_manifest(root) if (root / MANIFEST).exists() else None
    m = Manifest(tag=tag, out_dir=str(root), meta=_meta(specs, meta or {}))
    for s in specs:
        arm_dir = root / s.name
        for fname, text in s.files.items():
            atomic_write_text(arm_dir / fname, text)
        arm_dir.mkdir(parents=True, exist_ok=True)
        s = s.slim()
        prev = old.arms.get(s.name) if old else None
        if prev is not None and prev.spec == s:
            m.arms[s.name] = prev
        else:
            m.arms[s.name] = ArmRecord(spec=s, run_id=f"{tag}-{s.name}", dir=str(arm_dir))
    if old:
        for name, rec in old.arms.items():
            m.arms.setdefault(name, rec)
        for key in KEPT:  # where launched arms run: --collect asks there, not the env's
            if key in old.meta:
                m.meta.setdefault(key, old.meta[key])
    m.save()
    return m
