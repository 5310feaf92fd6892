"""The switches a face passes through to a target's compile (`whileai compile --cpu`): their own
module, so the protocol (whileai.targets.base) and the run side's records (whileai.targets.run)
both name them without naming each other."""

from __future__ import annotations

from typing import NamedTuple


class Options(NamedTuple):
    """Switches a face passes through to a target; each target says which it reads."""

    cpu: bool = False  # train on the CPU (TRL's use_cpu); a GPU-only target refuses it
