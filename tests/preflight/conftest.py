"""preflight tests probe servers on a machine with GPUs: a stand-in nvidia-smi that prints what
the real one prints for eight 80 GB GPUs (a one-node run needs its GPUs here; a test of the
machine checks themselves sets its own PATH)."""

from __future__ import annotations

from pathlib import Path

import pytest

SMI = ('#!/bin/sh\nif [ "$1" = "-L" ]; then for i in 0 1 2 3 4 5 6 7; do '
       'echo "GPU $i: NVIDIA H100 80GB HBM3 (UUID: GPU-$i)"; done; '
       'else for i in 0 1 2 3 4 5 6 7; do echo "81559"; done; fi\n')


@pytest.fixture(autouse=True)
def eight_gpus(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path_factory.mktemp("smi")
    smi = Path(folder) / "nvidia-smi"
    smi.write_text(SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
