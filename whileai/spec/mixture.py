"""A mixture: the run's own taskset (source 0) and its extra training sources (`RunSpec.sources`),
each with its own taskset, arguments, sampling ratio and method.

    for e in entries(run):      # source 0 first, then each [[sources]] entry
        e.pos, e.field, e.name, e.taskset, e.method, e.ratio
    shares(run)                 # the expected share of each step's rollouts per source

Each function of the entries takes them listed already (`found`, a compile's plan holds them)
or lists them itself.

What the target does with the ratios (prime-rl 559b447 orchestrator/train_source.py): every
task request draws a source with `random.choices(weights=ratios)` and becomes one group of that
source's `group_size` rollouts, so a source's expected share of the rollouts is
ratio x group_size over the sum of those products. Names default to the taskset id, as
prime-rl's do; where sources share a taskset, whileai names them `<taskset>-<method>` (and adds
the position if that still collides), because prime-rl refuses duplicate names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from whileai.spec.run import Method, RunSpec


class Entry(NamedTuple):
    pos: int  # the position among prime-rl's train sources (0: the run's own taskset)
    field: str  # the spec prefix of its fields: "" for source 0, "sources[j]." for the others
    taskset: str
    args: dict[str, Any]
    roles: list[str] | None
    ratio: float
    method: Method  # the source's method (its own, else the run's)
    own_method: bool  # sources[j].method is set (source 0: always its own)
    name: str
    named: bool  # the name was written in the spec
    eval: bool


def is_mixture(run: RunSpec) -> bool:
    return bool(run.sources)


def entries(run: RunSpec) -> list[Entry]:
    raw: list[tuple[str, dict[str, Any], list[str] | None, float, Method, bool, str | None, bool]] = [
        (run.taskset, run.taskset_args, run.roles, run.ratio or 1.0, run.method, True, None, True)]
    raw += [(s.taskset, s.taskset_args, s.roles, s.ratio, s.method or run.method, s.method is not None,
             s.name, s.eval) for s in run.sources]
    names = _names([(t, m.type, n) for t, _, _, _, m, _, n, _ in raw])
    return [Entry(i, "" if i == 0 else f"sources[{i - 1}].", t, dict(a), r, ratio, m, own, names[i],
                  n is not None, ev)
            for i, (t, a, r, ratio, m, own, n, ev) in enumerate(raw)]


def _names(items: list[tuple[str, str, str | None]]) -> list[str]:
    """Explicit names as written; the others the taskset id, `<taskset>-<method>` where that is
    taken, then `-<position>` where even that is."""
    explicit = [n for _, _, n in items if n is not None]
    out: list[str] = []
    for i, (taskset, kind, name) in enumerate(items):
        if name is not None:
            out.append(name)
            continue
        same = [j for j, (t, _, n) in enumerate(items) if n is None and t == taskset and j != i]
        pick = taskset if not same and taskset not in explicit else f"{taskset}-{kind}"
        clash = [j for j, (t, k, n) in enumerate(items) if n is None and j != i and t == taskset
                 and k == kind]
        if clash or pick in explicit:
            pick = f"{pick}-{i}"
        out.append(pick)
    return out


def name_reason(run: RunSpec, e: Entry) -> str:
    if e.named:
        return ""
    if e.name == e.taskset:
        return "unset: the taskset id (prime-rl's default name)"
    return (f"unset: {e.name}, since sources share the taskset {e.taskset} and prime-rl refuses "
            "duplicate source names")


def shares(run: RunSpec, found: Sequence[Entry] = ()) -> list[float]:
    """Each source's expected share of a step's rollouts: ratio x group_size, normalized."""
    weights = [e.ratio * e.method.samples for e in found or entries(run)]
    total = sum(weights)
    return [w / total for w in weights]


def max_tokens(run: RunSpec, found: Sequence[Entry] = ()) -> int:
    """The longest completion any source samples (the sequence length must hold it)."""
    return max(e.method.max_tokens for e in found or entries(run))


def summary(run: RunSpec, found: Sequence[Entry] = (), weights: Sequence[float] = ()) -> str:
    """The report's line about the mixture (weights: the entries' shares, when known)."""
    found = found or entries(run)
    parts = [f"{e.name} ({e.method.type}, ratio {e.ratio:g}, {e.method.samples} per group: "
             f"{share:.0%})" for e, share in zip(found, weights or shares(run, found), strict=True)]
    return (f"mixture of {len(parts)} training sources, each task drawn by ratio (rollout share = "
            f"ratio x group size, normalized): {'; '.join(parts)}")


def teachers(run: RunSpec, found: Sequence[Entry] = ()) -> list[tuple[str, Any, list[Entry]]]:
    """Each distinct frozen teacher (by URL and model), with the spec field that names it and
    the sources that use it: OPD's scores, SFT's samples."""
    out: dict[tuple[str, str], tuple[str, Any, list[Entry]]] = {}
    for e in found or entries(run):
        t = e.method.frozen_teacher  # OPD's and SFT's; OPSD's teacher is the policy
        if t is None:
            continue
        field = f"{e.field}method.teacher" if e.own_method else "method.teacher"
        key = (t.url, t.model)
        if key not in out:
            out[key] = (field, t, [])
        out[key][2].append(e)
    return list(out.values())


def methods(run: RunSpec) -> list[tuple[str, Method]]:
    """Every method the spec names, with its field: the run's, each source's own, the second
    stage's."""
    out: list[tuple[str, Method]] = [("method", run.method)]
    out += [(f"sources[{i}].method", s.method) for i, s in enumerate(run.sources) if s.method]
    return out + ([("then.method", run.then.method)] if run.then is not None else [])


def task_reward(run: RunSpec) -> tuple[str, float] | None:
    """The first method that trains on the task reward beside its teacher (OPD's
    task_reward_kl_coef): its field and coefficient, or None."""
    for at, m in methods(run):
        coef = getattr(m, "task_reward_kl_coef", None)
        if coef is not None:
            return f"{at}.task_reward_kl_coef", coef
    return None


def refuse_task_reward(run: RunSpec, allowed: str) -> None:
    """A target without task reward beside distillation: the first method that sets it, refused
    with the target's own reason (`allowed`)."""
    found = task_reward(run)
    if found:
        from whileai.errors import SpecError

        raise SpecError(found[0], found[1], allowed)


__all__ = ["Entry", "entries", "is_mixture", "max_tokens", "methods", "name_reason",
           "refuse_task_reward", "shares", "summary", "task_reward", "teachers"]
