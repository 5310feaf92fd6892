"""The run side of a target: how it runs paired arms, and the record every arm ends with.

A target that runs paired arms (recipes/04-train/<target>/run.py, whileai.cli.recipe) sets its
`launcher` (whileai.targets.base.Target) to an object that satisfies `Launcher`; None says it has
no paired-arms run. The shared recipe asks the launcher, never the target's name:

    L = registry.get("verl").launcher
    L.app                     # ModalApp: its arms run in Modal containers; None: processes here
    L.compile(name, run, subs)          # an arm as the recipe runs it (its overrides reported)
    L.files(c, name, baseline)          # files an arm needs beside the compiled ones (verl's eval.sh)
    L.validate(dirs, compiled, prep)    # --validate: the target's own check of what it wrote

Every arm, local or remote, ends by writing one `metrics.json` (`Metrics` below). A container
job (`ModalApp.train`) never raises: a failure is a record with status "error", so a crash is
data, not an exception (Modal re-raises a remote exception, and a TimeoutError from inside a run
would read as "still running"). The helpers below are what every container job shares. Light:
no modal, no torch.
"""

from __future__ import annotations

import json
import re
import signal
from argparse import ArgumentParser, Namespace
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from whileai.files.atomic import atomic_write

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.options import Options

Point = tuple[int, float]


