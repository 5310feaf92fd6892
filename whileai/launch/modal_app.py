"""The Modal app and executor: the only module that imports modal. One app per target, built
from what the target's launcher says (whileai.targets.run.ModalApp: its image, its container
job); the container entry asks the target what to run.

Import it only on the path that launches (`import whileai` and `whileai.launch` never do); a
deployable app needs its functions at module level, so modal is imported at the top here, and
the target is read from the environment when the module is imported (the image carries it into
the container):

    modal deploy -m whileai.launch.modal_app                            # prime-rl's app, "whileai"
    WHILEAI_MODAL_TARGET=verl modal deploy -m whileai.launch.modal_app  # verl's, "whileai-verl"
    # then launch(manifest, ModalExecutor()); later, collect(manifest, ModalExecutor())

Environment at deploy time: WHILEAI_MODAL_TARGET (the target, "prime-rl"), WHILEAI_MODAL_APP
(prime-rl's app name, "whileai"; verl's is WHILEAI_VERL_APP, "whileai-verl"), WHILEAI_MODAL_VOLUME
("whileai-runs"), WHILEAI_MODAL_GPUS (fallback list, "H100:2,H200:2,A100-80GB:2"),
WHILEAI_MODAL_TIMEOUT (seconds per attempt, 43200), WHILEAI_MODAL_SECRETS (comma-separated
Modal secret names, e.g. "huggingface,wandb"; none by default). They reach the container through
the image's environment (CONTAINER_ENV, `Image.env`): the container imports this module again
without the launcher's environment, and a function whose dependencies (its secrets, image,
volume) differ from the deployed ones does not start (modal/_container_entrypoint.py:377-387).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import modal
import modal.exception as mx

from whileai.errors import SpecError
from whileai.launch import modal_errors as me
from whileai.launch.executor import Outcome, modal_gpus
from whileai.launch.manifest import SLIM_MARK, ArmRecord, Manifest
from whileai.targets import registry
from whileai.targets.container import ATTEMPTS
from whileai.targets.run import Metrics, ModalApp

TARGET = os.environ.get("WHILEAI_MODAL_TARGET", "prime-rl")
VOLUME_NAME = os.environ.get("WHILEAI_MODAL_VOLUME", "whileai-runs")
GPUS = modal_gpus()
TIMEOUT = int(os.environ.get("WHILEAI_MODAL_TIMEOUT", "43200"))
SECRETS = [s for s in os.environ.get("WHILEAI_MODAL_SECRETS", "").split(",") if s]
MOUNT = "/runs"
# the deploy's configuration, carried into the container by the image (names only, no values)
CONFIG = ("WHILEAI_MODAL_APP", "WHILEAI_VERL_APP", "WHILEAI_VERL_IMAGE")
CONTAINER_ENV = {"WHILEAI_MODAL_TARGET": TARGET, "WHILEAI_MODAL_VOLUME": VOLUME_NAME,
                 "WHILEAI_MODAL_GPUS": ",".join(GPUS), "WHILEAI_MODAL_TIMEOUT": str(TIMEOUT),
                 "WHILEAI_MODAL_SECRETS": ",".join(SECRETS)} | {
                     k: os.environ[k] for k in CONFIG if os.environ.get(k)}


def _spec(name: str) -> ModalApp:
    launcher = registry.get(name, "WHILEAI_MODAL_TARGET").launcher
    if launcher is None or launcher.app is None:
        raise SpecError("WHILEAI_MODAL_TARGET", name, "a target whose arms run on Modal",
                        hint=f"{name} has no Modal app")
    return launcher.app


SPEC = _spec(TARGET)
APP_NAME = SPEC.name
DEPLOY = f"WHILEAI_MODAL_TARGET={TARGET} modal deploy -m whileai.launch.modal_app"
LABEL_ENV = "WHILEAI_IMAGE_LABEL"

# The image and its label are computed together, where the image is defined (at deploy); the
# label reaches the container in the image's environment, so a container reports the deployed one.
_image, _label = SPEC.image(GPUS)
IMAGE_LABEL = os.environ.get(LABEL_ENV) or _label
image = (_image.env({**CONTAINER_ENV, LABEL_ENV: IMAGE_LABEL})
         .add_local_python_source("whileai"))
volume = modal.Volume.from_name(VOLUME_NAME, create_if_missing=True)
app = modal.App(APP_NAME, image=image)
_secrets = [modal.Secret.from_name(s) for s in SECRETS]


def _gpu_name() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.split("\n")
    except OSError:
        return None
    names = [n.strip() for n in out if n.strip()]
    return f"{names[0]} x{len(names)}" if names else None


@app.function(gpu=GPUS, timeout=TIMEOUT, volumes={MOUNT: volume}, secrets=_secrets)
def train(job: dict[str, Any]) -> dict[str, Any]:
    """One arm on the container's GPUs, run by its target's container job; returns its metrics
    record (status 'error' instead of raising). The arm works in its folder on the volume (its
    files, logs, outputs and checkpoints: a restarted input resumes from them); modal's
    InputCancellation (a BaseException) is let through."""
    try:
        return SPEC.train(
            job, Path(MOUNT) / job["run_id"], Path(MOUNT), commit=volume.commit,
            gpu=_gpu_name(), image=IMAGE_LABEL)
    except Exception as e:
        return Metrics(status="error", error=f"{type(e).__name__}: {e}").model_dump(mode="json")


if SPEC.check is not None:
    @app.function(cpu=2, memory=4096, timeout=1800)
    def validate(job: dict[str, Any]) -> dict[str, Any]:
        """The target's own dry run of one arm's files in a CPU container."""
        assert SPEC.check is not None
        return SPEC.check(job, Path("/root/work"))


def job_payload(arm: ArmRecord) -> dict[str, Any]:
    """The JSON-able job for one arm: what the remote functions receive."""
    s = arm.spec
    files = {k: (Path(arm.dir) / k).read_text() if v.startswith(SLIM_MARK) else v
             for k, v in s.files.items()}  # large files live in the arm's folder
    return {"run_id": arm.run_id, "arm": s.name, "files": files, "main": s.main,
            "teacher": s.teacher, "teacher_port": s.teacher_port, "teacher_serve": s.teacher_serve}


@contextmanager
def infra_errors() -> Iterator[None]:
    """The client's own errors and the server's (whileai.launch.modal_errors CLIENT, SERVER but a
    missing object, which the caller names) → InfraError: a deploy, a dry run or a spawn that
    Modal did not answer stops with nothing marked, never an arm's failure."""
    try:
        yield
    except mx.NotFoundError:
        raise
    except (*me.CLIENT, *me.SERVER) as e:
        raise me.infra(e) from e


