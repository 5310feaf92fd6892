"""What a TRL run costs (whileai.cost.estimate) and where its teacher is: OPD's in every training process,
SFT's in sample.py, one process that samples before training starts.

TRL samples, scores and trains in the same processes, one stage after another, so the
processes are one pool and its wall time is the sum of the stages over the processes. SFT's
teacher samples on one GPU first (its own pool), then `trl sft` trains: the two add up.
"""

from __future__ import annotations

from typing import Any

from whileai.cost import estimate as cost
from whileai.cost import sizes
from whileai.spec.run import OPSD, RunSpec
from whileai.targets.trl import accelerate as accel
from whileai.targets.trl.batch import step_batch
from whileai.targets.trl.fieldmap import SAMPLE_PY, max_prompt


def teacher(run: RunSpec) -> dict[str, Any]:
    """OPD's teacher is loaded into every training process, SFT's into sample.py before training
    (its URL is not used either way)."""
    t = run.method.frozen_teacher
    if t is None:
        return {}
    size = sizes.params(t.model)
    what = size.text() if size else "size unknown from its name"
    if run.method.off_policy:
        note = (f"teacher {t.model}: {what}; loaded by {SAMPLE_PY} in one process, which samples "
                "every training completion before trl sft starts")
    else:
        shard = (f"; {accel.processes(run)} processes shard it ({accel.strategy(run)[0]})"
                 if accel.distributed(run) else "")
        note = f"teacher {t.model}: {what}; loaded into every training process{shard}"
    return {"notes": (note,), "teacher": {
        "model": t.model, "url": t.url, "mode": "in-process",
        "params_b": size.total_b if size else None, "active_params_b": size.active_b if size else None,
        "gpus": None, "held_gpus": None, "file": None, "formula": sizes.SERVE_FORMULA, "note": note}}


def estimate(run: RunSpec, doc: dict[str, Any]) -> cost.Estimate:
    """Sampling, teacher scoring and training all run in the training processes, in turn."""
    n = accel.processes(run)
    per_step = step_batch(doc, n)
    prompt = max_prompt(run) if isinstance(run.method, OPSD) else run.prompt_tokens
    t = run.method.frozen_teacher
    model = t.model if t is not None else None
    sft = run.method.off_policy
    work = cost.Work(doc.get("max_steps", run.steps), per_step, prompt,
                     doc.get("max_completion_length", run.method.max_tokens), sizes.params(run.model),
                     sizes.params(model) if model else None,
                     run.method.SCORER, run.model, model,
                     stages=("train", "sample") if sft else ("train", "sample", "teacher"),
                     sampler=run.method.SAMPLER)
    if sft:  # sample.py on one GPU, then trl sft on every process
        return cost.estimate(work, cost.Pools(n, accel.machines(run), run.gpus_per_node if n > 1 else n,
                                              {"processes": n, "sampler": 1},
                                              {"train": "processes", "sample": "sampler"}, serial=True))
    where = {"train": "processes", "sample": "processes", "teacher": "processes"}
    return cost.estimate(work, cost.Pools(n, accel.machines(run), run.gpus_per_node if n > 1 else n,
                                          {"processes": n}, where))


__all__ = ["estimate", "teacher"]
