"""verl's paired arms: its Launcher (whileai.targets.run) and what runs inside its Modal
container, without modal: testable with stand-in scripts.

`train_verl_job` writes the arm's run folder (run.sh and the files beside it, as `whileai compile
-t verl` wrote them), runs `bash run.sh` as written, then `bash eval.sh` where the arm has one
(the SFT arm: its final model scored on the holdout by verl's own validation,
whileai.targets.verl.eval), reads verl's own logs (whileai.targets.verl.metrics) and writes
`metrics.json` to the volume folder. verl itself starts the OPD teacher on its own GPU pool, so
nothing is served here. It never raises: a failure comes back as an error record, also written
to the volume; a restarted (preempted) container that finds an ok `metrics.json` returns it
without training again, and one that finds a checkpoint resumes from it: the recipe has every arm
save one each tenth of its steps (`trainer.save_freq`) under its folder on the volume, and verl's
`trainer.resume_mode=auto` (trainer/config/ppo_trainer.yaml:187) loads the latest one
(trainer/ppo/ray_trainer.py:1052-1070: `default_local_dir`'s latest_checkpointed_iteration.txt).

The image is an assumption this machine cannot build (no GPU, no Modal token): CUDA 13.0 devel on
Ubuntu 24.04 with Python 3.12, then verl 0.9.1 with its `vllm` extra (torch 2.11.0, vLLM 0.24.0),
then flash-attn 2.8.3 (which verl's FSDP workers import) in its own layer built without isolation:
it has only a source distribution whose setup.py imports torch, and pip's isolated build has no
torch (the extra `flash-attn-cu130torch211` in the same `pip install` would stop at "No module
named 'torch'"). WHILEAI_VERL_IMAGE names a registry image instead (one of verl's own, verlai/verl
on Docker Hub); verl 0.9.1 is pip-installed on top with --no-deps. The image's label is computed
with it, at deploy time (`image`), and reaches the container in the image's environment.
Environment at deploy time: as whileai.launch.modal_app, plus WHILEAI_VERL_APP ("whileai-verl").
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import traceback
from argparse import Namespace
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.targets.base import Options
from whileai.targets.container import attempt, ckpt_every, done_before, restarted, run_group
from whileai.targets.run import (
    AsWritten,
    Metrics,
    ModalApp,
    Prepared,
    describe_returncode,
    error_record,
    gpu_count,
    save,
    tail,
    write_files,
)
from whileai.targets.verl.metrics import EVAL_LOG, TRAIN_LOG, VAL_DIR, read_run
from whileai.targets.verl.pin import TARGET, VERSION

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled

REGISTRY_ENV = "WHILEAI_VERL_IMAGE"
CUDA = "nvidia/cuda:13.0.0-devel-ubuntu24.04"
EXTRAS = f"verl[vllm]=={VERSION}"  # pins torch==2.11.0, vllm==0.24.0 (verl 0.9.1's METADATA)
TORCH = "torch==2.11.0"  # named in the first layer too, so flash-attn's build finds it
FLASH_ATTN = "flash-attn==2.8.3"  # the extra flash-attn-cu130torch211 (verl 0.9.1's METADATA)
BUILD_DEPS = ("packaging", "ninja", "psutil", "setuptools", "wheel")  # flash-attn's setup.py, no isolation


def image_label(registry: str | None) -> str:
    if registry:
        return f"{registry} + {TARGET}"
    return f"cuda 13.0 devel py3.12 + {EXTRAS}, {FLASH_ATTN} built without isolation"


IMAGE_LABEL = image_label(os.environ.get(REGISTRY_ENV))  # the recipe's note, before deploy

EVAL = "eval.sh"  # the SFT arm's scoring step (whileai.targets.verl.eval)


def _bash(script: str, work: Path, logger: Path, log: Path) -> int:
    env = dict(os.environ, VERL_FILE_LOGGER_PATH=str(logger))
    return run_group(["bash", script], cwd=work, log=log, env=env)


def resume_overrides(run: RunSpec) -> dict[str, Any]:
    """What every arm sets so that a restart resumes: a checkpoint each tenth of its steps, verl's
    auto resume (the defaults save none: save_freq -1, ppo_trainer.yaml:174)."""
    every = ckpt_every(run.steps)
    where = "sft.trainer" if run.method.type == "sft" else "trainer"
    return {f"{where}.save_freq": every, f"{where}.resume_mode": "auto"}


def train_verl_job(
    job: dict[str, Any],
    volume_dir: Path,
    work_root: Path,
    *,
    commit: Callable[[], None] = lambda: None,
    gpu: str | None = None,
    image: str | None = None,
) -> dict[str, Any]:
    """Run one verl arm; return (and write to `volume_dir/metrics.json`) its metrics record."""
    out = volume_dir / "metrics.json"
    if (prev := done_before(volume_dir, job)) is not None:
        return prev
    start = time.monotonic()
    work = work_root / job["run_id"]
    log = work / "run.log"
    try:
        tries = attempt(volume_dir, job)
        if tries == 1 and (work / "outputs").is_dir():  # another spec's checkpoints: not resumed
            shutil.rmtree(work / "outputs")
        write_files(job, work)
        if tries > 1:
            with open(log, "a", encoding="utf-8") as f:
                f.write(restarted(tries, "verl's latest checkpoint under outputs/ (resume_mode auto)")
                        + "\n")
        code = _bash(job.get("main") or "run.sh", work, work / TRAIN_LOG, log)
        train_seconds = round(time.monotonic() - start, 1)
        scored = EVAL in job["files"]
        step = "run.sh"
        if code == 0 and scored:
            step = EVAL
            code = _bash(EVAL, work, work / EVAL_LOG, log)
        read = LAUNCHER.read_metrics(work)
        series, per_task = read.series, read.per_task
        usage = {"train_seconds": train_seconds}
        how = {"train_seconds": "wall clock of `bash run.sh`"}
        if (n := gpu_count(gpu)) is not None:
            usage["gpu_seconds"] = round(train_seconds * n, 1)
            how["gpu_seconds"] = f"wall clock of `bash run.sh` x {n} GPUs held by the container"
        m = Metrics(series=series, per_task=per_task, returncode=code, gpu=gpu, image=image,
                    seconds=round(time.monotonic() - start, 1), usage=usage, usage_source=how)
        if code != 0:
            m = m.model_copy(update={"status": "error", "error": f"{step} {describe_returncode(code)}",
                                     "log_tail": tail(log)})
        elif not per_task:
            m = m.model_copy(update={"status": "error", "log_tail": tail(log), "error": "verl wrote no "
                                     f"holdout scores ({VAL_DIR}/<step>.jsonl): nothing to compare"})
        record = m.model_dump(mode="json")
    except Exception as e:
        record = error_record(f"{type(e).__name__}: {e}", seconds=round(time.monotonic() - start, 1),
                              gpu=gpu, image=image, log_tail=tail(log) or traceback.format_exc()[-4000:])
    return save(out, record, commit)


def validate_job(job: dict[str, Any], work_root: Path) -> dict[str, Any]:
    """verl's own check of the arm's run.sh (and eval/run.sh) in a CPU container of the arm's
    image, where verl is installed (whileai.targets.verl.check, as `whileai check -t verl`);
    {arm, ok, returncode, output}, never raises."""
    from whileai.targets.verl.check import check

    try:
        work = work_root / job["run_id"]
        write_files(job, work)
        bad, lines = False, []
        for script in ("run.sh", "eval/run.sh"):
            if (work / script).is_file():
                for level, line in check(work / script, "auto"):
                    bad |= level == "error"
                    lines.append(f"{script}: {level}: {line}")
        return {"arm": job["arm"], "ok": not bad, "returncode": int(bad),
                "output": "\n".join(lines)[-4000:]}
    except Exception as e:
        return {"arm": job["arm"], "ok": False, "returncode": None,
                "output": f"{type(e).__name__}: {e}"}


def image(gpus: list[str]) -> tuple[Any, str]:
    """verl's image (modal imported here), for any of the GPU choices, and its label: CUDA 13.0
    with verl's own extras, torch before flash-attn, or WHILEAI_VERL_IMAGE."""
    import modal

    registry = os.environ.get(REGISTRY_ENV)
    if registry:
        img = modal.Image.from_registry(registry).pip_install(TARGET, extra_options="--no-deps")
    else:
        img = (modal.Image.from_registry(CUDA, add_python="3.12")
               .apt_install("git", "build-essential")
               .pip_install(EXTRAS, TORCH, "peft", "pyarrow", "pandas", *BUILD_DEPS)
               .pip_install(FLASH_ATTN, extra_options="--no-build-isolation"))
    return img, image_label(registry)


