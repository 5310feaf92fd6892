"""prime-rl's paired arms: its Launcher (whileai.targets.run) and what runs inside its Modal
container, without modal: testable with a fake `uv` on PATH.

`train_job` serves the OPD teacher when there is one (compile's serve line: the teacher's plan,
whileai.targets.prime_rl.teacher.serve_line), runs `uv run rl @ cfg.toml`, parses prime-rl's
metric logs into per-step series and writes `metrics.json` to the volume folder it works in. It
never raises: failures come back as an error record, also written to the volume. A restarted
(preempted) container that finds an ok `metrics.json` returns it without training again; one
that finds a checkpoint resumes from it (`resume_args`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import traceback
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.spec.load import loads_toml
from whileai.targets.base import Options
from whileai.targets.container import attempt, ckpt_every, done_before, restarted, run_group
from whileai.targets.prime_rl.image import PRIME_RL_DIR
from whileai.targets.prime_rl.metrics import collect_prime_rl, metric_lines, parse_usage
from whileai.targets.prime_rl.pin import COMMIT
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

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled

TEACHER_MEMORY = 0.4
# prime-rl's environment as the image synced it (whileai.targets.prime_rl.image): --frozen, so no
# re-resolve at start (the lock's rolling exclude-newer); --no-dev, as the sync was
UV_RUN = ["uv", "run", "--frozen", "--no-dev", "--project", PRIME_RL_DIR]


def teacher_argv(serve: str) -> tuple[list[str], dict[str, str]]:
    """compile's serve line (`[VAR=value ...] uv run inference ...`, its `--vllm.max-model-len`
    and memory share included) as argv and environment, run from prime-rl's checkout."""
    words = shlex.split(serve)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        k, _, v = words.pop(0).partition("=")
        env[k] = v
    if words[:2] != ["uv", "run"]:
        raise ValueError(f"the teacher's serve line is not `uv run ...`: {serve}")
    return [*UV_RUN, *words[2:]], env


CKPT_KEEP = 2  # the last ones kept on the volume


def resume_args(doc: dict[str, Any], work: Path, run_id: str, n: int) -> tuple[list[str], str | None]:
    """What `rl` gets so that attempt `n` of this arm resumes (prime-rl at the pin,
    docs/training.md:276-302): a fixed `--run.name` (its folder under output_dir; resuming needs
    it), checkpoints every tenth of the steps where the config sets no [ckpt] (`--ckpt.interval`,
    `--ckpt.keep-last`), and on a later attempt `--resume` (the latest checkpoint:
    configs/shared.py ResumeConfig); with none of its own yet, `--clean` where the run folder
    exists (it would be refused: utils/pathing.py validate_run_dir). Returns the flags and what
    it resumes from."""
    args: list[str] = []
    run = doc.get("run") or {}
    name = run.get("name")
    if not name:
        name = run_id
        args += ["--run.name", name]
    ckpt = doc.get("ckpt")
    if ckpt is None:
        every = ckpt_every(int(doc.get("max_steps") or 0))
        args += ["--ckpt.interval", str(every), "--ckpt.keep-last", str(CKPT_KEEP)]
    base = work / str(doc.get("output_dir") or "outputs") / str(run.get("dir") or name)
    if isinstance(ckpt, dict) and ckpt.get("output_dir"):
        base = work / str(ckpt["output_dir"])
    steps = sorted(int(p.name[5:]) for p in (base / "checkpoints").glob("step_*") if p.name[5:].isdigit())
    if n > 1 and steps:
        return args + ["--resume"], f"checkpoint step {steps[-1]} ({base.relative_to(work)}/checkpoints)"
    return args + (["--clean"] if base.exists() else []), None  # another spec's, or no checkpoint


def rl_argv(config: Path, *, dry_run: bool = False) -> list[str]:
    return [*UV_RUN, "rl", "@", str(config)] + (
        ["--dry-run"] if dry_run else [])


