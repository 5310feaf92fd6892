"""Warning rules about a run's scale: shared storage, SLURM defaults, engines that are too small.

They read the facts the prime-rl target states about its compiled file (`on_slurm`, `nodes`,
`output_dir`, `slurm_partition`, `engine_tp`, `engine_need`); whileai.rules.research lists them with the
research rules, so `whileai rules` and docs/rules.md show them too.
"""

from __future__ import annotations

from whileai.rules.base import Facts, Rule
from whileai.spec.run import RunSpec


def _shared_fs(run: RunSpec, f: Facts) -> str | None:
    if not f.on_slurm or (f.nodes or 1) < 2:
        return None
    out = run.output_dir if f.output_dir is None else f.output_dir
    where = ("" if str(out).startswith("/") else
             " (a relative path resolves under the prime-rl checkout, which must be shared too)")
    return (f"output_dir {out!r} must be on a filesystem every node sees{where}: the trainer "
            "writes weights and checkpoints there that the inference nodes read")


def _partition(run: RunSpec, f: Facts) -> str | None:
    if f.on_slurm and f.slurm_partition is None:
        return ("[slurm] has no partition: prime-rl submits to its default partition 'cluster'; "
                "set slurm.partition to one your cluster has (sinfo lists them)")
    return None


def _engine(run: RunSpec, f: Facts) -> str | None:
    tp, need = f.engine_tp, f.engine_need
    if isinstance(tp, int) and isinstance(need, int) and tp < need:
        return (f"inference engines of {tp} GPU{'s' if tp > 1 else ''} for {run.model}, whose bf16 "
                f"weights plus KV headroom need {need}: vLLM may run out of memory at load")
    return None


SCALE_RULES: list[Rule] = [
    Rule("shared-filesystem", "a multi-node SLURM run (its output_dir must be visible to every node)",
         "prime-rl docs/scaling.md § SLURM (shared checkout and venv; the pin's SLURM overlays "
         "write to /shared/...)", _shared_fs),
    Rule("slurm-partition-default", "a SLURM run whose [slurm] table names no partition",
         "prime-rl SlurmConfig.partition default 'cluster' (configs/shared.py)", _partition),
    Rule("engine-too-small", "inference_tp below the GPUs the student's size needs",
         "whileai.cost.sizes: bf16 weights plus KV headroom (docs/cost.md)", _engine),
]
