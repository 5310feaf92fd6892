"""Per-step statistics of a run's token exports, read one step at a time (whileai.inspect.exports).

    report = summarise(Path("outputs/my-run"), window=(None, None, 1), decoder=ids_only())

Memory: the values of the step being read (its signal and mismatch KL, for the top-1% shares),
per-id totals (bounded by the vocabulary) and the shown step's first sequences; never the run.
Pure Python; definitions are the field descriptions in whileai.inspect.runmodel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from itertools import compress
from pathlib import Path
from typing import Any, NamedTuple

from whileai import __version__
from whileai.errors import SpecError
from whileai.inspect import exports
from whileai.inspect.runmodel import (
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
from whileai.inspect.stats import mean, top_share

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

    def add(self, n: int, sig: list[float], mkl: list[float], adv: list[float], ent: list[float],
            masks: tuple[list[bool], list[bool], list[bool]] | None, trained: int) -> None:
        self.seqs += 1
        self.tokens += n
        self.trained += trained
        self.signal += sig
        self.mkl += mkl
        self.adv += sum(adv)
        self.adv_abs += sum(abs(x) for x in adv)
        self.adv_n += len(adv)
        self.ent += sum(ent)
        self.ent_n += len(ent)
        if masks is not None:
            self.known += len(masks[0])
            self.masked += sum(masks[0])
            self.high += sum(masks[1])
            self.low += sum(masks[2])

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


def _known(xs: Iterable[Any]) -> list[float]:
    return [float(x) for x in xs if x is not None]


def summarise(run: Path, *, window: tuple[int | None, int | None, int] = (None, None, 1),
              decoder: Decoder | None = None, show_step: int | None = None) -> RunReport:
    """Read every STABLE step of the run inside `window` and build the report."""
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
    ids: dict[int, list[Any]] = {}  # id -> [count, sum, seen, high, first step, first mean, last, last mean]
    envs: set[str] = set()
    shown: list[Sequence] = []
    total_seqs = 0
    records = 0
    have_ref = False
    for step in stable:
        acc = Acc()
        per_env: dict[str, Acc] = {}
        per_id: dict[int, list[Any]] = {}  # id -> [count, sum] in this step
        for rec in exports.records(step, problems):
            try:
                part = _record(rec)
            except (TypeError, ValueError) as e:
                problems.add("invalid", f"{step.path.name}/rank_{rec['rank']}.jsonl "
                             f"sequence {rec['export_sequence_idx']}", f"bad value ({e})")
                continue
            records += 1
            have_ref = have_ref or part.ref
            env = rec["env_name"] if isinstance(rec["env_name"], str) else "(none)"
            envs.add(env)
            for a in (acc, per_env.setdefault(env, Acc())):
                a.add(*part.acc)
            for tid, s in zip(part.trained_ids, part.per_id, strict=True):
                c = per_id.get(tid)
                if c is None:
                    per_id[tid] = [1, s]
                else:
                    c[0] += 1
                    c[1] += s
            if step.step == shown_at:
                total_seqs += 1
                if len(shown) < MAX_SEQUENCES:
                    shown.append(_sequence(rec, part, dec))
        steps.append(acc.stats(step.step))
        for env, a in per_env.items():
            by_env.setdefault(env, []).append(a.stats(step.step))
        _trend(ids, per_id, step.step)
    name = "reverse_kl" if have_ref else "nll"
    notes = []
    if unstable:
        notes.append(f"{len(unstable)} step(s) left out: no STABLE marker yet (being written, or the "
                     f"trainer stopped mid-step): {', '.join(map(str, unstable[:10]))}"
                     + (", ..." if len(unstable) > 10 else ""))
    if problems.torn or problems.invalid:
        notes.append(f"skipped {problems.torn} torn and {problems.invalid} invalid line(s); first: "
                     + "; ".join(problems.examples[:2]))
    if name == "nll":
        notes.append("these exports carry no teacher log-probs (prime-rl 559b447 writes no "
                     "ref_logprobs): the signal shown is the student's surprise −log p, not the "
                     "teacher-minus-student reverse KL")
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


class Part(NamedTuple):
    acc: tuple[Any, ...]  # Acc.add's arguments
    trained_ids: list[int]
    per_id: list[float]  # the signal at each trained id (0.0 where unknown)
    signals: list[float | None]  # per token of the whole sequence
    ref: bool


def _record(rec: dict[str, Any]) -> Part:
    mask = [bool(m) for m in rec["loss_mask"]]
    n = len(mask)
    tlp = rec["trainer_logprobs"]
    ref = rec.get("ref_logprobs")
    if ref is not None:
        sig_all = [None if not m or t is None or r is None else float(t) - float(r)
                   for m, t, r in zip(mask, tlp, ref, strict=True)]
    else:
        sig_all = [None if not m or t is None else -float(t) for m, t in zip(mask, tlp, strict=True)]
    trained_sig = list(compress(sig_all, mask))
    sig = [x for x in trained_sig if x is not None]
    mkl = _known(compress(rec["mismatch_kl"], mask))
    adv = _known(compress(rec["advantages"], mask))
    ent = _known(compress(rec["entropy"], mask))
    im = list(compress(rec["is_masked"], mask))
    masks = None
    if im and all(x is not None for x in im):
        masks = ([bool(x) for x in im], [bool(x) for x in compress(rec["is_masked_high"], mask)],
                 [bool(x) for x in compress(rec["is_masked_low"], mask)])
    trained_ids = [int(i) for i in compress(rec["token_ids"], mask)]
    per_id = [0.0 if x is None else x for x in trained_sig]
    return Part((n, sig, mkl, adv, ent, masks, len(trained_ids)), trained_ids, per_id, sig_all,
                ref is not None)


def _sequence(rec: dict[str, Any], part: Part, dec: Decoder) -> Sequence:
    mask = rec["loss_mask"]
    first = next((i for i, m in enumerate(mask) if m), len(mask))
    ids = rec["token_ids"]
    end = min(len(ids), first + MAX_SHOWN)

    def f(col: str, i: int) -> Any:
        v = rec[col][i]
        return None if v is None else v

    toks = [RunToken(id=ids[i], text=dec.token(ids[i]), trained=bool(mask[i]), signal=part.signals[i],
                     advantage=f("advantages", i), entropy=f("entropy", i), mismatch_kl=f("mismatch_kl", i),
                     importance_ratio=f("importance_ratio", i), trainer_logprob=f("trainer_logprobs", i),
                     inference_logprob=f("inference_logprobs", i),
                     masked=None if rec["is_masked"][i] is None else bool(rec["is_masked"][i]))
            for i in range(first, end)]
    sig = part.acc[1]
    return Sequence(rank=rec["rank"], index=rec["export_sequence_idx"], env=rec["env_name"],
                    tokens=len(ids), trained_tokens=part.acc[6], mean_signal=mean(sig),
                    context=dec.text(ids[:first])[-400:], shown=toks)


def _trend(ids: dict[int, list[Any]], per_id: dict[int, list[Any]], step: int) -> None:
    ranked = sorted(((s / c, tid) for tid, (c, s) in per_id.items() if c >= MIN_COUNT), reverse=True)
    high = {tid for _, tid in ranked[:TOP_IDS]}
    for tid, (c, s) in per_id.items():
        m = s / c
        row = ids.get(tid)
        if row is None:
            ids[tid] = [c, s, 1, int(tid in high), step, m, step, m]
        else:
            row[0] += c
            row[1] += s
            row[2] += 1
            row[3] += tid in high
            row[6], row[7] = step, m


def _top(ids: dict[int, list[Any]], dec: Decoder) -> list[TokenTrend]:
    rows = sorted(((r[3], r[1] / r[0], tid) for tid, r in ids.items() if r[3] > 0), reverse=True)[:50]
    return [TokenTrend(id=tid, text=dec.token(tid), steps_high=ids[tid][3], steps_seen=ids[tid][2],
                       count=ids[tid][0], mean_signal=m,
                       first=Trend(step=ids[tid][4], mean_signal=ids[tid][5]),
                       last=Trend(step=ids[tid][6], mean_signal=ids[tid][7]))
            for _, m, tid in rows]
