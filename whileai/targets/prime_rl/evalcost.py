"""The eval rollouts a prime-rl run samples and where its prompt length comes from, for the cost
estimate (whileai.cost)."""

from __future__ import annotations

from typing import Any

from whileai.catalogs.paths import get_path
from whileai.spec.run import RunSpec


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


__all__ = ["eval_rollouts", "prompt_source"]
