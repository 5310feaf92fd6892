"""What a verl run costs (whileai.cost.estimate) and where its teacher is.

verl's hybrid engine samples, scores and trains on the same GPUs, one stage after another (one
pool); an OPD teacher scores on its own pool (knobs.pool), held beside it. verl's trainer is
synchronous: the teacher scores each completion as soon as it is sampled (experimental/agent_loop/
agent_loop.py:822-828), so sampling and scoring overlap, but the update waits for the whole batch
and the next step's sampling for the update, so a step takes max(sampling, scoring) + training
(+ validation): the pools do not run side by side all the time, and the slower of sampling and
scoring sets the step. SFT on teacher samples runs the generation server on the teacher's engines
first, then the SFT trainer: the two add up.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from whileai.cost import estimate as cost
from whileai.cost import sizes
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Teacher, counted
from whileai.targets.verl import knobs


def teacher(run: RunSpec, pool: knobs.Pool | None) -> dict[str, Any]:
    t = run.method.frozen_teacher
    if t is None:
        return {}
    if pool is not None and pool.each:
        return _teachers(run, pool)
    size = sizes.params(t.model)
    what = size.text() if size else "size unknown from its name"
    if run.method.off_policy:
        note = (f"teacher {t.model}: {what}; served by verl's main_generation_server on the run's "
                f"{knobs.gpus(run)} GPUs, which answers every training prompt before sft_trainer starts")
        gpus = None
    else:
        assert pool is not None
        held = (f"; {pool.held} GPUs held for it, its nodes'" if pool.held != pool.gpus else "")
        note = (f"teacher {t.model}: {what}; served by verl on its own pool of {pool.gpus} GPU"
                f"{'s' if pool.gpus != 1 else ''} ({pool.replicas} x TP {pool.tp}), {pool.placed}"
                f"{held} (the URL is not used)")
        gpus = pool.gpus
    return {"notes": (note,), "teacher": Teacher.sized(
        model=t.model, url=t.url, mode="verl pool", size=size, gpus=gpus,
        held_gpus=pool.held if pool and not run.method.off_policy else None, file=None, note=note)}


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
             eval_rollouts: int, eval_how: str, pool: knobs.Pool | None) -> cost.Cost:
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
    pools = {"gpus": n} | ({"teacher": pool.gpus} if pool else {})
    got = cost.estimate(work, cost.Pools(n, nodes, per, pools, where,
                                         teacher_gpus=pool.held if pool else None))
    busy = hours(got, n, pool)
    if busy is None:
        return got
    wall = max(busy["sample"], busy["teacher"]) + busy["train"] + busy["eval"]
    return replace(got, wall_hours=wall, held_gpu_hours=wall * got.held_gpus)


def hours(got: cost.Cost, n: int, pool: knobs.Pool | None) -> dict[str, float] | None:
    """Wall hours of each stage of an OPD run on its pool (GPU-hours / the pool's GPUs)."""
    h = got.gpu_hours
    if h is None or pool is None or h.teacher is None:
        return None
    return {"sample": (h.sample or 0.0) / n, "train": h.train / n, "eval": (h.eval or 0.0) / n,
            "teacher": h.teacher / pool.gpus}


def pools_note(run: RunSpec, got: cost.Cost | None, pool: knobs.Pool | None) -> str | None:
    """The report's line on an OPD run's pools: the slowest, and how verl's synchronous steps
    add the stages up."""
    busy = hours(got, knobs.gpus(run), pool) if got else None
    if busy is None or pool is None or got is None or got.wall_hours is None:
        return None
    n, trainer = knobs.gpus(run), busy["sample"] + busy["train"] + busy["eval"]
    slow = (f"the teacher's {counted(pool.gpus, 'GPUs')}, ≈ {_h(busy['teacher'])} of scoring against ≈ "
            f"{_h(trainer)} of sampling, training and validation on the trainer's {n}"
            if busy["teacher"] > trainer else
            f"the trainer's {counted(n, 'GPUs')}, ≈ {_h(trainer)} of sampling, training and validation "
            f"against ≈ {_h(busy['teacher'])} of scoring on the teacher's {pool.gpus}")
    return (f"pools: the slowest is {slow}; verl's trainer is synchronous (the teacher scores each "
            "completion as it is sampled, agent_loop.py:822-828, and the update waits for the batch), "
            f"so a step takes max(sampling, scoring) + training + validation: ≈ {_h(busy['sample'])} "
            f"and ≈ {_h(busy['teacher'])} overlap, then ≈ {_h(busy['train'])} + ≈ {_h(busy['eval'])} "
            f"= ≈ {_h(got.wall_hours)} in all")


def _h(x: float) -> str:
    return f"{x:,.0f} h" if x >= 100 else f"{x:.3g} h"


def evals(run: RunSpec, steps: int, test_rows: int, every: int | None, at_start: bool) -> tuple[int, str]:
    """verl validates before training (val_before_train) and every test_freq steps, one
    completion per holdout row (val_kwargs.n 1)."""
    if every is None or every < 1:
        return 0, "no validation"
    times = (1 if at_start else 0) + steps // every
    return times * test_rows, "validations x data/test.jsonl rows x 1 completion (val_kwargs.n)"


def _teachers(run: RunSpec, pool: knobs.Pool) -> dict[str, Any]:
    """Several teachers (a mixture) in one pool: a record and a note each, then the pool's note
    (the GPUs the run lines start for them)."""
    from whileai.targets.verl import mix

    records, notes = [], []
    each = {entry: (replicas, tp) for entry, replicas, tp, _ in pool.each}
    for t in mix.teachers(run):
        size = sizes.params(t.model)
        replicas, tp = each[t.entry]
        note = (f"teacher {t.model} ({t.entry}, key {t.key!r}: {', '.join(e.name for e in t.sources)}): "
                f"{size.text() if size else 'size unknown from its name'}; {replicas} x TP {tp} = "
                f"{counted(replicas * tp, 'GPUs')} of the teachers' pool (the URL is not used)")
        notes.append(note)
        url = t.sources[0].method.frozen_teacher.url  # type: ignore[union-attr]
        records.append(Teacher.sized(model=t.model, url=url, mode="verl pool", size=size,
                                     gpus=replicas * tp, held_gpus=None, file=None, note=note))
    notes.append(f"the teachers' pool: {counted(pool.gpus, 'GPUs')}, {pool.placed}; the cost "
                 f"sizes the scoring by the first teacher, {records[0].model}" + (
        f"; {pool.held} GPUs held for it, its nodes'" if pool.held != pool.gpus else ""))
    return {"notes": tuple(notes), "teacher": records[0], "teachers": tuple(records)}