def validate_scripts(dirs: Mapping[str, Path]) -> int:
    """verl's own check, then whileai's rules, of every run.sh the arms will run: 1 if any fails, 2
    when verl is not importable here (nothing checked, nothing called REJECTED)."""
    from whileai.targets.verl.check import SETUP, available, check

    if not available():  # nothing was checked: said so, exit 2 as `whileai check` without verl
        print(f"error: --validate: the arms' run.sh not checked (verl is not importable here: "
              f"{SETUP})", file=sys.stderr)
        return 2
    bad = 0
    for name, folder in dirs.items():
        for script in ("run.sh", "eval/run.sh"):
            path = folder / script
            if not path.is_file():
                continue
            lines = check(path, "auto")
            failed = any(level == "error" for level, _ in lines)
            bad += failed
            print(f"\n{name}: {script}: {'REJECTED' if failed else 'ok'}")
            for level, line in lines:
                print(f"  {level}: {line}", file=sys.stderr if level == "error" else sys.stdout)
            if not any(level != "ok" and "not checked by verl" not in line for level, line in lines):
                print("  whileai's rules where verl is lax: nothing refused")
    return 1 if bad else 0


REHEARSE_SECONDS = 600.0  # one arm's rehearsal, at most (docs/rehearse.md, "verl")


