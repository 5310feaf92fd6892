"""Scoring a run's own samples against a teacher, streamed, while `inspect --run` reads them.

    scorer = Scorer(teacher, dec, pick="surprise", per_step=8, top_k=5)
    report = summarise(run, window=w, decoder=dec, visit=scorer)   # one pass over the exports
    teacher_run, page_report = scorer.finish(...)

Only what is shown is scored: the steps inside --steps, and in each the `per_step` samples
with the largest mean student surprise or the lowest mean advantage (or all of them). Memory:
the picked records of one step, at most IN_FLIGHT samples being scored, the per-token signal
and teacher rank of the scored tokens (two numbers each, for the top-1% shares), per-position
sums, and the MAX_DETAIL samples with the largest mean signal token by token (MAX_SHOWN tokens
each). The summaries are spec inspection's (whileai.tokenview.stats), so the views read alike.
"""

from __future__ import annotations

import heapq
import time
from array import array
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

from whileai.tokenview import stats
from whileai.tokenview.document import Alternative, Completion, Token
from whileai.tokenview.runsummary import MAX_SHOWN, Decoder
from whileai.tokenview.scoring import Alt, Model
from whileai.tokenview.teacher import Scores, score
from whileai.tokenview.teacherdocument import TeacherSample, TeacherStep

MAX_DETAIL = 24  # samples shown token by token
SCAN_K = 1  # prompt_logprobs asked while scanning: prime-rl's own value (utils/client.py:498)
IN_FLIGHT = 8  # samples being scored at once (prime-rl's orchestrator gathers a whole episode's)
PICKS = ("surprise", "advantage", "all")


class Detail(NamedTuple):
    """A sample kept token by token."""

    completion: Completion
    context_ids: list[int]
    sample: int  # its index in Scorer.samples


