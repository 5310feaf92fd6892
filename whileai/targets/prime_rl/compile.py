"""prime-rl target: RunSpec → a TOML for `uv run rl @ file.toml`, pinned to one commit.

The field map (whileai.targets.prime_rl.fieldmap, over the run's plan) is the whole mapping;
the report, `whileai explain` and the docs are derived from it. Output is checked against the
pinned catalogue and the loader's rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from shlex import quote
from typing import TYPE_CHECKING, Any

import tomli_w

from whileai.catalogs import paths
from whileai.catalogs import tasksets as tc
from whileai.errors import SpecError, raw
from whileai.rules.facts import Facts
from whileai.rules.tokenizers import refuse_measured
from whileai.spec import mixture
from whileai.spec.run import RunSpec
from whileai.targets import overrides as ov
from whileai.targets import registry
from whileai.targets.compiled import Compiled, Fixed
from whileai.targets.fieldmap import Applied, Fix, Row, To, apply, get_path
from whileai.targets.pipeline import Emitted, Steps, compile_run, ignored, judged
from whileai.targets.prime_rl import cost, deploy, lax, plan, teacher
from whileai.targets.prime_rl import mixture as mix
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog
from whileai.targets.prime_rl.check import check_document, rename_hint
from whileai.targets.prime_rl.fieldmap import OFF, rows
from whileai.targets.prime_rl.pin import COMMIT, TARGET, VERSION
from whileai.targets.prime_rl.plan import CompilePlan
from whileai.targets.story import Floor, Story, flat
from whileai.tasksets import seats
from whileai.version import __version__

if TYPE_CHECKING:
    from whileai.cost.estimate import Cost
    from whileai.rules.base import Finding

__all__ = ["COMMIT", "TARGET", "VERSION", "PrimeRLSteps", "check_divergence", "compile", "facts",
           "lone_groups", "method_facts", "planned"]


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


def facts(p: CompilePlan, doc: dict[str, Any], got: tuple[int, int, int, int] | None,
          ignored: Sequence[str] = (), set_by: Sequence[str] = ()) -> Facts:
    """What prime-rl will do, read from the compiled document (overrides included; got: its
    GPUs, deploy.gpus_of): the warning rules, the report's summary and the per-step spend use
    these, not the spec's values. The prompts and seats are the plan's unless a key in `set_by`
    (an override, an extra row) set the batch, the group or a training source: then the
    document's, counted back."""
    run, m = p.run, p.run.method
    steps = get_path(doc, "orchestrator.max_steps", get_path(doc, "max_steps"))
    batch, group = get_path(doc, "orchestrator.batch_size"), get_path(doc, "orchestrator.group_size")
    rank = get_path(doc, "trainer.model.lora.rank")
    sources = _touched(set_by, "orchestrator.train.source")  # their env: the seats
    per = seats.per_episode(run, doc, p.entries, p.shares) if sources else p.seats
    prompts: int | str = p.prompts
    if sources or _touched(set_by, "orchestrator.batch_size", "orchestrator.group_size"):
        prompts = batch // group // per.traces if isinstance(batch, int) and isinstance(group, int) \
            and group else "?"
    caps = [get_path(doc, "orchestrator.train.sampling.max_completion_tokens"),
            *(get_path(s, "sampling.max_completion_tokens")
              for s in get_path(doc, "orchestrator.train.source") or [] if isinstance(s, dict))]
    caps = [c for c in caps if isinstance(c, int)]
    interval = (get_path(doc, "orchestrator.eval.interval", 100)
                if isinstance(get_path(doc, "orchestrator.eval"), dict) else None)
    return Facts(
        **method_facts(run),
        model=get_path(doc, "model.name", run.model),
        steps=steps,
        rollouts=batch,
        samples_effective=group,
        prompts=prompts,
        seats=per.traces,
        max_tokens=max(caps) if caps else None,
        seq_len=seq if isinstance(seq := get_path(doc, "seq_len"), int) else None,
        gpus=got[0] + got[1] if got else None,
        layout=deploy.layout_fact(doc, got, p.teacher_gpus),
        **deploy.facts(p, doc, got),
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
        lone_groups=lone_groups(doc),
        train_sources=len(get_path(doc, "orchestrator.train.source") or []),
        filter_zero_advantages=get_path(doc, "orchestrator.train.filter_zero_advantages", True),
        ignored=tuple(ignored),
    )


