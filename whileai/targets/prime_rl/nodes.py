"""What a prime-rl run's deployment derives from the spec alone, before the plan
(whileai.targets.prime_rl.plan) is worked out: the SLURM job name, the inference engines' width and
the refusal of a run without inference. The plan, the teachers' servers and the deployment rows
(whileai.targets.prime_rl.deploy) all read these; none of them is read back here.
"""

from __future__ import annotations

from typing import Any

from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.spec.run import RunSpec


def job_name(r: RunSpec) -> str:
    if r.slurm is not None and r.slurm.job_name:
        return r.slurm.job_name
    base = r.taskset.split("/")[-1].split("@")[0]
    return f"{r.method.type}-{base}"


def engine_tp(r: RunSpec, size: sizes.Size | None) -> tuple[int, str]:
    """GPUs per inference engine (vLLM tensor_parallel_size) and why (size: the student's)."""
    if r.inference_tp is not None:
        return r.inference_tp, "inference_tp"
    if size is None:
        return 1, (f"the size of {r.model} is unknown from its name: vLLM's default of one GPU "
                   "per engine; set inference_tp if it needs more")
    need = sizes.serve_gpus(size.total_b)
    return need, (f"{size.text()}: {sizes.weights_gb(size.total_b):g} GB of bf16 weights plus KV "
                  f"headroom take {need} GPU{'s' if need > 1 else ''} ({sizes.SERVE_FORMULA})")


def check(serves: bool, overrides: dict[str, Any]) -> None:
    """What the target refuses before it writes: no inference without an explicit fake-data
    benchmark. Engines that do not fit the GPUs are the loader mirror's to refuse
    (whileai.targets.prime_rl.loader: inference-tensor-parallel, deployment-nodes), on the
    compiled file as `whileai check` reads it; `tp_hint` says why the width was chosen."""
    if not serves and not any(k.startswith("trainer.data.fake") for k in overrides):
        raise SpecError("inference_nodes", 0, "at least 1: every method learns from rollouts "
                        "the orchestrator gathers, which need inference nodes (prime-rl runs "
                        "no orchestrator without them)", hint="for a trainer-only "
                        "throughput benchmark on fake data, set it explicitly with "
                        "--set trainer.data.fake.batch_size=N (prime-rl docs/scaling.md)")


__all__ = ["check", "engine_tp", "job_name"]
