"""A mixture (whileai.spec.mixture) on verl 0.9.1: OPD sources, a teacher each, routed by the
rows' `data_source`.

What verl can express, read from its code:
- one teacher per source: `distillation.teacher_models.<name>` entries, each with a `key`; each
  row goes to the teacher whose key is its `distillation.teacher_key` column (default
  `data_source`: workers/config/distillation.py:266, experimental/agent_loop/agent_loop.py:
  1040-1045, experimental/teacher_loop/teacher_manager.py:100-114). With one entry every row goes
  to it; with several, verl pops the default `teacher_model` entry (distillation.py:309-310), so
  several teachers are written as `teacher_1`, `teacher_2`, ... and never as `teacher_model`.
- the rows: one table, every source's rows concatenated (utils/dataset/rl_dataset.py:171-180),
  each written with its teacher's key as `data_source` (with one teacher: the source's name);
- one loss, one `rollout.n`, temperature and response length for every row: a mixture of methods
  (GRPO beside OPD) or of sampling settings is refused;
- no ratios: the sampler draws rows uniformly from the concatenated table (a RandomSampler over
  it: trainer/ppo/utils.py:158-166), so a source's share is its rows' share; a ratio is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, NamedTuple

from whileai.errors import SpecError, raw
from whileai.spec import mixture
from whileai.spec.mixture import Entry
from whileai.spec.run import OPD, RunSpec
from whileai.targets.fieldmap import Drop, Row, To, const
from whileai.tasksets import builtin

MODELS = "distillation.teacher_models"
DEFAULT = "teacher_model"  # verl's one-teacher entry, popped when another is added
LOSS = {"reverse_kl": "k1", "forward_kl": "forward_kl_topk"}  # divergence -> verl's loss_mode
SAME = ("samples", "temperature", "max_tokens", "divergence", "top_k", "task_reward_kl_coef")
RANDOM = ("verl draws rows uniformly from the sources' concatenated rows (utils/dataset/rl_dataset.py:"
          "171-180; a RandomSampler, trainer/ppo/utils.py:158-166), so a source's share is its row count")


class Keyed(NamedTuple):
    entry: str  # distillation.teacher_models.<entry>
    key: str | None  # the data_source its rows carry (None: the one teacher, which takes every row)
    model: str
    field: str  # the spec field naming it (…method.teacher)
    sources: tuple[Entry, ...]


def teachers(run: RunSpec, found: list[Entry] | None = None) -> list[Keyed]:
    """The distinct teachers verl serves (by model: verl starts its own, the URL is not read), in
    source order; with one, verl's default entry and no key."""
    groups: dict[str, tuple[str, list[Entry]]] = {}
    for field, t, ents in mixture.teachers(run, found or ()):
        groups.setdefault(t.model, (field, []))[1].extend(ents)
    if len(groups) == 1:
        (model, (field, ents)), = groups.items()
        return [Keyed(DEFAULT, None, model, field, tuple(ents))]
    return [Keyed(f"teacher_{i}", "+".join(e.name for e in ents), model, field, tuple(ents))
            for i, (model, (field, ents)) in enumerate(groups.items(), 1)]


def several(run: RunSpec) -> bool:
    """A run whose sources have more than one teacher (named entries, keyed)."""
    return bool(run.sources) and isinstance(run.method, OPD) and len(teachers(run)) > 1


def data_source(run: RunSpec, e: Entry, ts: list[Keyed]) -> str:
    """The data_source of a source's rows: its teacher's key, or (one teacher) the source's name."""
    return next((t.key for t in ts if e in t.sources and t.key), e.name)


def view(run: RunSpec, e: Entry) -> Any:
    """A source as the run-shaped object the task readers take (taskset, data, reward)."""
    s = run if e.pos == 0 else run.sources[e.pos - 1]
    return SimpleNamespace(taskset=e.taskset, data=s.data, reward=s.reward, method=e.method,
                           _origin=getattr(run, "_origin", None))


def refuse(run: RunSpec) -> None:
    """What verl cannot express of a mixture, one line each."""
    found = mixture.entries(run)
    if not isinstance(run.method, OPD):
        raise SpecError("sources", raw(f"{len(found)} training sources of {run.method.type}"),
                        "opd sources (a teacher each) for a verl mixture: verl routes rows to teachers "
                        "by data_source; a GRPO mixture needs one reward.py scoring each source, which "
                        "whileai does not write for verl yet; compile it for prime-rl (-t prime-rl)")
    for e in found[1:]:
        if e.method.type != run.method.type or not isinstance(e.method, OPD):
            raise SpecError(f"{e.field}method.type", e.method.type, "opd in every source of a verl "
                            "mixture, as the run's method: verl trains every row with one loss "
                            "(distillation.enabled and distillation_loss are one per run, trainer/"
                            "config/distillation/distillation.yaml), so a per-source method mix "
                            "(GRPO beside OPD) is prime-rl's (-t prime-rl)")
        for name in SAME:
            if getattr(e.method, name) != getattr(run.method, name):
                raise SpecError(f"{e.field}method.{name}", getattr(e.method, name), f"the run's "
                                f"{getattr(run.method, name)!r} on verl: one rollout.n, temperature, "
                                "response length and distillation loss for every row of a run")
    weighed = [("ratio", run.ratio)] if run.ratio is not None else []
    weighed += [(f"sources[{i}].ratio", s.ratio) for i, s in enumerate(run.sources)
                if "ratio" in s.model_fields_set]
    if weighed:
        raise SpecError(*weighed[0], f"unset on verl: {RANDOM}; weigh sources with ratios on prime-rl")
    mixture.refuse_task_reward(run, "unset in a verl mixture: whileai's reward.py scores one "
                               "taskset, not each source by its data_source; compile the task "
                               "reward for one source")


