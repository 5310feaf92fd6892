"""The prime-rl rows of a mixture (whileai.spec.mixture): each extra training source becomes its own
`[[orchestrator.train.source]]` and each training taskset eval reads its own
`[[orchestrator.eval.source]]`.

A source's table (prime-rl 559b447 configs/orchestrator.py, TrainSourceConfig): `name`,
`env` (the taskset, its arguments, its roles' harness and runtime), `ratio`, `group_size`
(the source's samples), `sampling` (its temperature and max_tokens) and `algo`, the whole
algorithm table written by `prime_rl_algo.algo_rows` for the source's method (the run's method,
written out, when the source names none: prime-rl would copy `orchestrator.algo` there
silently). The learning rate is the run's: one optimizer trains every source.

Eval (when on and eval.taskset is unset) reads the run's taskset (eval source 0, as without a
mixture) and every extra source's taskset whose `eval` is true, each on its held-out split
where the taskset has one; a source whose eval rows another eval source already reads adds
none. The honest-holdout rule then checks every eval source against the training sources on
its taskset (`holdouts`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from whileai.catalogs import tasksets as tc
from whileai.catalogs.paths import get_path
from whileai.catalogs.targets import plugin_key
from whileai.rules.base import Finding
from whileai.rules.facts import Facts
from whileai.spec import mixture
from whileai.spec.load import replace_run
from whileai.spec.mixture import Entry
from whileai.spec.run import RunSpec
from whileai.targets.fieldmap import Drop, Fix, Row, To, const
from whileai.targets.pipeline import warnings
from whileai.targets.prime_rl.algo import algo_rows
from whileai.targets.prime_rl.rules import RULES

if TYPE_CHECKING:
    from whileai.targets.prime_rl.plan import CompilePlan

HARNESS_NULL = "no agent harness: the taskset drives the episode (as in the pin's own configs)"
RUNTIME = "always set the runtime: its default is a remote sandbox VM"
ONE_LR = ("one optimizer trains every source: prime-rl has no per-source learning rate "
          "(trainer.optim.lr comes from method.learning_rate)")


def train(i: int) -> str:
    return f"orchestrator.train.source[{i}]"


def rows(p: CompilePlan) -> list[Row]:
    """The mixture's rows (extra training sources, their eval sources, source 0's ratio)."""
    run = p.run
    if not run.sources:
        return [Drop("ratio", "no sources: a run of one training source has nothing to weigh "
                     "its ratio against")]
    out: list[Row] = [To("ratio", f"{train(0)}.ratio", lambda r: r.ratio or 1.0,
                         note=_share(p, p.entries[0]))]
    for e in p.entries[1:]:
        out += _train_rows(p, e)
    return out + _eval_rows(run, p.entries[1:])


def _share(p: CompilePlan, e: Entry) -> str:
    unset = "unset: prime-rl's default 1.0; " if e.pos == 0 and p.run.ratio is None else ""
    return (f"{unset}about {p.shares[e.pos]:.0%} of each step's rollouts ({e.ratio:g} x "
            f"group size {e.method.samples}, normalized)")


def _train_rows(p: CompilePlan, e: Entry) -> list[Row]:
    t, f = train(e.pos), e.field
    out: list[Row] = [
        To(f"{f}name", f"{t}.name", const(e.name), note=mixture.name_reason(p.run, e)),
        To(f"{f}taskset", f"{t}.env.taskset.id"),
        *[To(f"{f}taskset_args", f"{t}.env.taskset.{k}", const(v)) for k, v in e.args.items()],
    ]
    plan = tc.split_plan(e.taskset, e.args, None, {})
    if plan.train_reason:
        out.append(To(f"{f}taskset", f"{t}.env.taskset.{plan.arg}", const(plan.train),
                      note=plan.train_reason))
    out += role_rows(t, e.taskset, e.roles, f"{f}roles")
    out.append(To(f"{f}ratio", f"{t}.ratio", note=_share(p, e)))
    if not e.own_method:  # the run's method, written into the source (no hidden copy)
        return out + [To("method.type", f"{t}.algo.type", note=f"{f}method unset: the run's method"),
                      *[r for r in algo_rows(f"{t}.algo", "method")[1:] if not isinstance(r, Drop)]]
    m = f"{f}method"
    return out + [
        *algo_rows(f"{t}.algo", m),
        To(f"{m}.samples", f"{t}.group_size", note="this source's group; batch_size must still "
           "divide by the run's group_size (orchestrator.group_size)"),
        To(f"{m}.temperature", f"{t}.sampling.temperature",
           note="the teacher samples this source's completions" if e.method.off_policy else ""),
        To(f"{m}.max_tokens", f"{t}.sampling.max_completion_tokens"),
        Drop(f"{m}.learning_rate", ONE_LR),
    ]


def role_rows(source: str, taskset: str, roles: list[str] | None, field: str) -> list[Row]:
    """Each agent role of the taskset runs locally with no harness: the catalogue's roles for a
    known taskset, `roles` (or the single-agent 'agent') for an unknown one."""
    entry = tc.entry(taskset)
    if entry is None and roles is not None:
        return [row for role in roles for row in (
            To(field, f"{source}.env.{role}.harness.id", const("null"), note=HARNESS_NULL),
            To(field, f"{source}.env.{role}.runtime.type", const("subprocess"), note=RUNTIME))]
    if entry is None:
        why = (f"{tc.unknown_reason(taskset)}: the single-agent role 'agent' is assumed "
               "(set roles for another env)")
        return [Fix(f"{source}.env.agent.harness.id", "null", f"{HARNESS_NULL}; {why}"),
                Fix(f"{source}.env.agent.runtime.type", "subprocess", f"{RUNTIME}; {why}")]
    out: list[Row] = []
    for role, info in entry["roles"].items():
        whose = f"{tc.plugin_key(taskset)}'s role {role!r} (pinned taskset catalogue)"
        if info.get("harness") in (None, "bash", "null") or info.get("harness_pinned_by_env"):
            out.append(Fix(f"{source}.env.{role}.harness.id", "null", f"{whose}: {HARNESS_NULL}"))
        out.append(Fix(f"{source}.env.{role}.runtime.type", "subprocess", f"{whose}: {RUNTIME}"))
    return out


# -- eval -------------------------------------------------------------------------------------
def source0_eval_args(run: RunSpec) -> dict[str, Any]:
    """The arguments eval source 0 is written with (the run's, eval's on top, the held-out split)."""
    plan = tc.split_plan(run.taskset, run.taskset_args, run.eval.taskset, run.eval.taskset_args)
    if not run.eval_same_taskset:
        return dict(run.eval.taskset_args)
    kept = {k: v for k, v in run.taskset_args.items()
            if k not in run.eval.taskset_args and not (plan.eval_reason and k == plan.arg)}
    out = kept | run.eval.taskset_args
    if plan.eval_reason and plan.arg:
        out[plan.arg] = plan.eval
    return out


def _key(taskset: str, args: dict[str, Any]) -> tuple[str, str]:
    return plugin_key(taskset), json.dumps(args, sort_keys=True, default=str)


def _eval_rows(run: RunSpec, extras: Sequence[Entry]) -> list[Row]:
    if not run.eval.enabled:
        return [Drop(f"{e.field}eval", "eval.enabled is false: no eval source") for e in extras]
    if run.eval.taskset is not None:
        return [Drop(f"{e.field}eval", f"eval.taskset ({run.eval.taskset}) is the one eval "
                     "source") for e in extras]
    seen = {_key(run.eval_taskset, source0_eval_args(run)): run.eval_taskset}
    names, k, out = {run.eval_taskset}, 1, list[Row]()
    for e in extras:
        if not e.eval:
            out.append(To(f"{e.field}eval", "<no eval source>", note="this source's taskset is not "
                          "evaluated"))
            continue
        plan = tc.split_plan(e.taskset, e.args, None, {})
        args = {a: v for a, v in e.args.items() if not (plan.eval_reason and a == plan.arg)}
        if plan.eval_reason and plan.arg:
            args[plan.arg] = plan.eval
        key = _key(e.taskset, args)
        if key in seen:
            out.append(To(f"{e.field}eval", "<no eval source of its own>",
                          note=f"eval source {seen[key]!r} already reads these rows"))
            continue
        name = e.taskset if e.taskset not in names else e.name
        seen[key], E = name, f"orchestrator.eval.source[{k}]"
        names.add(name)
        k += 1
        out += [To(f"{e.field}eval", f"{E}.name", const(name)),
                To(f"{e.field}eval", f"{E}.env.taskset.id", const(e.taskset), note=eval_note(plan)),
                *[To(f"{e.field}taskset_args", f"{E}.env.taskset.{a}", const(v))
                  for a, v in e.args.items() if not (plan.eval_reason and a == plan.arg)]]
        if plan.eval_reason and plan.arg:
            out.append(To(f"{e.field}taskset", f"{E}.env.taskset.{plan.arg}", const(plan.eval),
                          note=plan.eval_reason))
        if e.own_method and e.method.max_tokens != run.method.max_tokens:
            out.append(To(f"{e.field}method.max_tokens", f"{E}.sampling.max_completion_tokens",
                          note="this source's completion cap, for its eval too"))
        out += role_rows(E, e.taskset, e.roles, f"{e.field}roles")
    return out


def eval_note(plan: tc.SplitPlan, trained: str = "this source trains on") -> str:
    """What an eval source reads against training, for its report row."""
    if plan.same_rows:
        return f"eval reads the rows {trained} (see the warning): no holdout"
    if plan.same_rows is None:
        return "eval reads the taskset's defaults (not checked: an unknown taskset)"
    return f"eval reads {plan.arg} {plan.eval!r}, training {plan.train!r}" if plan.arg else ""


def holdouts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """For each eval source: which rows it reads against every training source on the same
    taskset (from the compiled document, overrides included): the honest-holdout rule reads it."""
    found = []
    trains = get_path(doc, "orchestrator.train.source") or []
    for ev in get_path(doc, "orchestrator.eval.source") or []:
        evals = get_path(ev, "env.taskset")
        eid = evals.get("id") if isinstance(evals, dict) else None
        if not isinstance(eid, str) or tc.entry(eid) is None:
            continue
        for tr in trains if isinstance(trains, list) else []:
            t = get_path(tr, "env.taskset")
            tid = t.get("id") if isinstance(t, dict) else None
            if not isinstance(tid, str) or tc.plugin_key(tid) != tc.plugin_key(eid):
                continue
            train_split, eval_split = tc.reads(tid, t), tc.reads(eid, evals)
            found.append({"taskset": tc.plugin_key(tid), "arg": (tc.entry(tid) or {})["split"].get("arg"),
                          "train": train_split, "eval": eval_split,
                          "same_rows": tc.overlap(train_split, eval_split),
                          "advice": tc.advice(tid, train_split), "source": get_path(tr, "name"),
                          "eval_source": get_path(ev, "name")})
    return found


def findings(run: RunSpec, facts: Facts, method_facts: Any,
             extras: Sequence[Entry]) -> tuple[Finding, ...]:
    """The research warnings of the run (source 0's method), then those of each extra source
    (`extras`: whileai.spec.mixture's entries after the first) with a method of its own, named
    after the source (rules read its method, with the facts that depend on the method
    recomputed by `method_facts`; run-wide ones are said once)."""
    found = list(warnings(run, facts, RULES))
    seen = {(w.rule, w.message) for w in found}
    for e in extras:
        if not e.own_method:
            continue
        one = replace_run(run, method=e.method.model_dump(mode="python"), taskset=e.taskset,
                          taskset_args=e.args, roles=e.roles, sources=[], ratio=None)
        own = replace(facts, **method_facts(one) | {"holdout": None, "holdouts": (),
                                                    "unchecked_tasksets": ()})
        for w in warnings(one, own, RULES):
            if (w.rule, w.message) not in seen:
                seen.add((w.rule, w.message))
                found.append(replace(w, message=f"source {e.name!r} ({e.method.type}): {w.message}"))
    return tuple(found)


__all__ = ["findings", "holdouts", "role_rows", "rows", "source0_eval_args", "train"]