def wait_for_models(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Block until http://localhost:<port>/v1/models answers 200, the server dies, or timeout."""
    url = f"http://localhost:{port}/v1/models"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"teacher server {describe_returncode(proc.returncode)}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"teacher server did not answer {url} within {timeout:.0f} s")


def train_job(
    job: dict[str, Any],
    volume_dir: Path,
    work_root: Path,
    *,
    commit: Callable[[], None] = lambda: None,
    gpu: str | None = None,
    image: str | None = None,
    teacher_timeout: float = 900.0,
) -> dict[str, Any]:
    """Run one arm; return (and write to `volume_dir/metrics.json`) its metrics record."""
    out = volume_dir / "metrics.json"
    if (prev := done_before(volume_dir, job)) is not None:
        return prev
    start = time.monotonic()
    work = work_root / job["run_id"]
    teacher: subprocess.Popen[bytes] | None = None
    log_path = work / "rl.log"
    note = None
    try:
        tries = attempt(volume_dir, job)
        cfg = write_files(job, work)
        extra, source = resume_args(loads_toml(cfg.read_text(encoding="utf-8")), work,
                                    job["run_id"], tries)
        if tries > 1:
            note = restarted(tries, source or "the start (no checkpoint yet)")
            with open(log_path, "a", encoding="utf-8") as f:
                f.write(note + "\n")
        if job.get("teacher_serve"):  # served here (an endpoint teacher is served elsewhere)
            port = int(job.get("teacher_port") or 8001)
            argv, tenv = teacher_argv(job["teacher_serve"])
            tlog = open(work / "teacher.log", "ab")  # noqa: SIM115 (closed with the process)
            teacher = subprocess.Popen(
                argv, cwd=work, stdout=tlog, stderr=subprocess.STDOUT,
                env=dict(os.environ, **tenv), start_new_session=True,
            )
            wait_for_models(port, teacher_timeout, teacher)
        rl_start = time.monotonic()
        code = run_group(rl_argv(cfg) + extra, cwd=work, log=log_path)
        rl_seconds = round(time.monotonic() - rl_start, 1)
        read = LAUNCHER.read_metrics(work)
        series, per_task, usage, how = read.series, read.per_task, read.usage, read.usage_source
        usage["train_seconds"], how["train_seconds"] = rl_seconds, "wall clock of `rl`"
        if (n := gpu_count(gpu)) is not None:
            usage["gpu_seconds"] = round(rl_seconds * n, 1)
            how["gpu_seconds"] = f"wall clock of `rl` x {n} GPUs held by the container"
        if note:  # this attempt's clocks only
            how = {k: f"{v}; {note}" if k.endswith("_seconds") else v for k, v in how.items()}
        m = Metrics(series=series, per_task=per_task, returncode=code,
                    seconds=round(time.monotonic() - start, 1), gpu=gpu, image=image,
                    usage=usage, usage_source=how)
        if code != 0:
            m = m.model_copy(update={"status": "error", "error": f"rl {describe_returncode(code)}",
                                     "log_tail": tail(log_path)})
        record = m.model_dump(mode="json")
    except Exception as e:
        record = error_record(f"{type(e).__name__}: {e}",
                              seconds=round(time.monotonic() - start, 1), gpu=gpu, image=image,
                              log_tail=tail(log_path) or traceback.format_exc()[-4000:])
    finally:
        if teacher is not None:
            teacher.terminate()
            try:
                teacher.wait(30)
            except subprocess.TimeoutExpired:
                teacher.kill()
    return save(out, record, commit)


def validate_job(job: dict[str, Any], work_root: Path) -> dict[str, Any]:
    """`uv run rl @ cfg.toml --dry-run`; returns {ok, returncode, output} and never raises."""
    try:
        cfg = write_files(job, work_root / job["run_id"])
        p = subprocess.run(rl_argv(cfg, dry_run=True), cwd=cfg.parent, capture_output=True,
                           text=True, timeout=900)
        return {"arm": job["arm"], "ok": p.returncode == 0, "returncode": p.returncode,
                "output": (p.stdout + p.stderr)[-4000:]}
    except Exception as e:
        return {"arm": job["arm"], "ok": False, "returncode": None,
                "output": f"{type(e).__name__}: {e}"}


def image(gpus: list[str]) -> tuple[Any, str]:
    """prime-rl's image for these GPU choices, and its label (whileai.targets.prime_rl.image)."""
    from whileai.targets.prime_rl.image import build

    return build(gpus)


def deploy_env(compiled: Mapping[str, Compiled]) -> dict[str, str]:
    """What the arms need of the image (their taskset packages, attn), for the deploy."""
    from whileai.targets.prime_rl.image import deploy_env as needs

    return needs(loads_toml(s.text) for c in compiled.values() for s in (c.stages or (c,)))


def validate_offline(compiled: Mapping[str, Compiled]) -> int:
    """The pinned schema and loader rules, then the values each process will really get."""
    from whileai.spec.load import loads_toml
    from whileai.targets.prime_rl.check import check_document
    from whileai.targets.prime_rl.resolve import render, resolve

    bad = 0
    for name, c in compiled.items():
        doc = loads_toml(c.text)
        problems = check_document(doc)
        bad += bool(problems)
        print(f"\n{name}: {'REJECTED' if problems else 'ok'} ({c.pin})")
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        print(render(resolve(doc)[1]))
    return 1 if bad else 0


class PrimeRLLauncher(AsWritten):
    """prime-rl's arms on Modal, 2 GPUs each: one TOML per arm, `uv run rl @ cfg.toml`, the OPD
    teacher served in the same container."""

    revision = COMMIT
    tag = "rt"
    steps: int | None = None
    options = Options()
    app: ModalApp | None = ModalApp(
        name=os.environ.get("WHILEAI_MODAL_APP", "whileai"),
        image=image, train=train_job, check=validate_job, note="", deploy_env=deploy_env,
        log="rl.log")
    tiny = False
    validates = "dry-run each config (see --on)"
    preflight = "deploy without `whileai preflight`'s probes of the arms' remote teachers"
    env: dict[str, str] = {}

    def compile(self, name: str, run: RunSpec, subs: list[dict[str, Any]] | None) -> Compiled:
        from whileai.files.names import arm_group, main_file
        from whileai.targets.prime_rl.compile import compile

        return compile(run, name=main_file(arm_group(name), ".toml"))

    def meta(self, base: RunSpec, prep: Prepared) -> dict[str, Any]:
        return {"holdout": f"{base.taskset} (eval split, {base.eval.examples} tasks)",
                "metric": f"{base.taskset}'s own reward (its verifiers rubric)"}

    def validate(self, dirs: Mapping[str, Path], compiled: Mapping[str, Compiled],
                 prep: Prepared) -> int:
        return validate_offline(compiled)

    def read_metrics(self, work: Path) -> Metrics:
        """prime-rl's metrics.jsonl (trainer and orchestrator) and its last eval step's episodes."""
        series, per_task = collect_prime_rl(work)
        usage, how = parse_usage(metric_lines(work))
        return Metrics(series=series, per_task=per_task, usage=usage, usage_source=how)


LAUNCHER = PrimeRLLauncher()
