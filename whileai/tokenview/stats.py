"""Statistics of scored tokens: means, the top-1% share, by position, the most disagreed-with ids.

Pure Python (no numpy), so the JSON can be rebuilt and checked anywhere. Definitions are the
field descriptions in whileai.tokenview.document.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

from whileai.tokenview.document import Completion, Place, PositionBin, Stats, Token, TokenRow

TOP_SHARE = 0.01  # the "top 1%" of tokens
MAX_BINS = 16


def mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def top_share(values: Sequence[float], share: float = TOP_SHARE) -> float | None:
    """Sum of the largest ceil(share·n) of max(v, 0) (at least one) over the sum of all max(v, 0);
    None when that sum is zero."""
    total = sum(v for v in values if v > 0.0)
    if not values or total <= 0.0:
        return None
    k = max(1, math.ceil(share * len(values)))
    return sum(max(v, 0.0) for v in heapq.nlargest(k, values)) / total


def stats(tokens: Sequence[Token], top_k: int) -> Stats:
    return stats_of([t.signal for t in tokens], [t.full_kl for t in tokens],
                    [t.teacher_rank for t in tokens], top_k)


def stats_of(signal: Sequence[float], full: Sequence[float | None], ranked: Sequence[int | None],
             top_k: int) -> Stats:
    """Stats from the per-token columns (signal, full KL, teacher rank) of a set of tokens."""
    have_full = bool(full) and all(x is not None for x in full)
    kl = [float(x) for x in full if x is not None] if have_full else []
    return Stats(
        tokens=len(signal),
        mean_signal=mean(signal),
        sum_signal=sum(signal),
        top1_share_signal=top_share(signal),
        mean_full_kl=mean(kl) if have_full else None,
        top1_share_full_kl=top_share(kl) if have_full else None,
        teacher_top_k_hit=mean([1.0 if r is not None and r <= top_k else 0.0 for r in ranked]),
    )


def bin_width(longest: int, bins: int = MAX_BINS) -> int:
    """A round width (1, 2, 4, 5, 10, 20, 25, 50, ...) giving at most `bins` bins."""
    need = max(1, math.ceil(longest / bins))
    scale = 1
    while True:
        for step in (1, 2, 4, 5):
            if step * scale >= need:
                return step * scale
        scale *= 10


class Positions:
    """Signal (and full KL) summed by completion position, fed one completion at a time: memory
    is the longest completion's length, never the tokens."""

    def __init__(self) -> None:
        self.n: list[int] = []
        self.sig: list[float] = []
        self.kl: list[float] = []
        self.kl_missing = False

    def add(self, signal: Sequence[float], full: Sequence[float | None]) -> None:
        grow = len(signal) - len(self.n)
        if grow > 0:
            self.n += [0] * grow
            self.sig += [0.0] * grow
            self.kl += [0.0] * grow
        for i, (x, k) in enumerate(zip(signal, full, strict=True)):
            self.n[i] += 1
            self.sig[i] += x
            if k is None:
                self.kl_missing = True
            else:
                self.kl[i] += k

    def bins(self) -> list[PositionBin]:
        if not self.n:
            return []
        width = bin_width(len(self.n))
        out = []
        for start in range(0, len(self.n), width):
            n = sum(self.n[start:start + width])
            if not n:
                continue
            out.append(PositionBin(
                start=start, end=start + width, tokens=n,
                mean_signal=sum(self.sig[start:start + width]) / n,
                mean_full_kl=None if self.kl_missing else sum(self.kl[start:start + width]) / n))
        return out


def by_position(completions: Sequence[Completion]) -> list[PositionBin]:
    acc = Positions()
    for c in completions:
        acc.add([t.signal for t in c.tokens], [t.full_kl for t in c.tokens])
    return acc.bins()


def top_tokens(completions: Sequence[Completion], limit: int = 50) -> list[TokenRow]:
    """Token ids by total signal, largest first: where the teacher disagreed most, summed."""
    seen: dict[int, list[tuple[int, int, Token]]] = {}
    for ci, c in enumerate(completions):
        for pos, t in enumerate(c.tokens):
            seen.setdefault(t.id, []).append((ci, pos, t))
    rows = []
    for tid, places in seen.items():
        sig = [t.signal for _, _, t in places]
        full = [t.full_kl for _, _, t in places]
        ci, pos, worst = max(places, key=lambda p: p[2].signal)
        rows.append(TokenRow(
            id=tid, text=worst.text, count=len(places), mean_signal=sum(sig) / len(sig),
            sum_signal=sum(sig), max_signal=worst.signal,
            mean_full_kl=mean([float(x) for x in full if x is not None]) if all(
                x is not None for x in full) else None,
            worst=Place(completion=ci, position=pos),
        ))
    rows.sort(key=lambda r: (-r.sum_signal, r.id))
    return rows[:limit]


# Filler (Fu 2026, arXiv:2603.25562: signal piling up on filler late in long replies): a token
# whose text is whitespace or punctuation only, or one of these discourse words.
FILLER_WORDS = frozenset({"wait", "hmm", "so", "well", "okay", "ok", "um", "uh", "actually", "alright",
                          "right", "now", "let", "me", "maybe", "just", "basically", "like"})


def is_filler(text: str) -> bool:
    word = text.strip().lower()
    return not word or all(not ch.isalnum() for ch in word) or word in FILLER_WORDS


def filler_share(signal: Sequence[float], filler: Sequence[bool] | bytes | bytearray) -> float | None:
    """Sum of max(signal, 0) on filler tokens over that sum on all; None when it is zero."""
    total = math.fsum(x for x in signal if x > 0.0)
    if total <= 0.0:
        return None
    return math.fsum(x for x, f in zip(signal, filler, strict=True) if f and x > 0.0) / total