def _touched(set_by: Sequence[str], *keys: str) -> bool:
    """Whether a key set after the field map is one of `keys`, a table above one, or inside one."""
    return any(paths.under(a, b) or paths.under(b, a)
               for a in map(paths.parse, set_by) for b in map(paths.parse, keys))


def lone_groups(doc: dict[str, Any]) -> tuple[str, ...]:
    """The training sources that earn GRPO no credit (whileai.targets.prime_rl.rules): prime-rl's `grpo`
    algorithm (a source's own `algo`, else orchestrator.algo, whose default is grpo) over groups of
    one (a source's own group_size, else orchestrator.group_size, default 1) of a taskset whose
    episode yields one trainable trace (whileai.tasksets.seats)."""
    o: dict[str, Any] = doc["orchestrator"] if isinstance(doc.get("orchestrator"), dict) else {}
    algo = get_path(o, "algo.type", "grpo")
    group = o.get("group_size", 1)
    out = []
    for pos, s in enumerate(get_path(o, "train.source") or []):
        if not isinstance(s, dict):
            continue
        own = get_path(s, "algo.type")
        ts = get_path(s, "env.taskset.id")
        env: dict[str, Any] = s["env"] if isinstance(s.get("env"), dict) else {}
        roles = [k for k, v in env.items() if isinstance(v, dict) and {"harness", "runtime"} & set(v)]
        if (own or algo) == "grpo" and s.get("group_size", group) == 1 and isinstance(ts, str) \
                and seats.of(ts, roles or None, env).traces == 1:
            out.append(str(s.get("name") or f"source[{pos}]"))
    return tuple(out)


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
    same = tc.plugin_key(tid) == tc.plugin_key(eid) and tc.overlap(train_split, eval_split)
    return {"taskset": tc.plugin_key(tid), "arg": (tc.entry(tid) or {})["split"].get("arg"),
            "train": train_split, "eval": eval_split,
            "same_rows": same, "advice": tc.advice(tid, train_split)}


def _own_tasks(run: RunSpec) -> None:
    """`data` and `reward` ask for a run on the user's tasks and scorer; prime-rl reads both from
    the taskset package, so ignoring them would train on something else: one SpecError each."""
    env = "a verifiers environment installed where `uv run rl` runs"
    if run.data is not None:
        raise SpecError("data", run.data, f"prime-rl trains only on the rows of the taskset package "
                        f"named by taskset ({run.taskset!r}), never on a file, so this run would "
                        f"not train on yours: compile for TRL (-t trl), which trains on the file, "
                        f"or package the rows as {env}, name it in taskset and leave data out")
    if run.reward is not None:
        raise SpecError("reward", run.reward, "prime-rl scores rollouts only with the rubric of the "
                        f"taskset package named by taskset ({run.taskset!r}), never with a function "
                        f"of yours, so this run would not learn from it: compile for TRL (-t trl), "
                        f"which calls it, or put it in the rubric of {env}, name that in taskset "
                        "and leave reward out")


def _sources_own_tasks(run: RunSpec) -> None:
    """A source's own `data` or `reward`: refused as the run's are (_own_tasks), since prime-rl
    trains each source on its taskset package's rows and rubric."""
    for i, s in enumerate(run.sources):
        for field in ("data", "reward"):
            if getattr(s, field) is not None:
                raise SpecError(f"sources[{i}].{field}", getattr(s, field), f"unset for prime-rl: "
                                f"each source trains on the rows and rubric of its taskset package "
                                f"({s.taskset!r}), never a file or function of yours; compile this "
                                f"mixture for verl (-t verl), which trains on each source's file")