class Metrics(BaseModel):
    """What a run reports when it ends (the `metrics.json` file)::

        {"status": "ok",
         "series": {"eval_reward": [[step, value], ...], "train_reward": [...], "teacher_kl": [...]},
         "per_task": {"task_id": reward, ...},
         "returncode": 0, "seconds": 812.4, "image": "...", "gpu": "H100:2", "error": null}

    `series` maps a metric to its per-step points, ascending by step; `per_task` holds the final
    holdout evaluation, one mean reward per task (the unit that paired comparisons pair on). A
    failed run writes the same record with `status = "error"` and `error` set."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["ok", "error"] = Field(
        default="ok", description="'error' when the run failed; `error` then says why."
    )
    series: dict[str, list[Point]] = Field(
        default_factory=dict,
        description="Per-step points [step, value] for eval_reward, train_reward, teacher_kl "
        "(and any other metric the run chose to report), ascending by step.",
    )
    per_task: dict[str, float] = Field(
        default_factory=dict,
        description="Final holdout evaluation: mean reward per task id (the pairing unit).",
    )
    returncode: int | None = Field(default=None, description="Exit status of the run's process.")
    seconds: float | None = Field(default=None, description="Wall-clock seconds of the run.")
    image: str | None = Field(default=None, description="Container image or local interpreter.")
    gpu: str | None = Field(default=None, description="GPU type and count the run got.")
    error: str | None = Field(default=None, description="Why the run failed (status 'error').")
    log_tail: str | None = Field(default=None, description="Last lines of the run's output.")
    usage: dict[str, float] = Field(
        default_factory=dict,
        description="What the run spent, measured: any of rollouts, sampled_tokens, "
        "teacher_tokens, train_seconds, cpu_seconds (the training process), gpu_seconds. "
        "whileai.results.spend estimates what is missing and says so.",
    )
    usage_source: dict[str, str] = Field(
        default_factory=dict, description="How each usage value was measured (log key, clock).")


def error_record(error: str, **fields: Any) -> dict[str, Any]:
    """The record a wrapped run returns instead of raising."""
    return Metrics(status="error", error=error, **fields).model_dump(mode="json")


def write_metrics(path: str | Path, metrics: Metrics | dict[str, Any]) -> Metrics:
    """Validate and write a metrics file atomically; returns the validated record."""
    m = metrics if isinstance(metrics, Metrics) else Metrics.model_validate(metrics)
    atomic_write(Path(path), json.dumps(m.model_dump(mode="json"), indent=1) + "\n")
    return m


def read_metrics(path: str | Path) -> Metrics:
    return Metrics.model_validate_json(Path(path).read_text(encoding="utf-8"))


# what every container job shares


def describe_returncode(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def write_files(job: Mapping[str, Any], work: Path) -> Path:
    """The job's files under `work` (sub-folders made); returns its main file's path."""
    for name, text in job["files"].items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    return work / (job.get("main") or next(iter(job["files"])))


def finished(out: Path) -> dict[str, Any] | None:
    """The ok record an earlier attempt left at `out` (a preempted container's restart returns
    it instead of training again); None when there is none."""
    try:
        prev = read_metrics(out) if out.exists() else None
    except ValueError:
        return None
    return prev.model_dump(mode="json") if prev is not None and prev.status == "ok" else None


def save(out: Path, record: dict[str, Any], commit: Callable[[], None]) -> dict[str, Any]:
    """Write the record to the volume; a volume problem is added to its error, never raised."""
    try:
        write_metrics(out, record)
        commit()
    except Exception as e:
        record["error"] = (record.get("error") or "") + f" (volume write failed: {e})"
    return record


def gpu_count(label: str | None) -> int | None:
    """'NVIDIA H100 80GB HBM3 x2' -> 2 (the label the Modal app gives); None when unknown."""
    m = re.search(r" x(\d+)$", label or "")
    return int(m.group(1)) if m else None


PROGRESS = "progress.json"  # a local arm's {phase, done, total}, for the recipe's progress bars


def read_progress(run_dir: str | Path) -> dict[str, Any]:
    """The run's `progress.json` ({phase, done, total}); {} before it exists."""
    try:
        return dict(json.loads((Path(run_dir) / PROGRESS).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


# the launcher


def positive(text: str) -> int:
    """An option's whole number >= 1 (argparse's `type`)."""
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; a whole number >= 1")
    return n


class TrainJob(Protocol):
    """A container job: one arm's `job` (whileai.launch.modal_app.job_payload) run in
    `work_root/<run_id>`; its record returned and written to `volume_dir/metrics.json`."""

    def __call__(self, job: dict[str, Any], volume_dir: Path, work_root: Path, *,
                 commit: Callable[[], None] = ..., gpu: str | None = ...,
                 image: str | None = ...) -> dict[str, Any]: ...


class ModalApp(NamedTuple):
    """Where a target's arms run on Modal: one app of whileai.launch.modal_app, built for it."""

    name: str  # the app's name (its environment variable read at deploy time)
    image: Callable[[list[str]], tuple[Any, str]]  # for the GPU choices: the modal.Image without
    # whileai's own source (modal imported there) and its label (results.json's `image`), computed
    # together where the image is defined
    train: TrainJob  # the container job, without modal: testable with stand-in scripts
    check: Callable[[dict[str, Any], Path], dict[str, Any]] | None  # --validate --on modal:
    # the framework's own dry run of a job in a CPU container ({ok, returncode, output}); None: none
    note: str  # a line the recipe prints before it deploys; "" for none
    deploy_env: Callable[[Mapping[str, Compiled]], dict[str, str]] | None = None  # what the arms
    # need of the image (environment `image` reads), set before the app module is imported
    log: str = "run.log"  # the train job's log in the arm's volume folder (a failure's tail)


class ArmCall(NamedTuple):
    """A local arm's command: `module:function(**kwargs)` in the arm's folder, whose returned
    record is its metrics (whileai.launch.runner call)."""

    function: str
    kwargs: dict[str, Any]


class Prepared(NamedTuple):
    """The arms' specs as the recipe runs them (Launcher.prepare)."""

    runs: dict[str, RunSpec]
    subs: list[dict[str, Any]] | None  # each replacement (results.json `substitutions`); None: none kept
    meta: dict[str, Any]  # the manifest's meta the target adds after the shared keys
    paths: list[str]  # folders a spec's own module (its reward) imports from
    reward: str | None  # the baseline's reward ('module.function'), scoring every arm


class AsWritten:
    """What a launcher whose arms run their specs as written inherits: no recipe options of its
    own, nothing to install before a launch, the specs unchanged, no files beside the compiled
    ones and no call of its own in the container (prime-rl, verl, the toy)."""

    def add_options(self, ap: ArgumentParser) -> None:
        return None

    def require(self, validate: bool) -> None:
        return None

    def prepare(self, arms: Mapping[str, RunSpec], baseline: str, paths: list[str],
                models: Callable[[RunSpec], dict[str, str]], a: Namespace) -> Prepared:
        return Prepared(runs=dict(arms), subs=None, meta={}, paths=paths, reward=None)

    def files(self, c: Compiled, name: str, baseline: RunSpec) -> dict[str, str]:
        return {}

    def call(self, c: Compiled, prep: Prepared) -> ArmCall | None:
        return None


class Launcher(Protocol):
    """How a target runs paired arms: the hooks whileai.cli.recipe calls."""

    revision: str  # the framework's exact commit or version its arms run (results.json `versions`)
    tag: str  # the recipe's default --tag (the run folder's name)
    steps: int | None  # the recipe's default --steps; None: each spec's own
    options: Options  # how its arms compile (TRL's run on the CPU)
    app: ModalApp | None  # the Modal app its arms run on; None: processes on this machine
    tiny: bool  # its arms train tiny local models (whileai.vocab.tiny) built from the tasks
    validates: str  # --validate's help: the target's own check of what the recipe wrote
    preflight: str  # --no-preflight's help; "": the recipe runs no preflight
    env: dict[str, str]  # set (where unset) before anything runs, e.g. offline switches

    def add_options(self, ap: ArgumentParser) -> None:
        """The target's own recipe options (TRL's CPU sizes)."""
        ...

    def require(self, validate: bool) -> None:
        """SpecError naming what to install when the launch (or --validate) cannot run here."""
        ...

    def prepare(self, arms: Mapping[str, RunSpec], baseline: str, paths: list[str],
                models: Callable[[RunSpec], dict[str, str]], a: Namespace) -> Prepared:
        """The arms' specs as the recipe runs them (before --steps and --budget). paths: the
        spec folders; models(base): the tiny models' folders (role -> folder) for base's tasks,
        when `tiny`."""
        ...

    def compile(self, name: str, run: RunSpec, subs: list[dict[str, Any]] | None) -> Compiled:
        """One arm compiled with what the recipe adds to its spec (its overrides, reported);
        each replacement of the spec's values added to `subs`."""
        ...

    def meta(self, base: RunSpec, prep: Prepared) -> dict[str, Any]:
        """The manifest's meta the target states first: the holdout and the metric."""
        ...

    def files(self, c: Compiled, name: str, baseline: RunSpec) -> dict[str, str]:
        """Files an arm needs beside the compiled ones (verl's eval.sh for an SFT arm)."""
        ...

    def call(self, c: Compiled, prep: Prepared) -> ArmCall | None:
        """How a local arm trains and is scored; None: the compiled command itself."""
        ...

    def validate(self, dirs: Mapping[str, Path], compiled: Mapping[str, Compiled],
                 prep: Prepared) -> int:
        """--validate: the target's own check of each arm folder the recipe wrote; 1 if any
        fails."""
        ...

    def read_metrics(self, work: Path) -> Metrics:
        """A finished arm's folder, its framework's own logs read into the record (series,
        per-task holdout scores, what the logs say it spent); the job adds status and clocks."""
        ...


__all__ = ["PROGRESS", "ArmCall", "AsWritten", "Launcher", "Metrics", "ModalApp", "Point", "Prepared",
           "TrainJob", "describe_returncode", "error_record", "finished", "gpu_count", "positive",
           "read_metrics", "read_progress", "save", "tail", "write_files", "write_metrics"]
