"""What `whileai preflight` calls for a verl run (verl 0.9.1): nothing over HTTP. verl serves the
OPD teacher itself on its distillation pool and SFT's teacher in its generation job, and samples
the student with the rollout engines inside its own workers, so every model the spec names is a
skip with that reason; the machine checks (GPUs, disk, models) still run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai.targets.probe import Probe, Unprobed, unprobed

if TYPE_CHECKING:
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled

SERVED_BY_VERL = ("verl serves the OPD teacher itself on its distillation pool, and SFT's teacher in "
                  "its generation job: the URL is not queried")
OWN_ROLLOUTS = "verl samples with the rollout engines inside its own workers: it calls no student server"


def probes(run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
    out = unprobed(stages, SERVED_BY_VERL)
    if student is not None:
        out.append(Unprobed(f"student endpoint {student.model} @ {student.url}", OWN_ROLLOUTS))
    return out


__all__ = ["probes"]
