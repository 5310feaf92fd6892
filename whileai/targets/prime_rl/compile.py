"""prime-rl backend: RunSpec → a TOML for `uv run rl @ file.toml`, pinned to one commit.

The field map below is the whole mapping; the report, `whileai explain` and the docs are
derived from it. Output is checked against the pinned catalogue and the loader's rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from shlex import quote
from typing import Any

import tomli_w

from whileai.catalogs import tasksets as tc
from whileai.catalogs.targets import prime_rl
from whileai.errors import SpecError, raw
from whileai.rules.facts import Facts
from whileai.spec import mixture
from whileai.spec.run import RunSpec
from whileai.targets import overrides as ov
from whileai.targets.compiled import Compiled
from whileai.targets.fieldmap import Row, apply, get_path
from whileai.targets.prime_rl import deploy, derived, lax, teacher
from whileai.targets.prime_rl import mixture as mix
from whileai.targets.prime_rl.check import check_document, rename_hint
from whileai.targets.prime_rl.fieldmap import FIELD_MAP, rows
from whileai.targets.prime_rl.pin import COMMIT, TARGET, VERSION
from whileai.tasksets import seats
from whileai.version import __version__

__all__ = ["COMMIT", "FIELD_MAP", "TARGET", "VERSION", "compile", "facts", "method_facts"]


def method_facts(run: RunSpec) -> dict[str, Any]:
    """The facts that follow from the method alone (a mixture's source with its own method
    recomputes these: whileai.targets.prime_rl.mixture.findings)."""
    m = run.method
    return {
        "estimator": "sampled_token" if m.distills else m.LOSS,
        "anchor": "live" if m.SCORER == "self" else None,  # prime-rl's self-teacher is the policy
        "top_p": 1.0,
        "divergence": "reverse_kl" if m.distills else None,
        "divergence_how": "prime-rl's only OPD/OPSD loss is the sampled-token reverse-KL estimator",
        "unchecked_tasksets": tuple(sorted({t for t in (run.taskset, run.eval_taskset,
                                                        *(x.taskset for x in run.sources))
                                            if tc.entry(t) is None})),
    }


def facts(run: RunSpec, doc: dict[str, Any], ignored: Sequence[str] = ()) -> Facts:
    """What prime-rl will do, read from the compiled document (overrides included): the warning
    rules, the report's summary and the per-step spend use these, not the spec's values."""
    m = run.method
    steps = get_path(doc, "orchestrator.max_steps", get_path(doc, "max_steps"))
    batch, group = get_path(doc, "orchestrator.batch_size"), get_path(doc, "orchestrator.group_size")
    rank = get_path(doc, "trainer.model.lora.rank")
    per = seats.per_episode(run, doc)
    caps = [get_path(doc, "orchestrator.train.sampling.max_completion_tokens"),
            *(get_path(s, "sampling.max_completion_tokens")
              for s in get_path(doc, "orchestrator.train.source") or [] if isinstance(s, dict))]
    caps = [c for c in caps if isinstance(c, int)]
    got = deploy.gpus_of(doc)
    interval = (get_path(doc, "orchestrator.eval.interval", 100)
                if isinstance(get_path(doc, "orchestrator.eval"), dict) else None)
    return Facts(
        **method_facts(run),
        model=get_path(doc, "model.name", run.model),
        steps=steps,
        rollouts=batch,
        samples_effective=group,
        prompts=batch // group // per.traces if isinstance(batch, int) and isinstance(group, int)
        and group else "?",
        seats=per.traces,
        max_tokens=max(caps) if caps else None,
        gpus=got[0] + got[1] if got else None,
        layout=deploy.layout_fact(doc),
        **deploy.facts(run, doc),
        weights=f"LoRA rank {rank}" if rank is not None else "full weights",
        asynchrony=f"max_off_policy_steps {get_path(doc, 'orchestrator.max_off_policy_steps')}"
        if get_path(doc, "orchestrator.max_off_policy_steps") is not None or not m.off_policy
        else "off-policy: the teacher samples every trace (max_off_policy_steps has no effect)",
        learning_rate=get_path(doc, "trainer.optim.lr", run.learning_rate),
        eval_interval=interval,
        eval_off=interval is None,
        eval_at_start=not get_path(doc, "orchestrator.eval.skip_first_step", False),
        holdout=holdout(run, doc),
        holdouts=tuple(mix.holdouts(doc)) if run.sources else (),
        ignored=tuple(ignored),
    )


def holdout(run: RunSpec, doc: dict[str, Any]) -> dict[str, Any] | None:
    """Which rows eval reads against training's, from the compiled sources (overrides
    included): the honest-holdout rule (whileai.rules.research) reads this."""
    train, evals = (get_path(doc, f"orchestrator.{k}.source[0].env.taskset") for k in ("train", "eval"))
    if not isinstance(get_path(doc, "orchestrator.eval"), dict) or not isinstance(evals, dict) \
            or not isinstance(train, dict):
        return None
    tid, eid = train.get("id"), evals.get("id")
    if not isinstance(tid, str) or not isinstance(eid, str) or tc.entry(tid) is None:
        return None
    train_split = tc.reads(tid, train)
    eval_split = tc.reads(eid, evals) if tc.entry(eid) is not None else None
    same = tc.plugin_key(tid) == tc.plugin_key(eid) and train_split == eval_split
    return {"taskset": tc.plugin_key(tid), "arg": (tc.entry(tid) or {})["split"].get("arg"),
            "train": train_split, "eval": eval_split,
            "same_rows": same, "advice": tc.advice(tid, train_split)}


def compile(run: RunSpec, *, name: str | None = None, extra: Sequence[Row] = ()) -> Compiled:
    """Compile a run spec to prime-rl TOML. Pure: returns text and report, writes nothing.

    extra: rows applied after the field map (a stage of a two-stage run: its run name, where its
    weights land); a key set twice keeps the later value, and the report shows that one."""
    for field, t, _ in mixture.teachers(run):
        if t.port == 8000:
            raise SpecError(f"{field}.url", t.url, "a port other than 8000, where rl serves the "
                            "policy itself")
    deploy.check(run, run.overrides)
    derived.check(run)  # an override of a value others derive from: change the spec field
    fname = name or f"{run.method.type}.toml"
    plans = teacher.plans(run, fname.removesuffix(".toml")) if deploy.serves(run) else []
    applied = apply(rows(run), run, extra)
    doc = applied.doc
    doc.setdefault("trainer", {})
    reads, ignores, fixed = list(applied.reads), list(applied.ignores), list(applied.fixed)
    catalog = prime_rl()
    ov.apply_overrides(doc, run.overrides, catalog, hint=rename_hint)
    ov.override_reads(reads, ignores, fixed, run.overrides, run)
    reads[:] = [replace(r, note=f"{r.note}; {n}") if r.field.startswith("overrides.") and (
        n := lax.override_note(r.path)) else r for r in reads]  # a likely typo of a vLLM key
    deploy.without_inference(run, doc, reads, ignores, fixed)
    problems = check_document(doc, catalog)
    for plan in plans:
        if plan.doc is not None:
            problems += [p._replace(path=f"{plan.file}: {p.path}")
                         for p in check_document(plan.doc, catalog, entry="inference")]
    if problems:
        p = problems[0]
        raise SpecError(p.path or "config", raw("the compiled file"), f"prime-rl would reject "
                        f"it: {p.message}", hint=_hint(p.path, p.message, doc, run))
    commands = [c for plan in plans for c in teacher.commands(plan)] + deploy.run_commands(run, fname)
    known = facts(run, doc, [i.field for i in ignores])
    text = _header(run, fname) + tomli_w.dumps(_ordered(doc))
    files = {fname: text} | {p.file: p.text for p in plans if p.file and p.text}
    notes = tuple(p.note for p in plans) + ((mixture.summary(run),) if run.sources else ())
    return Compiled(
        backend="prime-rl", target=TARGET, run=run, files=files, main=fname,
        reads=tuple(reads), ignores=tuple(ignores), fixed=tuple(fixed),
        warnings=mix.findings(run, known, method_facts), commands=tuple(commands), facts=known,
        cost=deploy.estimate(run, doc, plans), notes=notes,
        teacher=plans[0].record() if plans else None,
        teachers=tuple(p.record() for p in plans),
    )


def _hint(path: str, message: str, doc: dict[str, Any], run: RunSpec) -> str:
    """What the spec offers instead, for the problems a spec field answers."""
    if tp := deploy.tp_hint(run, path):
        return tp
    m = re.match(r"(orchestrator\.(?:train|eval)\.source\[\d+\]\.env)\.taskset\.[^.]+$", path)
    if m and message.startswith("unknown key"):
        tid = get_path(doc, f"{m.group(1)}.taskset.id")
        names = tc.argument_names(tid) if isinstance(tid, str) and tc.entry(tid) else []
        return (f"{tid}'s arguments: {', '.join(names)}; in a spec write them in taskset_args"
                if names else "")
    if path.startswith("orchestrator.eval"):
        return "to run no evaluation, write [eval] enabled = false in the spec"
    return ""


def _header(run: RunSpec, fname: str) -> str:
    how = (f"uv run rl @ {quote(fname)} --dry-run (writes the sbatch script), then without "
           "--dry-run to submit" if deploy.on_slurm(run) else f"uv run rl @ {quote(fname)}")
    return (
        f"# written by whileai {__version__} for {TARGET}: {run.method.type} on {run.taskset}\n"
        f"# run: {how}    (what each key does: whileai explain <spec>)\n\n"
    )


def _ordered(doc: dict[str, Any]) -> dict[str, Any]:
    """Scalars first, then tables in a fixed, readable order."""
    order = ["model", "deployment", "slurm", "trainer", "orchestrator", "inference", "monitors", "ckpt"]
    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: doc[k] for k in order if k in doc and isinstance(doc[k], dict)}
    rest = {k: v for k, v in doc.items() if k not in scalars and k not in tables}
    return scalars | tables | rest
