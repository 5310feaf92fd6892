"""The Modal app for verl arms: its own image (verl 0.9.1 and its vLLM), its own app name, the
same volume and the same polling as the prime-rl app (whileai.launch.modal_app.ModalBackend).

Import it only on the path that launches; it imports modal at the top, as a deployable app must.

    modal deploy -m whileai.launch.modal_verl     # once per change of image or code
    # then launch(manifest, ModalBackend(VERL_APP)); later, collect(manifest, ModalBackend(VERL_APP))

The image is an assumption this machine cannot test (no GPU, no Modal token): CUDA 13.0 devel on
Ubuntu 24.04 with Python 3.12, then `pip install "verl[vllm,flash-attn-cu130torch211]==0.9.1"`:
the extras verl 0.9.1's own package metadata names (vLLM 0.24.0 on torch 2.11, flash-attn 2.8.3,
which verl's FSDP workers import). WHILEAI_VERL_IMAGE names a registry image instead (one of
verl's own, verlai/verl on Docker Hub); verl 0.9.1 is pip-installed on top with --no-deps.
Environment at deploy time: as whileai.launch.modal_app, plus WHILEAI_VERL_APP ("whileai-verl").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import modal

from whileai.launch.metrics import Metrics
from whileai.launch.modal_app import (
    GPUS,
    MOUNT,
    TIMEOUT,
    ModalBackend,
    _gpu_name,
    _secrets,
    infra_errors,
    volume,
)
from whileai.targets.verl.pin import TARGET, VERSION

VERL_APP = os.environ.get("WHILEAI_VERL_APP", "whileai-verl")
REGISTRY = os.environ.get("WHILEAI_VERL_IMAGE")
EXTRAS = f"verl[vllm,flash-attn-cu130torch211]=={VERSION}"
IMAGE_LABEL = f"{REGISTRY} + {TARGET}" if REGISTRY else f"cuda 13.0 devel py3.12 + {EXTRAS}"

if REGISTRY:
    image = (modal.Image.from_registry(REGISTRY)
             .pip_install(TARGET, extra_options="--no-deps"))
else:
    image = (modal.Image.from_registry("nvidia/cuda:13.0.0-devel-ubuntu24.04", add_python="3.12")
             .apt_install("git", "build-essential")
             .pip_install(EXTRAS, "peft", "pyarrow", "pandas"))
image = image.add_local_python_source("whileai")
app = modal.App(VERL_APP, image=image)


@app.function(gpu=GPUS, timeout=TIMEOUT, volumes={MOUNT: volume}, secrets=_secrets)
def train(job: dict[str, Any]) -> dict[str, Any]:
    """One verl arm on the container's GPUs; returns its metrics record (never raises)."""
    try:
        from whileai.launch.remote_verl import train_verl_job

        return train_verl_job(job, Path(MOUNT) / job["run_id"], Path("/root/work"),
                              commit=volume.commit, gpu=_gpu_name(), image=IMAGE_LABEL)
    except Exception as e:
        return Metrics(status="error", error=f"{type(e).__name__}: {e}").model_dump(mode="json")


def deploy() -> None:
    with infra_errors():
        app.deploy()


def backend() -> ModalBackend:
    """Spawns and polls `train` on the deployed verl app."""
    return ModalBackend(app_name=VERL_APP)


__all__ = ["IMAGE_LABEL", "VERL_APP", "app", "backend", "deploy", "train"]