def own_entries(run: RunSpec) -> None:
    """An override naming a teacher entry whileai does not write: beside teacher_model verl would
    drop that one silently (workers/config/distillation.py:309-310), and beside named teachers it
    would be a teacher no row is routed to; refused, naming the override."""
    if not isinstance(run.method, OPD):
        return
    mine = {t.entry for t in teachers(run)}
    for key in run.overrides:
        parts = key.split(".")
        if key.startswith(MODELS + ".") and len(parts) > 3 and parts[2] not in mine:
            raise SpecError(f"overrides.{key}", run.overrides[key], f"a key of the teacher entr"
                            f"{'ies' if len(mine) > 1 else 'y'} whileai writes ({', '.join(sorted(mine))}): "
                            f"another entry beside teacher_model makes verl drop teacher_model without "
                            f"a word (workers/config/distillation.py:309-310); give each teacher its "
                            f"own source (sources[i].method.teacher)")


def counts(run: RunSpec) -> tuple[int, int]:
    """Train rows, and holdout rows of the sources evaluated."""
    train = test = 0
    for e in mixture.entries(run):
        t = builtin.for_run(view(run, e))
        train += t.train_size
        test += t.holdout_size if e.eval else 0
    return train, test


def rows(run: RunSpec) -> list[Row]:
    """The map's rows of a mixture: each source's fields, each teacher's entry."""
    found = mixture.entries(run)
    ts = teachers(run, found)
    out: list[Row] = [Drop("ratio", f"no ratio on verl: {RANDOM}")]
    for e in found[1:]:
        f, s = e.field, run.sources[e.pos - 1]
        ds = data_source(run, e, ts)
        out += [
            To(f"{f}taskset", "<rows of data/train.jsonl>", when=_given(s, "data", False),
               note=f"{e.taskset} generated locally as verl's rows, data_source {ds!r}"),
            Drop(f"{f}taskset", "a label only: the tasks come from its data", when=_given(s, "data", True)),
            To(f"{f}data", "<rows of data/train.jsonl>", note=f"copied as verl's rows, data_source {ds!r}"),
            Drop(f"{f}reward", "an OPD source trains on its teacher, not a reward"),
            Drop(f"{f}taskset_args", "verl trains from the rows in data/: taskset arguments configure "
                 "prime-rl's taskset packages", when=_given(s, "taskset_args", True)),
            Drop(f"{f}roles", "verl trains one policy on single-turn rows: roles are seats of a "
                 "prime-rl (verifiers) env"),
            Drop(f"{f}ratio", f"no ratio on verl: {RANDOM}"),
            To(f"{f}name", "<data_source of its rows>", const(ds),
               note="the key its teacher routes on" if ds != e.name else "its rows' data_source"),
            To(f"{f}eval", "<rows of data/test.jsonl>", note="its holdout rows are in data/test.jsonl"
               if e.eval else "its holdout rows are left out of data/test.jsonl"),
        ]
        if e.own_method:
            out += _method_rows(f)
    for e in found:  # each teacher field: its entry's model (source 0's alone: the run's row)
        if (e.pos == 0 and len(ts) == 1) or (e.pos > 0 and not e.own_method):
            continue
        t = next(t for t in ts if e in t.sources)
        field = "method.teacher" if e.pos == 0 else f"{e.field}method.teacher"
        out.append(To(f"{field}.model", f"{MODELS}.{t.entry}.model_path", const(t.model),
                      note=f"the teacher of {', '.join(x.name for x in t.sources)}, served by verl "
                      "on its own GPU pool; it must share the student's vocabulary"))
    out += [To(f"{t.field}.model", f"{MODELS}.{t.entry}.key", const(t.key), note="the data_source "
               "of its sources' rows (distillation.teacher_key)") for t in ts if t.key]
    return out


def _given(source: Any, field: str, given: bool) -> Callable[[RunSpec], bool]:
    """A row's `when`: the source's field is set (given) or not."""
    return lambda _: bool(getattr(source, field)) is given


def _method_rows(f: str) -> list[Row]:
    m = f"{f}method."
    same = "as the run's method's (one for every row)"
    return [To(f"{m}type", "distillation.enabled", const(True), note="OPD, as the run's"),
            To(f"{m}samples", "actor_rollout_ref.rollout.n", note=same),
            To(f"{m}temperature", "actor_rollout_ref.rollout.temperature", note=same),
            To(f"{m}max_tokens", "data.max_response_length", note=same),
            To(f"{m}divergence", "distillation.distillation_loss.loss_mode",
               lambda r: LOSS[str(r.method.divergence)],  # type: ignore[union-attr]
               note=same),
            To(f"{m}top_k", "distillation.distillation_loss.topk", note=same,
               when=lambda r: getattr(r.method, "divergence", None) == "forward_kl"),
            Drop(f"{m}top_k", "k1 scores the sampled token only: no top-k support",
                 when=lambda r: getattr(r.method, "divergence", None) == "reverse_kl"),
            Drop(f"{m}learning_rate", "one optimizer trains every source: the run's method's "
                 "learning_rate"),
            Drop(f"{m}teacher.url", "verl starts its own teacher on its distillation pool and has "
                 "no external teacher URL (trainer/ppo/v1/trainer_base.py:837-846)"),
            Drop(f"{m}teacher.api_key_env", "verl queries no endpoint, so no key is read")]