class Scorer:
    def __init__(self, teacher: Model, dec: Decoder, *, pick: str, per_step: int, top_k: int,
                 progress: Any = None, student: Any = None) -> None:
        self.teacher, self.dec, self.pick, self.per_step, self.top_k = teacher, dec, pick, per_step, top_k
        self.student = student  # a local student model: the full-vocabulary KL (local teacher only)
        self.progress = progress
        self.pool = ThreadPoolExecutor(max_workers=IN_FLIGHT)
        self.pending: deque[tuple[int, dict[str, Any], Future[Scores]]] = deque()
        self.picked: list[tuple[float, int, dict[str, Any]]] = []
        self.order = 0
        self.samples: list[TeacherSample] = []
        self.steps: list[TeacherStep] = []
        self.sig = array("d")  # every scored token's signal, teacher rank and filler flag
        self.ranks: list[int | None] = []
        self.filler = bytearray()
        self.kl: array[float] | None = array("d") if student is not None else None  # None: not here
        self.step_from = 0  # where the current step's tokens start in those lists
        self.step_samples = 0
        self.positions = stats.Positions()
        self.detail: list[tuple[float, int, Any]] = []
        self.texts: dict[int, str] = {}
        self.seconds = 0.0

    # -- feeding (runsummary.summarise calls these) ------------------------------------------
    def record(self, step: int, rec: dict[str, Any]) -> None:
        if self.pick == "all":
            self._submit(step, rec)
            return
        key = _key(rec, self.pick)
        if key is None:
            return
        self.order += 1
        item = (key, -self.order, rec)
        if len(self.picked) < self.per_step:
            heapq.heappush(self.picked, item)
        elif item > self.picked[0]:
            heapq.heapreplace(self.picked, item)

    def step_done(self, step: int) -> None:
        for _, _, rec in sorted(self.picked, key=lambda x: (-x[0], -x[1])):
            self._submit(step, rec)
        self.picked = []
        while self.pending:
            self._fold_oldest()
        if self.step_samples:
            sig, filler = self.sig[self.step_from:], list(map(bool, self.filler[self.step_from:]))
            kl = self.kl[self.step_from:] if self.kl is not None else [None] * len(sig)
            self.steps.append(TeacherStep(
                step=step, sequences=self.step_samples,
                stats=stats.stats_of(sig, kl, self.ranks[self.step_from:], self.top_k),
                filler_share_signal=stats.filler_share(sig, filler) if self.dec.name else None))
        self.step_from, self.step_samples = len(self.sig), 0

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    # -- scoring ------------------------------------------------------------------------------
    def _submit(self, step: int, rec: dict[str, Any]) -> None:
        ids = [int(i) for i in rec["token_ids"]]
        # an endpoint is asked prime-rl's own body (prompt_logprobs 1: each token's log-prob and
        # rank); the top-k alternatives only for the samples shown (details())
        k = SCAN_K if self.teacher.kind == "endpoint" else self.top_k
        self.pending.append((step, rec, self.pool.submit(score, self.teacher, ids, k, self.student)))
        while len(self.pending) > IN_FLIGHT:
            self._fold_oldest()

    def _fold_oldest(self) -> None:
        step, rec, fut = self.pending.popleft()
        t0 = time.perf_counter()
        got = fut.result()  # a SpecError from the teacher ends the command: nothing is written
        self._fold(step, rec, got)
        self.seconds += time.perf_counter() - t0
        if self.progress is not None:
            self.progress("score", len(self.samples), None)

    def _fold(self, step: int, rec: dict[str, Any], got: Scores) -> None:
        ids, mask, trainer = rec["token_ids"], rec["loss_mask"], rec["trainer_logprobs"]
        at = [i for i in range(1, len(ids)) if mask[i] and trainer[i] is not None
              and got.logprobs[i] is not None]
        sig = [float(trainer[i]) - got.logprobs[i] for i in at]  # type: ignore[operator]
        ranks = [got.ranks[i] for i in at]
        filler = [stats.is_filler(self._text(int(ids[i]), got, i)) for i in at] if self.dec.name else []
        self.sig.extend(sig)
        self.ranks += ranks
        self.filler += bytes(filler) if filler else bytes(len(sig))
        kl: list[float | None] = [got.kl[i] for i in at] if got.kl is not None else [None] * len(sig)
        if self.kl is not None and got.kl is not None:
            self.kl.extend(kl)  # type: ignore[arg-type]
        else:
            self.kl = None  # one sample without it: no full KL in the totals
        self.positions.add(sig, kl)
        self.step_samples += 1
        s = stats.stats_of(sig, kl, ranks, self.top_k)
        self.samples.append(TeacherSample(
            step=step, rank=rec["rank"], index=rec["export_sequence_idx"], env=rec["env_name"],
            tokens=len(ids), picked_by=_picked_by(rec, self.pick), stats=s, shown=None))
        mean = s.mean_signal
        if mean is None or (len(self.detail) >= MAX_DETAIL and mean <= self.detail[0][0]):
            return
        # what its tokens need, kept (they are built once, by details(), for the samples that stay)
        shown = at[:MAX_SHOWN]
        lps = [got.logprobs[i] for i in shown]
        tops = None if self.teacher.kind == "endpoint" else [got.top(i) for i in shown]
        texts = [got.texts(i) for i in shown]
        self.order += 1
        item = (mean, -self.order, (rec, shown, sig, ranks, kl, len(self.samples) - 1, lps, tops, texts))
        if len(self.detail) < MAX_DETAIL:
            heapq.heappush(self.detail, item)
        else:
            heapq.heapreplace(self.detail, item)

    def details(self) -> list[Detail]:
        """The samples with the largest mean signal, largest first, token by token (an endpoint
        asked once more for each, with prompt_logprobs top_k, for the alternatives)."""
        kept = sorted(self.detail, key=lambda x: (-x[0], -x[1]))
        again = {n: self.pool.submit(score, self.teacher, [int(i) for i in p[0]["token_ids"]], self.top_k)
                 for n, (_, _, p) in enumerate(kept) if p[7] is None}
        out = []
        for n, (_, _, (rec, shown, sig, ranks, kl, sample, lps, tops, texts)) in enumerate(kept):
            if n in again:
                got = again[n].result()
                tops = [got.top(i) for i in shown]
            out.append(self._detail(rec, shown, sig, ranks, kl, sample, lps, tops or [], texts))
        return out

    def _text(self, tid: int, got: Scores | None, i: int, said: str | None = None) -> str:
        text = self.texts.get(tid)
        if text is None:
            said = said if got is None else got.texts(i)
            text = self.dec.token(tid) if self.dec.name else (said or f"⟨{tid}⟩")
            self.texts[tid] = text
        return text

    def _detail(self, rec: dict[str, Any], at: list[int], sig: list[float], ranks: list[int | None],
                kl: list[float | None], sample: int, lps: list[float | None], tops: list[list[Alt]],
                texts: list[str | None]) -> Detail:
        ids, trainer = rec["token_ids"], rec["trainer_logprobs"]
        tokens = [Token.model_construct(
            id=int(ids[i]), text=self._text(int(ids[i]), None, i, texts[k]),
            student_logprob=float(trainer[i]), teacher_logprob=lps[k], signal=sig[k], full_kl=kl[k],
            teacher_rank=ranks[k],
            teacher_top=[Alternative.model_construct(id=a.id, text=self.texts.get(a.id, a.text)
                                                     if a.id is not None else a.text, logprob=a.logprob)
                         for a in tops[k]])
            for k, i in enumerate(at)]
        first = at[0] if at else len(ids)
        comp = Completion.model_construct(
            prompt=0, sample=0, text=self.dec.text([int(i) for i in ids[first:]]),
            finished=len(at) == len(sig),  # shown whole (the page says "cut" past MAX_SHOWN tokens)
            tokens=tokens, stats=stats.stats(tokens, self.top_k))
        return Detail(comp, [int(i) for i in ids[:first]], sample)


def _key(rec: dict[str, Any], pick: str) -> float | None:
    """The pick's value of a record: its mean surprise, or minus its mean advantage (largest first)."""
    col = rec["trainer_logprobs"] if pick == "surprise" else rec["advantages"]
    vals = [float(v) for v, m in zip(col, rec["loss_mask"], strict=True) if m and v is not None]
    if not vals:
        return None
    return -sum(vals) / len(vals)


def _picked_by(rec: dict[str, Any], pick: str) -> float | None:
    key = None if pick == "all" else _key(rec, pick)
    return None if key is None else (key if pick == "surprise" else -key)
