"""What a verl run costs (whileai.cost.estimate) and where its teacher is.

verl's hybrid engine samples, scores and trains on the same GPUs, one stage after another (one
pool); an OPD teacher scores on its own pool, held beside it. SFT on teacher samples runs the
generation server on the teacher's engines first, then the SFT trainer: the two add up.
"""

from __future__ import annotations

import math
from typing import Any

from whileai.cost import estimate as cost
from whileai.cost import sizes
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Teacher
from whileai.targets.verl import knobs


def teacher(run: RunSpec, pool: int | None) -> dict[str, Any]:
    t = run.method.frozen_teacher
    if t is None:
        return {}
    size = sizes.params(t.model)
    what = size.text() if size else "size unknown from its name"
    if run.method.off_policy:
        note = (f"teacher {t.model}: {what}; served by verl's main_generation_server on the run's "
                f"{knobs.gpus(run)} GPUs, which answers every training prompt before sft_trainer starts")
        gpus = None
    else:
        note = (f"teacher {t.model}: {what}; served by verl on its own pool of {pool} GPU"
                f"{'s' if pool != 1 else ''} beside the run's {knobs.gpus(run)} (the URL is not used)")
        gpus = pool
    return {"notes": (note,), "teacher": Teacher.sized(model=t.model, url=t.url, mode="verl pool",
                                                       size=size, gpus=gpus, held_gpus=gpus, file=None,
                                                       note=note)}


def prompt_tokens(run: RunSpec) -> tuple[int, str]:
    from whileai.targets.verl.fieldmap import gsm8k
    from whileai.tasksets import lengths
    from whileai.tasksets.builtin import for_run, rows

    got = None if gsm8k(run) else lengths.measure(rows(run)[0], for_run(run).name)
    if got is None:
        return run.prompt_tokens, cost.assumed(run.prompt_tokens, "the prompt_tokens cap: rows "
                                                "made on the machine that runs it")
    return math.ceil(got.mean), got.text()


def estimate(run: RunSpec, *, steps: int, prompts: int, samples: int, max_tokens: int,
             eval_rollouts: int, eval_how: str, pool: int | None) -> cost.Cost:
    n, nodes = knobs.gpus(run), knobs.nodes(run)
    prompt, prompt_how = prompt_tokens(run)
    t = run.method.frozen_teacher
    model = t.model if t is not None else None
    sft = run.method.off_policy
    work = cost.Work(steps, prompts * samples, prompt, max_tokens, sizes.params(run.model),
                     sizes.params(model) if model else None, run.method.SCORER, run.model, model,
                     stages=("train", "sample") if sft else ("train", "sample", "teacher"),
                     sampler=run.method.SAMPLER, eval_rollouts=eval_rollouts,
                     eval_max_tokens=max_tokens if eval_rollouts else 0, eval_how=eval_how,
                     prompt_how=prompt_how)
    per = knobs.gpus_per_node(run)
    if sft:  # the generation server, then sft_trainer, on the same GPUs
        return cost.estimate(work, cost.Pools(n, nodes, per, {"gpus": n, "sampler": n},
                                              {"train": "gpus", "sample": "sampler"}, serial=True))
    where: dict[str, str | None] = {"train": "gpus", "sample": "gpus", "eval": "gpus",
                                    "teacher": "teacher" if pool else None}
    pools = {"gpus": n} | ({"teacher": pool} if pool else {})
    return cost.estimate(work, cost.Pools(n, nodes, per, pools, where, teacher_gpus=pool))


def evals(run: RunSpec, steps: int, test_rows: int, every: int | None, at_start: bool) -> tuple[int, str]:
    """verl validates before training (val_before_train) and every test_freq steps, one
    completion per holdout row (val_kwargs.n 1)."""
    if every is None or every < 1:
        return 0, "no validation"
    times = (1 if at_start else 0) + steps // every
    return times * test_rows, "validations x data/test.jsonl rows x 1 completion (val_kwargs.n)"
