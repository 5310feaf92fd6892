"""Per-step statistics of a run's token exports, read one step at a time (whileai.tokenview.exports).

    report = summarise(Path("outputs/my-run"), window=(None, None, 1), decoder=ids_only())

Memory: the values of the step being read (its signal and mismatch KL, for the top-1% shares),
per-id totals (bounded by the vocabulary) and the shown step's first sequences; never the run.
Pure Python; definitions are the field descriptions in whileai.tokenview.rundocument.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import compress
from operator import neg
from pathlib import Path
from typing import Any, NamedTuple

from whileai.errors import SpecError
from whileai.tokenview import exports
from whileai.tokenview.rundocument import (
    SIGNALS,
    Reading,
    RunReport,
    RunToken,
    Sequence,
    ShownStep,
    StepStats,
    TokenTrend,
    Trend,
)
from whileai.tokenview.stats import TOP_SHARE, mean
from whileai.version import __version__

MAX_SEQUENCES = 24  # sequences of the shown step kept
MAX_SHOWN = 512  # tokens of each, from its first trained token
TOP_IDS = 50  # ids per step that count as "high"
MIN_COUNT = 3  # occurrences in a step for an id to rank


class Decoder(NamedTuple):
    name: str | None
    token: Callable[[int], str]
    text: Callable[[list[int]], str]


def ids_only() -> Decoder:
    return Decoder(None, lambda i: f"⟨{i}⟩", lambda ids: " ".join(str(i) for i in ids))


class Acc:
    """Running totals of one step (or one env of it)."""

    def __init__(self) -> None:
        self.seqs = self.tokens = self.trained = 0
        self.signal: list[float] = []
        self.mkl: list[float] = []
        self.adv = self.adv_abs = self.ent = 0.0
        self.adv_n = self.ent_n = self.known = self.masked = self.high = self.low = 0

    def add(self, p: RecordPart) -> None:
        self.seqs += 1
        self.tokens += p.n
        self.trained += len(p.trained_ids)
        self.signal += p.sig
        self.mkl += p.mkl
        self.adv += p.adv[0]
        self.adv_abs += p.adv[1]
        self.adv_n += p.adv[2]
        self.ent += p.ent[0]
        self.ent_n += p.ent[1]
        self.known += p.masks[0]
        self.masked += p.masks[1]
        self.high += p.masks[2]
        self.low += p.masks[3]

    def stats(self, step: int) -> StepStats:
        k = self.known
        return StepStats(
            step=step, sequences=self.seqs, tokens=self.tokens, trained_tokens=self.trained,
            mean_signal=mean(self.signal), top1_share_signal=top_share(self.signal),
            mean_advantage=self.adv / self.adv_n if self.adv_n else None,
            mean_abs_advantage=self.adv_abs / self.adv_n if self.adv_n else None,
            mean_entropy=self.ent / self.ent_n if self.ent_n else None,
            mean_mismatch_kl=mean(self.mkl), top1_share_mismatch_kl=top_share(self.mkl),
            masked_fraction=self.masked / k if k else None,
            masked_high_fraction=self.high / k if k else None,
            masked_low_fraction=self.low / k if k else None,
        )


def top_share(values: list[float]) -> float | None:
    """whileai.tokenview.stats.top_share (the same definition) without sorting every value."""
    total = math.fsum([v for v in values if v > 0.0])
    if not values or total <= 0.0:
        return None
    k = max(1, math.ceil(TOP_SHARE * len(values)))
    return sum(max(v, 0.0) for v in heapq.nlargest(k, values)) / total


def steps_text(steps: list[int]) -> str:
    """`step 3` or `steps 0, 1, 2` (the first ten, then `...`)."""
    listed = ", ".join(map(str, steps[:10])) + (", ..." if len(steps) > 10 else "")
    return f"step{'s' if len(steps) > 1 else ''} {listed}"


def summarise(run: Path, *, window: tuple[int | None, int | None, int] = (None, None, 1),
              decoder: Decoder | None = None, show_step: int | None = None,
              visit: Any = None) -> RunReport:
    """Read every STABLE step of the run inside `window` and build the report; `visit` (a
    whileai.tokenview.runteacher.Scorer) sees every valid record, then each step's end."""
    t0 = time.perf_counter()
    dec = decoder or ids_only()
    root = exports.find_root(run)
    found = exports.scan(root)
    if not found:
        raise SpecError("--run", str(run), "a run with token exports: token_exports/ holds no "
                        "step_<n> folder yet")
    chosen = exports.select(found, window)
    stable = [s for s in chosen if s.stable]
    unstable = [s.step for s in chosen if not s.stable]
    if show_step is not None and show_step not in {s.step for s in stable}:
        raise SpecError("--show-step", show_step, "a STABLE step inside --steps: "
                        + (", ".join(str(s.step) for s in stable[-8:]) or "none"))
    shown_at = show_step if show_step is not None else (stable[-1].step if stable else None)
    problems = exports.Problems()
    steps: list[StepStats] = []
    by_env: dict[str, list[StepStats]] = {}
    ids = Trends()
    envs: set[str] = set()
    shown: list[Sequence] = []
    total_seqs = 0
    records = 0
    have_ref = False
    for step in stable:
        acc = Acc()
        per_env: dict[str, Acc] = {}
        step_ids: list[int] = []  # every trained token's id in this step, and its signal
        step_sig: list[float] = []
        for rec in exports.records(step, problems):
            try:
                part = _record(rec)
                seq = (_sequence(rec, part, dec) if step.step == shown_at and len(shown) < MAX_SEQUENCES
                       else None)
            except (TypeError, ValueError) as e:
                problems.add("invalid", f"{step.path.name}/rank_{rec['rank']}.jsonl "
                             f"sequence {rec['export_sequence_idx']}", f"bad value ({e})")
                continue
            records += 1
            if visit is not None:
                visit.record(step.step, rec)
            have_ref = have_ref or part.ref
            env = rec["env_name"] if isinstance(rec["env_name"], str) else "(none)"
            envs.add(env)
            acc.add(part)
            per_env.setdefault(env, Acc()).add(part)
            step_ids += part.trained_ids
            step_sig += part.per_id
            if step.step == shown_at:
                total_seqs += 1
            if seq is not None:
                shown.append(seq)
        steps.append(acc.stats(step.step))
        for env, a in per_env.items():
            by_env.setdefault(env, []).append(a.stats(step.step))
        _trend(ids, step_ids, step_sig, step.step)
        if visit is not None:
            visit.step_done(step.step)
    name = "reverse_kl" if have_ref else "nll"
    notes = []
    if unstable:
        notes.append("left out, no STABLE marker yet (being written, or the trainer stopped "
                     f"mid-step): {steps_text(unstable)}")
    if problems.torn or problems.invalid:
        notes.append(f"skipped {problems.torn} torn and {problems.invalid} invalid line(s); first: "
                     + "; ".join(problems.examples[:2]))
    # an nll signal's definition (SIGNALS) says why: no teacher log-probs; no note repeats it
    if not stable:
        notes.append("no STABLE step inside --steps: nothing to summarise yet")
    if dec.name is None:
        notes.append("token text not decoded: pass --tokenizer PATH (a local folder or a cached "
                     "model id) to see text instead of ids")
    reading = Reading(exports=str(root), exporter=exports.PIN, steps_found=len(found),
                      steps_read=[s.step for s in stable], steps_unstable=unstable,
                      ranks=max((len(s.ranks) for s in stable), default=0),
                      bytes_read=sum(s.bytes for s in stable), records=records,
                      torn_lines=problems.torn, invalid_lines=problems.invalid,
                      problem_examples=problems.examples)
    t1 = time.perf_counter()
    return RunReport(
        whileai=__version__, run=str(run), reading=reading, signal_name=name,  # type: ignore[arg-type]
        signal_definition=SIGNALS[name], tokenizer=dec.name, envs=sorted(envs), steps=steps,
        by_env=by_env if len(by_env) > 1 else {},
        shown=ShownStep(step=shown_at, sequences_total=total_seqs, sequences=shown)
        if shown_at is not None else None,
        top_tokens=_top(ids, dec), timings={"read": round(t1 - t0, 3), "total": round(t1 - t0, 3)},
        notes=notes)


