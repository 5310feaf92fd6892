"""What a TRL run costs (whileai.cost.estimate) and where its teacher is: OPD's in every training process,
SFT's in sample.py, one process that samples before training starts.

TRL samples, scores and trains in the same processes, one stage after another, so the
processes are one pool and its wall time is the sum of the stages over the processes. SFT's
teacher samples on one GPU first (its own pool), then `trl sft` trains: the two add up.
"""

from __future__ import annotations

import math
from typing import Any

from whileai.cost import estimate as cost
from whileai.cost import sizes
from whileai.spec.run import OPSD, RunSpec
from whileai.targets.compiled import Teacher
from whileai.targets.trl import accelerate as accel
from whileai.targets.trl.batch import step_batch
from whileai.targets.trl.fieldmap import SAMPLE_PY, max_prompt, one_per_prompt, privileged_key, test_rows


def teacher(run: RunSpec) -> dict[str, Any]:
    """OPD's teacher is loaded into every training process, SFT's into sample.py before training
    (its URL is not used either way)."""
    t = run.method.frozen_teacher
    if t is None:
        return {}
    size = sizes.params(t.model)
    what = size.text() if size else "size unknown from its name"
    from whileai.targets.trl.teacher import served

    if served(run):  # ServerDistillationTrainer: no teacher in the training processes
        note = (f"teacher {t.model}: {what}; served at {t.url} by a vLLM server you run (TRL "
                "queries it for the teacher's logprobs; none of its GPUs are counted here)")
        return {"notes": (note,), "teacher": Teacher.sized(
            model=t.model, url=t.url, mode="endpoint", size=size, gpus=None, held_gpus=None,
            file=None, note=note)}
    if run.method.off_policy:
        note = (f"teacher {t.model}: {what}; loaded by {SAMPLE_PY} in one process, which samples "
                "every training completion before trl sft starts")
    else:
        shard = (f"; {accel.processes(run)} processes shard it ({accel.strategy(run)[0]})"
                 if accel.distributed(run) else "")
        note = f"teacher {t.model}: {what}; loaded into every training process{shard}"
    return {"notes": (note,), "teacher": Teacher.sized(model=t.model, url=t.url, mode="in-process",
                                                       size=size, gpus=None, held_gpus=None, file=None,
                                                       note=note)}


def prompts(run: RunSpec) -> tuple[int, str]:
    """The prompt tokens of the estimate, measured on the rows TRL trains on (always on this
    machine: the built-in taskset's generator or the spec's data), and the cost line's words.
    OPSD's self-teacher reads the privileged context in its template too: counted, and capped at
    max_prompt_length as SDFT truncates."""
    from whileai.tasksets import lengths
    from whileai.tasksets.builtin import for_run, rows

    m, key = run.method, privileged_key(run)
    extra = None
    if isinstance(m, OPSD) and key is not None:
        template = m.template
        extra = lambda r: template + str(r.get(key, ""))  # noqa: E731
    source = for_run(run).name + (" with OPSD's privileged context" if extra else "")
    got = lengths.measure(rows(run)[0], source, cap=max_prompt(run) if isinstance(m, OPSD) else None,
                          extra=extra)
    if got is None:  # no rows: for_run refuses a file without one, so only a guard
        return run.prompt_tokens, cost.assumed(run.prompt_tokens, "the prompt_tokens cap: no rows")
    return math.ceil(got.mean), got.text()


def eval_interval(doc: dict[str, Any], steps: Any) -> int | None:
    """TRL evaluates when step % eval_steps == 0; eval_steps < 1 is a fraction of max_steps."""
    if doc.get("eval_strategy", "no") != "steps":
        return None if doc.get("eval_strategy", "no") == "no" else 1
    every = doc.get("eval_steps", doc.get("logging_steps", 500))
    if isinstance(every, float) and 0 < every < 1 and isinstance(steps, int) and steps > 0:
        return max(1, math.ceil(every * steps))
    return int(every) if isinstance(every, (int, float)) and every >= 1 else None


def evals(run: RunSpec, doc: dict[str, Any], steps: int) -> tuple[int, int, str]:
    """The eval rollouts of the whole run (transformers' Trainer evaluates at step 0 when
    eval_on_start, then whenever step % eval_steps == 0, over every row of data/test.jsonl), their
    completion cap, and how they were counted. GRPO and SDFT sample num_generations_eval (else
    num_generations) per prompt; DistillationTrainer one; trl sft samples none."""
    every = eval_interval(doc, steps)
    if every is None:
        return 0, 0, "no evaluation"
    if run.method.off_policy:
        return 0, 0, ("trl sft samples nothing to evaluate: its eval loss reads the teacher's "
                      f"completions of the holdout, sampled once by {SAMPLE_PY}")
    times = (1 if doc.get("eval_on_start", False) else 0) + steps // every
    samples = 1 if one_per_prompt(run) else doc.get("num_generations_eval") or doc.get(
        "num_generations", run.method.samples)
    cap = doc.get("max_completion_length", run.method.max_tokens)
    if not all(isinstance(x, int) for x in (samples, cap)):
        return 0, 0, "not counted: num_generations or max_completion_length as overridden"
    return (times * test_rows(run) * samples, cap,
            "evaluations x data/test.jsonl rows x samples (the eval loss's forward passes are not "
            "counted)")


def estimate(run: RunSpec, doc: dict[str, Any]) -> cost.Cost:
    """Sampling, teacher scoring, training and evaluation all run in the training processes, in
    turn."""
    n = accel.processes(run)
    per_step = step_batch(doc, n)
    prompt, prompt_how = prompts(run)
    t = run.method.frozen_teacher
    model = t.model if t is not None else None
    sft = run.method.off_policy
    steps = doc.get("max_steps", run.steps)
    rollouts, eval_cap, eval_how = evals(run, doc, steps)
    work = cost.Work(steps, per_step, prompt,
                     doc.get("max_completion_length", run.method.max_tokens), sizes.params(run.model),
                     sizes.params(model) if model else None,
                     run.method.SCORER, run.model, model,
                     stages=("train", "sample") if sft else ("train", "sample", "teacher"),
                     sampler=run.method.SAMPLER, eval_rollouts=rollouts,
                     eval_max_tokens=eval_cap, eval_how=eval_how, prompt_how=prompt_how)
    if sft:  # sample.py on one GPU, then trl sft on every process
        return cost.estimate(work, cost.Pools(n, accel.machines(run), run.gpus_per_node if n > 1 else n,
                                              {"processes": n, "sampler": 1},
                                              {"train": "processes", "sample": "sampler"}, serial=True))
    where = {"train": "processes", "sample": "processes", "teacher": "processes", "eval": "processes"}
    return cost.estimate(work, cost.Pools(n, accel.machines(run), run.gpus_per_node if n > 1 else n,
                                          {"processes": n}, where))


__all__ = ["estimate", "eval_interval", "evals", "prompts", "teacher"]