def _task_reward(run: RunSpec) -> None:
    """OPD's task reward beside the teacher: prime-rl's opd assigns no scalar advantage, so its
    loss is the teacher's KL alone (559b447 configs/algorithm.py:296-305, OPDAlgoConfig:
    action_loss_type ref_kl, `advantages=None`)."""
    mixture.refuse_task_reward(run, f"unset for prime-rl: its opd trains on the teacher's KL alone, "
                               f"no task reward (configs/algorithm.py:296-305 at {COMMIT[:7]}); "
                               "compile it for verl (-t verl), or add a GRPO source to the mixture")


def _divergence(run: RunSpec) -> None:
    """A divergence prime-rl cannot train is refused, as on verl (one policy per mistake, every
    target): its only OPD/OPSD loss is the sampled-token reverse-KL estimator (559b447
    orchestrator/algo/opd.py, opsd.py); training reverse KL under a forward-KL or JSD spec
    would answer another question than the one asked."""
    methods = [("method", run.method)] + [(f"sources[{i}].method", s.method)
                                          for i, s in enumerate(run.sources)]
    for at, m in methods:
        check_divergence(m, at)


def check_divergence(m: Any, at: str) -> None:
    """One method's divergence (at: where it is in the spec, e.g. then.method)."""
    asked = getattr(m, "divergence", None)
    if asked is not None and asked != "reverse_kl":
        other = "trl or verl" if asked == "forward_kl" and m.type == "opd" else "trl"
        raise SpecError(f"{at}.divergence", asked, f"reverse_kl for prime-rl: its only "
                        f"{m.type.upper()} loss is the sampled-token reverse-KL estimator "
                        f"(orchestrator/algo/{m.type}.py at {COMMIT[:7]}); compile {asked} for "
                        f"{other}")


def compile(run: RunSpec, *, name: str | None = None, extra: Sequence[Row] = ()) -> Compiled:
    """Compile a run spec to prime-rl TOML. Pure: returns text and report, writes nothing.

    One pass through the shared pipeline (whileai.targets.pipeline): the plan
    (whileai.targets.prime_rl.plan) is worked out once; the field map, the overrides, the facts,
    the cost and the commands read it, and each of the report's lists is built once, in its
    final form (targets.overrides.account).

    extra: rows applied after the field map (a stage of a two-stage run: its run name, where its
    weights land); a key set twice keeps the later value, and the report shows that one."""
    return planned(run, name=name, extra=extra)[0]


def planned(run: RunSpec, *, name: str | None = None,
            extra: Sequence[Row] = ()) -> tuple[Compiled, CompilePlan]:
    """`compile`, with the plan it worked out (a two-stage run sizes the teachers' servers both
    stages share from it: whileai.targets.prime_rl.stages)."""
    steps = PrimeRLSteps(name or f"{run.method.type}.toml", extra)
    return compile_run(registry.of(__name__), run, steps), steps.plan