class RecordPart(NamedTuple):
    """One record's contribution: its trained tokens' values and sums."""

    n: int  # tokens
    trained_ids: list[int]
    per_id: list[float]  # the signal at each trained token (0.0 where unknown)
    sig: list[float]  # known signal values of trained tokens
    mkl: list[float]
    adv: tuple[float, float, int]  # sum, sum of |x|, count
    ent: tuple[float, int]
    masks: tuple[int, int, int, int]  # known, masked, high, low
    ref: bool


def _known(xs: Iterable[Any]) -> list[Any]:
    xs = list(xs)
    return xs if None not in xs else [x for x in xs if x is not None]


def _record(rec: dict[str, Any]) -> RecordPart:
    """Values are summed as they are; a string among them raises TypeError (counted invalid)."""
    mask = rec["loss_mask"]
    tlp = list(compress(rec["trainer_logprobs"], mask))
    ref = rec.get("ref_logprobs")
    if ref is not None:
        trained_sig = [None if t is None or r is None else t - r
                       for t, r in zip(tlp, compress(ref, mask), strict=True)]
    elif None not in tlp:
        trained_sig = list(map(neg, tlp))
    else:
        trained_sig = [None if t is None else -t for t in tlp]
    sig = _known(trained_sig)
    mkl = _known(compress(rec["mismatch_kl"], mask))
    adv = _known(compress(rec["advantages"], mask))
    ent = _known(compress(rec["entropy"], mask))
    im = list(compress(rec["is_masked"], mask))
    masks = (0, 0, 0, 0)
    if im and None not in im:
        masks = (len(im), sum(map(bool, im)), sum(map(bool, compress(rec["is_masked_high"], mask))),
                 sum(map(bool, compress(rec["is_masked_low"], mask))))
    trained_ids = list(compress(rec["token_ids"], mask))
    if set(map(type, trained_ids)) - {int}:
        raise TypeError("token_ids holds a value that is not an integer")
    per_id = [0.0 if x is None else x for x in trained_sig] if len(sig) < len(trained_sig) else sig
    return RecordPart(len(mask), trained_ids, per_id, sig, mkl,
                (math.fsum(adv), math.fsum(map(abs, adv)), len(adv)), (math.fsum(ent), len(ent)), masks,
                ref is not None)