def rehearse_arms(compiled: Mapping[str, Compiled]) -> int:
    """`whileai rehearse -t verl` of every arm (verl's own code on this CPU, stand-ins where a GPU
    is needed): 1 if any fails; "not checked" for each, and 0, where no Python here has verl."""
    from whileai.errors import SpecError
    from whileai.targets.verl.rehearse.env import ENV, find_python
    from whileai.targets.verl.rehearse.hook import REHEARSAL

    try:
        python = find_python(None)
    except SpecError:
        for name in compiled:
            print(f"\n{name}: rehearsal: not checked (no Python with verl here: set ${ENV}; "
                  "docs/rehearse.md, 'verl')")
        return 0
    bad = 0
    for name, c in compiled.items():
        result = REHEARSAL.rehearse(REHEARSAL.stages(c), python=python, steps=1,
                                    timeout=REHEARSE_SECONDS, keep=None, say=lambda line: None)
        bad += not result.ok
        print(f"\n{name}: rehearsal: {'ok' if result.ok else 'FAILED'}")
        for line in REHEARSAL.lines(result):
            print(f"  {line}")
    return 1 if bad else 0


class VerlLauncher(AsWritten):
    """verl's arms on Modal: each arm's run.sh as written (`bash run.sh`), what the recipe reads
    back added as overrides, an SFT arm scored by eval.sh (whileai.targets.verl.eval)."""

    revision = VERSION
    tag = "verl"
    steps: int | None = None
    options = Options()
    app: ModalApp | None = ModalApp(
        name=os.environ.get("WHILEAI_VERL_APP", "whileai-verl"), image=image,
        train=train_verl_job, check=validate_job,
        note=f"image: {IMAGE_LABEL} (not built or run on this machine; WHILEAI_VERL_IMAGE names another)")
    tiny = False
    validates = "verl's own check, whileai's rules and a rehearsal (whileai rehearse -t verl)"
    preflight = ""
    env: dict[str, str] = {}

    def prepare(self, arms: Mapping[str, RunSpec], baseline: str, paths: list[str],
                models: Callable[[RunSpec], dict[str, str]], a: Namespace) -> Prepared:
        return Prepared(runs=dict(arms), subs=None, meta={"target": "verl"}, paths=paths, reward=None)

    def compile(self, name: str, run: RunSpec, subs: list[dict[str, Any]] | None) -> Compiled:
        """The spec with what the recipe needs from verl's logs, as overrides the report shows."""
        from whileai.spec.load import replace_run
        from whileai.targets.verl.compile import compile
        from whileai.targets.verl.eval import recipe_overrides, sft_overrides

        extra = (sft_overrides() if run.method.type == "sft" else recipe_overrides(name)) | \
            resume_overrides(run)
        return compile(replace_run(run, overrides=dict(run.overrides) | extra))

    def meta(self, base: RunSpec, prep: Prepared) -> dict[str, Any]:
        return {"holdout": f"{base.taskset} (eval split, {base.eval.examples} tasks)",
                "metric": f"{base.taskset}'s own reward (reward.py, verl's validation: val-core mean@n)"}

    def files(self, c: Compiled, name: str, baseline: RunSpec) -> dict[str, str]:
        """An SFT arm's eval.sh and eval/: scored on the baseline's holdout, as the pairs are."""
        if c.run.method.type != "sft":
            return {}
        from whileai.targets.verl.eval import eval_files

        return eval_files(c, name, baseline)

    def validate(self, dirs: Mapping[str, Path], compiled: Mapping[str, Compiled],
                 prep: Prepared) -> int:
        return max(validate_scripts(dirs), rehearse_arms(compiled))

    def read_metrics(self, work: Path) -> Metrics:
        """verl's file logger and its last validation dump; an arm with eval.sh (SFT) is scored
        by that step's dump, at its last training step."""
        series, per_task = read_run(work, scored=(work / EVAL).is_file())
        return Metrics(series=series, per_task=per_task)


LAUNCHER = VerlLauncher()
