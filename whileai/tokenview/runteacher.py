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
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

from whileai.tokenview import stats
from whileai.tokenview.document import Alternative, Completion, Token
from whileai.tokenview.runsummary import MAX_SHOWN, Decoder
from whileai.tokenview.scoring import Model
from whileai.tokenview.teacher import Scores, score
from whileai.tokenview.teacherdocument import TeacherSample, TeacherStep

MAX_DETAIL = 24  # samples shown token by token
IN_FLIGHT = 8  # samples being scored at once (prime-rl's orchestrator gathers a whole episode's)
PICKS = ("surprise", "advantage", "all")


class Detail(NamedTuple):
    """A sample kept token by token."""

    mean: float
    order: int
    completion: Completion
    context_ids: list[int]
    sample: int  # its index in Scorer.samples


class Scorer:
    def __init__(self, teacher: Model, dec: Decoder, *, pick: str, per_step: int, top_k: int,
                 progress: Any = None) -> None:
        self.teacher, self.dec, self.pick, self.per_step, self.top_k = teacher, dec, pick, per_step, top_k
        self.progress = progress
        self.pool = ThreadPoolExecutor(max_workers=IN_FLIGHT)
        self.pending: deque[tuple[int, dict[str, Any], Future[Scores]]] = deque()
        self.picked: list[tuple[float, int, dict[str, Any]]] = []
        self.order = 0
        self.samples: list[TeacherSample] = []
        self.steps: list[TeacherStep] = []
        self.sig: list[float] = []  # every scored token's signal, teacher rank and filler flag
        self.ranks: list[int | None] = []
        self.filler: list[bool] = []
        self.step_from = 0  # where the current step's tokens start in those lists
        self.step_samples = 0
        self.positions = stats.Positions()
        self.detail: list[tuple[float, int, Detail]] = []
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
            sig, filler = self.sig[self.step_from:], self.filler[self.step_from:]
            self.steps.append(TeacherStep(
                step=step, sequences=self.step_samples,
                stats=stats.stats_of(sig, [None] * len(sig), self.ranks[self.step_from:], self.top_k),
                filler_share_signal=stats.filler_share(sig, filler) if self.dec.name else None))
        self.step_from, self.step_samples = len(self.sig), 0

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    # -- scoring ------------------------------------------------------------------------------
    def _submit(self, step: int, rec: dict[str, Any]) -> None:
        ids = [int(i) for i in rec["token_ids"]]
        self.pending.append((step, rec, self.pool.submit(score, self.teacher, ids, self.top_k)))
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
        self.sig += sig
        self.ranks += ranks
        self.filler += filler or [False] * len(sig)
        self.positions.add(sig, [None] * len(sig))
        self.step_samples += 1
        s = stats.stats_of(sig, [None] * len(sig), ranks, self.top_k)
        adv = [float(a) for a, m in zip(rec["advantages"], mask, strict=True) if m and a is not None]
        self.samples.append(TeacherSample(
            step=step, rank=rec["rank"], index=rec["export_sequence_idx"], env=rec["env_name"],
            tokens=len(ids), picked_by=_picked_by(rec, self.pick),
            stats=s, shown=None))
        mean = s.mean_signal
        if mean is None or (len(self.detail) >= MAX_DETAIL and mean <= self.detail[0][0]):
            return
        d = self._detail(rec, got, at[:MAX_SHOWN], sig, ranks, mean)
        item = (mean, -d.order, d)
        if len(self.detail) < MAX_DETAIL:
            heapq.heappush(self.detail, item)
        else:
            heapq.heapreplace(self.detail, item)

    def _text(self, tid: int, got: Scores, i: int) -> str:
        text = self.texts.get(tid)
        if text is None:
            text = self.dec.token(tid) if self.dec.name else (got.texts(i) or f"⟨{tid}⟩")
            self.texts[tid] = text
        return text

    def _detail(self, rec: dict[str, Any], got: Scores, at: list[int], sig: list[float],
                ranks: list[int | None], mean: float) -> Detail:
        ids, trainer = rec["token_ids"], rec["trainer_logprobs"]
        tokens = [Token.model_construct(
            id=int(ids[i]), text=self._text(int(ids[i]), got, i), student_logprob=float(trainer[i]),
            teacher_logprob=got.logprobs[i], signal=sig[k], full_kl=None, teacher_rank=ranks[k],
            teacher_top=[Alternative.model_construct(id=a.id, text=self.texts.get(a.id, a.text)
                                                     if a.id is not None else a.text, logprob=a.logprob)
                         for a in got.top(i)])
            for k, i in enumerate(at)]
        first = at[0] if at else len(ids)
        self.order += 1
        comp = Completion.model_construct(
            prompt=0, sample=0, text=self.dec.text([int(i) for i in ids[first:]]),
            finished=False, tokens=tokens, stats=stats.stats(tokens, self.top_k))
        return Detail(mean, self.order, comp, [int(i) for i in ids[:first]], len(self.samples) - 1)


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