def _signal(rec: dict[str, Any], i: int) -> float | None:
    """The signal at token i of a record (None off the loss mask or where a log-prob is null)."""
    t, ref = rec["trainer_logprobs"][i], rec.get("ref_logprobs")
    if not rec["loss_mask"][i] or t is None:
        return None
    if ref is None:
        return float(-t)
    return None if ref[i] is None else float(t - ref[i])


def _sequence(rec: dict[str, Any], part: RecordPart, dec: Decoder) -> Sequence:
    mask = rec["loss_mask"]
    first = next((i for i, m in enumerate(mask) if m), len(mask))
    ids = rec["token_ids"]
    end = min(len(ids), first + MAX_SHOWN)

    def f(col: str, i: int) -> float | None:
        v = rec[col][i]
        return None if v is None else float(v)

    # values converted here (int, float, bool), so the models are built without revalidation
    toks = [RunToken.model_construct(
        id=int(ids[i]), text=dec.token(int(ids[i])), trained=bool(mask[i]), signal=_signal(rec, i),
        advantage=f("advantages", i), entropy=f("entropy", i), mismatch_kl=f("mismatch_kl", i),
        importance_ratio=f("importance_ratio", i), trainer_logprob=f("trainer_logprobs", i),
        inference_logprob=f("inference_logprobs", i),
        masked=None if rec["is_masked"][i] is None else bool(rec["is_masked"][i]))
        for i in range(first, end)]
    return Sequence(rank=rec["rank"], index=rec["export_sequence_idx"], env=rec["env_name"],
                    tokens=len(ids), trained_tokens=len(part.trained_ids), mean_signal=mean(part.sig),
                    context=dec.text(ids[:first])[-400:], shown=toks)


class Trends:
    """Per token id over the steps read (bounded by the vocabulary), counting only the steps in
    which the id was trained at least MIN_COUNT times (its ranked steps): occurrences and signal
    sum there, how many such steps, in how many it was among the top ids, the first and last
    one with its mean. A step has tens of thousands of distinct ids, most seen once or twice."""

    def __init__(self) -> None:
        self.count: Counter[int] = Counter()
        self.sum: dict[int, float] = {}
        self.seen: Counter[int] = Counter()
        self.high: Counter[int] = Counter()
        self.first: dict[int, tuple[int, float]] = {}
        self.last: dict[int, tuple[int, float]] = {}


def _trend(g: Trends, step_ids: list[int], step_sig: list[float], step: int) -> None:
    """Fold one step's per-id totals into the run's; mark the step's top ids by mean signal."""
    counts = Counter(step_ids)
    sums = {t: 0.0 for t, c in counts.items() if c >= MIN_COUNT}
    for tid, x in zip(step_ids, step_sig, strict=True):
        if tid in sums:
            sums[tid] += x
    means = {t: (step, v / counts[t]) for t, v in sums.items()}
    g.high.update(t for _, t in heapq.nlargest(TOP_IDS, ((m, t) for t, (_, m) in means.items())))
    for t, v in sums.items():
        g.count[t] += counts[t]
        g.sum[t] = g.sum.get(t, 0.0) + v
    g.seen.update(sums.keys())
    g.first.update((t, means[t]) for t in sums.keys() - g.first.keys())
    g.last.update(means)


def _top(g: Trends, dec: Decoder) -> list[TokenTrend]:
    rows = sorted(((h, g.sum[t] / g.count[t], t) for t, h in g.high.items()), reverse=True)[:50]
    return [TokenTrend(id=t, text=dec.token(t), steps_high=h, steps_seen=g.seen[t], count=g.count[t],
                       mean_signal=m, first=Trend(step=g.first[t][0], mean_signal=g.first[t][1]),
                       last=Trend(step=g.last[t][0], mean_signal=g.last[t][1]))
            for h, m, t in rows]
