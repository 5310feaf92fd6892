"""The Modal app and backend: the only module that imports modal.

Import it only on the path that launches (`import whileai` and `whileai.launch` never do); a
deployable app needs its functions at module level, so modal is imported at the top here.

    modal deploy -m whileai.launch.modal_app      # once per change of image or code
    # then launch(manifest, ModalBackend()); later, collect(manifest, ModalBackend())

Environment at deploy time: WHILEAI_MODAL_APP (app name, "whileai"), WHILEAI_MODAL_VOLUME
("whileai-runs"), WHILEAI_MODAL_GPUS (fallback list, "H100:2,H200:2,A100-80GB:2"),
WHILEAI_MODAL_TIMEOUT (seconds per attempt, 43200), WHILEAI_MODAL_SECRETS (comma-separated
Modal secret names, e.g. "huggingface,wandb"; none by default).
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

from whileai.launch.backend import InfraError, Outcome
from whileai.launch.manifest import ArmRecord, Manifest
from whileai.launch.metrics import Metrics
from whileai.launch.remote import PRIME_RL_DIR, job_payload
from whileai.targets.prime_rl.pin import COMMIT as PRIME_RL_COMMIT

APP_NAME = os.environ.get("WHILEAI_MODAL_APP", "whileai")
VOLUME_NAME = os.environ.get("WHILEAI_MODAL_VOLUME", "whileai-runs")
GPUS = os.environ.get("WHILEAI_MODAL_GPUS", "H100:2,H200:2,A100-80GB:2").split(",")
TIMEOUT = int(os.environ.get("WHILEAI_MODAL_TIMEOUT", "43200"))
SECRETS = [s for s in os.environ.get("WHILEAI_MODAL_SECRETS", "").split(",") if s]
MOUNT = "/runs"
IMAGE_LABEL = f"debian_slim py3.12 + prime-rl@{PRIME_RL_COMMIT[:12]} (uv sync)"

image = (
    modal.Image.debian_slim(python_version="3.12")
    .apt_install("git", "curl", "build-essential")
    .pip_install("uv", "pydantic>=2.6,<3", "tomli-w>=1.0", "typer>=0.12", "rich>=13")
    .run_commands(
        f"git clone https://github.com/PrimeIntellect-ai/prime-rl.git {PRIME_RL_DIR}",
        f"cd {PRIME_RL_DIR} && git checkout {PRIME_RL_COMMIT} && uv sync",
    )
    .add_local_python_source("whileai")
)
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
    """One arm on 2 GPUs; returns its metrics record (status 'error' instead of raising)."""
    try:
        from whileai.launch.remote import train_job

        return train_job(job, Path(MOUNT) / job["run_id"], Path("/root/work"),
                         commit=volume.commit, gpu=_gpu_name(), image=IMAGE_LABEL)
    except Exception as e:
        return Metrics(status="error", error=f"{type(e).__name__}: {e}").model_dump(mode="json")


@app.function(cpu=2, memory=4096, timeout=1800)
def validate(job: dict[str, Any]) -> dict[str, Any]:
    """`uv run rl @ cfg.toml --dry-run` in a CPU container."""
    from whileai.launch.remote import validate_job

    return validate_job(job, Path("/root/work"))


@contextmanager
def infra_errors() -> Iterator[None]:
    """AuthError / ConnectionError → InfraError (never an arm's failure)."""
    try:
        yield
    except (mx.AuthError, mx.ConnectionError, ConnectionError) as e:
        raise InfraError(f"{type(e).__name__}: {e}") from e


def validate_arms(m: Manifest) -> dict[str, dict[str, Any]]:
    """Dry-run every arm's config with the real prime-rl loader (an ephemeral app run)."""
    jobs = [job_payload(a) for a in m.arms.values()]
    with infra_errors(), modal.enable_output(), app.run():
        results = list(validate.map(jobs, return_exceptions=True))
    return {j["arm"]: (r if isinstance(r, dict) else {"ok": False, "output": repr(r)})
            for j, r in zip(jobs, results, strict=True)}


def deploy() -> None:
    with infra_errors():
        app.deploy()


class ModalBackend:
    """Spawns `train` on the deployed app; polls by call id; reads the volume when expired."""

    name = "modal"

    def __init__(self, app_name: str = APP_NAME, volume_name: str = VOLUME_NAME) -> None:
        self.app_name = app_name
        self.volume_name = volume_name

    def spawn(self, arm: ArmRecord) -> str:
        try:
            with infra_errors():
                fn = modal.Function.from_name(self.app_name, "train")
                return str(fn.spawn(job_payload(arm)).object_id)
        except mx.NotFoundError as e:
            hint = "deploy first: modal deploy -m whileai.launch.modal_app"
            raise RuntimeError(f"{e} ({hint})") from e

    def poll(self, arm: ArmRecord) -> Outcome:
        try:
            result = modal.FunctionCall.from_id(str(arm.handle)).get(timeout=0)
        except (mx.AuthError, mx.ConnectionError, ConnectionError) as e:
            raise InfraError(f"{type(e).__name__}: {e}") from e
        except mx.OutputExpiredError:
            return self.from_volume(arm)
        except mx.FunctionTimeoutError as e:
            return Outcome("failed", None, f"ran past its timeout ({TIMEOUT} s per attempt): {e}")
        except (mx.RemoteError, mx.InternalFailure) as e:
            why = f"container terminated ({type(e).__name__}, e.g. OOM or preemption): {e}"
            return Outcome("failed", None, why)
        except TimeoutError:
            return Outcome("pending")
        except Exception as e:  # the wrapper returns records, so this is unexpected code
            return Outcome("failed", None, f"the remote call raised {type(e).__name__}: {e}")
        return outcome_from_result(result)

    def from_volume(self, arm: ArmRecord) -> Outcome:
        """Outputs expire after 7 days; the metrics the run wrote to the volume do not."""
        path = f"{arm.run_id}/metrics.json"
        try:
            data = b"".join(modal.Volume.from_name(self.volume_name).read_file(path))
        except (mx.AuthError, mx.ConnectionError, ConnectionError) as e:
            raise InfraError(f"{type(e).__name__}: {e}") from e
        except FileNotFoundError:
            return Outcome("failed", None, f"outputs expired and {path} is not on the volume")
        return outcome_from_result(data)


def outcome_from_result(result: Any) -> Outcome:
    try:
        if isinstance(result, (bytes, str)):
            return Outcome.from_metrics(Metrics.model_validate_json(result))
        return Outcome.from_metrics(Metrics.model_validate(result))
    except ValueError as e:
        return Outcome("failed", None, f"unreadable result: {str(e).splitlines()[0]}")