def validate_arms(m: Manifest) -> dict[str, dict[str, Any]]:
    """Dry-run every arm's files with the target itself (an ephemeral app run)."""
    jobs = [job_payload(a) for a in m.arms.values()]
    with infra_errors(), modal.enable_output(), app.run():
        results = list(validate.map(jobs, return_exceptions=True))
    return {j["arm"]: (r if isinstance(r, dict) else {"ok": False, "output": repr(r)})
            for j, r in zip(jobs, results, strict=True)}


class BuildError(RuntimeError):
    """An image that did not build: one line naming the image and where its build log is."""


def deploy() -> dict[str, str]:
    """Deploy the app with modal's own output on (each image step's build log streamed, as
    `modal deploy` shows it: modal/output.py enable_output); returns what --collect needs later
    (the app, the volume, the image), kept in the manifest."""
    with infra_errors():
        try:
            with modal.enable_output():
                app.deploy()
        except mx.ImageBuildError as e:
            raise BuildError(
                f"the image {IMAGE_LABEL!r} of app {APP_NAME!r} did not build (image {e.image_id}: "
                f"{(str(e).strip().splitlines() or ['no message'])[-1]}); its build log is above "
                f"and in `modal image logs {e.image_id}` (modal/cli/image.py)") from None
    return {"app": APP_NAME, "volume": VOLUME_NAME, "image": IMAGE_LABEL}


