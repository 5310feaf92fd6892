"""The cost estimate of a prime-rl run (whileai.cost.estimate), from its plan and its compiled
document: the work of a step per training source, the eval rollouts it samples and where its
prompt length comes from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whileai.catalogs.paths import get_path
from whileai.cost import estimate as cost
from whileai.spec.run import RunSpec

if TYPE_CHECKING:
    from whileai.targets.prime_rl.plan import CompilePlan


def estimate(p: CompilePlan, doc: dict[str, Any], got: tuple[int, int, int, int] | None) -> cost.Cost | None:
    """The estimate from the compiled document's batch and GPUs (got: deploy.gpus_of): one part
    per training source (a mixture's share of the rollouts each), each teacher where its plan
    serves it (its own GPUs, GPU 0 beside the policy, or elsewhere: not timed)."""
    run = p.run
    steps = get_path(doc, "max_steps")
    batch = get_path(doc, "orchestrator.batch_size")
    seq = get_path(doc, "seq_len")
    completion = get_path(doc, "orchestrator.train.sampling.max_completion_tokens")
    if got is None or not all(isinstance(x, int) for x in (steps, batch, seq, completion)):
        return None
    train, infer, nodes, per = got
    pools = {"trainer": train, "inference": infer}
    served: dict[str, str | None] = {}  # teacher URL -> its pool
    for k, plan in enumerate(p.served):
        if plan.held:
            pools[f"teacher-{k}"] = plan.held
        served[plan.url] = (f"teacher-{k}" if plan.held else None if plan.mode == "endpoint"
                            else "inference")
    parts = []
    for e, share in zip(p.entries, p.shares, strict=True):
        cap = get_path(doc, f"orchestrator.train.source[{e.pos}].sampling.max_completion_tokens",
                       completion)
        cap = cap if isinstance(cap, int) else completion
        t = e.method.frozen_teacher
        pool = served.get(t.url) if t is not None else None
        sft = e.method.off_policy
        parts.append(cost.Part(share, cap, e.method.SCORER, e.method.SAMPLER,
                               p.sizes[t.model] if t is not None else None,
                               t.model if t is not None else None,
                               {"train": "trainer", "sample": pool if sft else "inference",
                                "teacher": pool if e.method.SCORER == "teacher" else "inference"}))
    first = parts[0]
    held = p.teacher_gpus or None
    evals, eval_cap, how = eval_rollouts(run, doc, steps)
    # prompts at the spec's cap: seq_len (prompt_tokens + the longest cap unless overridden) is the
    # trainer's pack length, which truncates long samples for training and caps no prompt
    work = cost.Work(steps, batch, run.prompt_tokens, completion, p.sizes[run.model],
                     first.teacher, first.scorer, run.model, first.teacher_name,
                     stages=("train", "sample", "teacher") if p.serves else ("train",),
                     sampler=first.sampler, parts=tuple(parts) if run.sources else (),
                     eval_rollouts=evals, eval_max_tokens=eval_cap, eval_how=how,
                     prompt_how=cost.assumed(run.prompt_tokens, prompt_source(run)))
    where: dict[str, str | None] = {**(first.pools or {}), "eval": "inference"}
    return cost.estimate(work, cost.Pools(train + infer, nodes, per, pools, where, held))


def eval_rollouts(run: RunSpec, doc: dict[str, Any], steps: int) -> tuple[int, int, str]:
    """The eval rollouts of the whole run from the compiled [orchestrator.eval] (prime-rl
    EvalConfig: each source evaluates num_examples x group_size at step 0 unless
    skip_first_step, then whenever step % interval == 0), their cap, and how they were counted."""
    from whileai.tasksets import seats

    ev = get_path(doc, "orchestrator.eval")
    if not isinstance(ev, dict):
        return 0, 0, "no evaluation"
    total, unknown = 0, []
    cap = get_path(doc, "orchestrator.eval.sampling.max_completion_tokens", run.method.max_tokens)
    for i, src in enumerate(ev.get("source", [])):
        n = src.get("num_examples", ev.get("num_examples", -1))
        group = src.get("group_size", ev.get("group_size", 1))
        every = src.get("interval", ev.get("interval", 100))
        if not all(isinstance(x, int) for x in (n, group, every)) or n < 0 or every < 1:
            unknown.append(src.get("name", f"source {i}"))
            continue
        times = (0 if ev.get("skip_first_step", False) else 1) + steps // every
        tid = get_path(src, "env.taskset.id", run.taskset)
        total += times * n * group * seats.of(str(tid), run.roles).traces
    how = "evaluations x examples x group_size (x seats)"
    if unknown:
        how += f"; not counted: {', '.join(map(str, unknown))} (num_examples -1: all rows, a count " \
               "whileai does not know offline)"
    return total, cap if isinstance(cap, int) else run.method.max_tokens, how


def prompt_source(run: RunSpec) -> str:
    """Why prime-rl's prompt length is the cap: its rows are read by the taskset packages where
    the run starts, not on this machine."""
    given = "as the spec sets it" if "prompt_tokens" in run.model_fields_set else "whileai's default"
    return (f"the prompt_tokens cap, {given}; prime-rl reads the taskset's rows where it runs, "
            "not here")


__all__ = ["estimate", "eval_rollouts", "prompt_source"]