class PrimeRLSteps(Steps):
    """prime-rl's steps (whileai.targets.pipeline): the plan first, then its field map; the
    overrides against the pinned catalogue; the loader mirror on the final document."""

    off = OFF

    def __init__(self, fname: str, extra: Sequence[Row]) -> None:
        self.fname, self.extra = fname, extra
        self.floors = FLOORS

    def refuse(self, run: RunSpec) -> None:
        _own_tasks(run)
        _sources_own_tasks(run)
        _task_reward(run)
        refuse_measured(run, "prime-rl")  # its teacher scores (SFT: reads) the student's token ids
        _divergence(run)
        self.plan = plan.make(run, self.fname.removesuffix(".toml"))

    def rows(self, run: RunSpec) -> Sequence[Row]:
        return rows(self.plan)

    def story(self) -> Story:
        return _story(self.fname.removesuffix(".toml"), self.extra)

    def document(self, applied: Applied) -> dict[str, Any]:
        doc = applied.doc
        doc.setdefault("trainer", {})
        return doc

    def keys(self) -> ov.OverrideKeys:
        self.catalog = prime_rl_catalog()
        return ov.SchemaKeys(self.catalog, hint=rename_hint)

    def settle(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        if not self.plan.serves:
            doc.pop("inference", None)  # no inference nodes: no [inference] (its keys: ignored)
        return []

    def note(self, path: str) -> str | None:
        return lax.override_note(path)  # a likely vLLM typo

    def unwritten(self, path: str) -> str | None:
        return None if self.plan.serves else deploy.no_inference(path)

    def check(self, doc: dict[str, Any], run: RunSpec, added: set[str]) -> None:
        p = self.plan
        problems = check_document(doc, self.catalog)
        for t in p.served:
            if t.doc is not None:
                problems += [x._replace(path=f"{t.file}: {x.path}")
                             for x in check_document(t.doc, self.catalog, entry="inference")]
        if problems:
            x = problems[0]
            raise SpecError(x.path or "config", raw("the compiled file"), f"prime-rl would reject "
                            f"it: {x.message}", hint=_hint(x.path, x.message, doc, p))

    def emit(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Emitted:
        p, fname = self.plan, self.fname
        commands = [c for t in p.served for c in teacher.commands(t)] + deploy.run_commands(p, fname)
        self.got = deploy.gpus_of(doc)
        text = _header(p, fname) + tomli_w.dumps(_ordered(doc))
        files = {fname: text} | {t.file: t.text for t in p.served if t.file and t.text}
        records = tuple(replace(t.record(), client=teacher.client(doc, t)) for t in p.served)
        notes = tuple(t.note for t in p.served) + ((mixture.summary(run, p.entries, p.shares),)
                                                     if run.sources else ())
        return Emitted(files=files, main=fname, commands=tuple(commands), notes=notes,
                       teacher=records[0] if records else None, teachers=records)

    def facts(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Facts:
        set_by = [*run.overrides, *(r.path for r in self.extra if isinstance(r, (To, Fix))
                                    and r.when(run) and not r.path.startswith("<"))]
        return judged(facts(self.plan, doc, self.got, ignored(said), set_by), said)

    def warnings(self, run: RunSpec, facts: Facts) -> tuple[Finding, ...]:
        return mix.findings(run, facts, method_facts, self.plan.entries[1:])

    def cost(self, doc: dict[str, Any], run: RunSpec, facts: Facts) -> Cost | None:
        return cost.estimate(self.plan, doc, self.got)


def _story(stem: str, extra: Sequence[Row]) -> Story:
    """What a run's files and lines say, overrides aside (whileai.targets.story)."""
    def story(run: RunSpec) -> dict[str, Any]:
        p = plan.make(run, stem)
        out = dict(flat(apply(rows(p), run, extra).doc))
        out["<the teachers' servers (their files and commands)>"] = [
            (t.text, teacher.commands(t)) for t in p.served]
        out["<the model sizes (the cost, the engine width)>"] = p.sizes
        return out
    return story


def _caps(run: RunSpec, doc: dict[str, Any]) -> tuple[int, str]:
    longest = get_path(doc, "seq_len") - run.prompt_tokens
    return (run.prompt_tokens + longest,
            f"prompt_tokens + the longest max_tokens = {run.prompt_tokens} + {longest}")


# seq_len is prompt_tokens + the longest completion cap; the policy server's context holds it
FLOORS = [Floor(("seq_len", "inference.vllm.max_model_len"), _caps,
                "prompt_tokens (or method.max_tokens)")]


def _hint(path: str, message: str, doc: dict[str, Any], p: CompilePlan) -> str:
    """What the spec offers instead, for the problems a spec field answers."""
    if tp := deploy.tp_hint(p, path):
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


def _header(p: CompilePlan, fname: str) -> str:
    run = p.run
    how = (f"uv run rl @ {quote(fname)} --dry-run (writes the sbatch script), then without "
           "--dry-run to submit" if p.on_slurm else f"uv run rl @ {quote(fname)}")
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