class ModalExecutor:
    """Spawns `train` on the deployed app; polls by call id; reads the volume when expired.

    Built from the manifest's `meta["modal"]` (the app and volume its arms were launched on), not
    from this process's environment: `ModalExecutor.of(manifest)`."""

    name = "modal"

    def __init__(self, app_name: str = APP_NAME, volume_name: str = VOLUME_NAME,
                 log: str = SPEC.log) -> None:
        self.app_name = app_name
        self.volume_name = volume_name
        self.log = log

    @classmethod
    def of(cls, m: Manifest) -> ModalExecutor:
        kept = m.meta.get("modal") or {}
        return cls(kept.get("app", APP_NAME), kept.get("volume", VOLUME_NAME))

    def spawn(self, arm: ArmRecord) -> str:
        try:
            with infra_errors():
                fn = modal.Function.from_name(self.app_name, "train")
                return str(fn.spawn(job_payload(arm)).object_id)
        except mx.NotFoundError as e:
            raise RuntimeError(f"{e} (deploy first: {DEPLOY})") from e

    def running(self, arm: ArmRecord) -> bool:
        """Whether the arm's call still runs (or Modal cannot say: then it may, so True)."""
        try:
            modal.FunctionCall.from_id(str(arm.handle)).get(timeout=0)
        except TimeoutError:
            return True
        except me.CLIENT as e:
            raise me.infra(e) from e
        except Exception as e:
            return me.unanswered(e) is not None
        return False

    def cancel(self, arm: ArmRecord) -> None:
        """Cancel this arm's call alone (never the app: other tags' arms run there too)."""
        with infra_errors():
            modal.FunctionCall.from_id(str(arm.handle)).cancel()

    def poll(self, arm: ArmRecord) -> Outcome:
        try:
            result = modal.FunctionCall.from_id(str(arm.handle)).get(timeout=0)
        except TimeoutError:
            return Outcome("pending", note=self.restarts(arm))
        except me.CLIENT as e:
            raise me.infra(e) from e
        except mx.OutputExpiredError:
            return self.from_volume(arm)
        except Exception as e:
            if (note := me.unanswered(e)) is not None:
                return Outcome("pending", note=note)
            return Outcome("failed", None, me.ended(e, TIMEOUT) + self.tail(arm))
        return outcome_from_result(result)

    def restarts(self, arm: ArmRecord) -> str | None:
        """A running arm's attempts so far, from its folder on the volume
        (whileai.targets.container.attempt): words where it was restarted, else None."""
        try:
            data = b"".join(modal.Volume.from_name(self.volume_name).read_file(
                f"{arm.run_id}/{ATTEMPTS}"))
        except Exception:  # a note only: the arm is pending whatever the volume says
            return None
        n = len(data.split())
        return (f"restarted: attempt {n} (a preempted input that Modal restarted, or a relaunch), "
                "resuming from its last checkpoint" if n > 1 else None)

    def from_volume(self, arm: ArmRecord) -> Outcome:
        """Outputs expire after 7 days; the metrics the run wrote to the volume do not."""
        path = f"{arm.run_id}/metrics.json"
        try:
            data = b"".join(modal.Volume.from_name(self.volume_name).read_file(path))
        except me.CLIENT as e:
            raise me.infra(e) from e
        except FileNotFoundError:
            return Outcome("failed", None, f"outputs expired and {path} is not on the volume")
        return outcome_from_result(data)

    def tail(self, arm: ArmRecord, lines: int = 30, most: int = 4 << 20) -> str:
        """The last lines of the arm's log on the volume (read whole only up to `most` bytes);
        where to find it otherwise."""
        path = f"{arm.run_id}/{self.log}"
        where = f"; its log: modal volume get {self.volume_name} {path}"
        try:
            vol = modal.Volume.from_name(self.volume_name)
            size = next((e.size for e in vol.listdir(arm.run_id) if e.path.endswith(self.log)), None)
            if size is None or size > most:
                return where
            text = b"".join(vol.read_file(path)).decode("utf-8", "replace")
        except Exception:  # the tail is a courtesy: the outcome stands without it
            return where
        return where + "; log tail:\n" + "\n".join(text.splitlines()[-lines:])


def outcome_from_result(result: Any) -> Outcome:
    try:
        if isinstance(result, (bytes, str)):
            return Outcome.from_metrics(Metrics.model_validate_json(result))
        return Outcome.from_metrics(Metrics.model_validate(result))
    except ValueError as e:
        return Outcome("failed", None, f"unreadable result: {str(e).splitlines()[0]}")
