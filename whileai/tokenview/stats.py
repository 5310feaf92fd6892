"""Statistics of scored tokens: means, the top-1% share, by position, the most disagreed-with ids.

Pure Python (no numpy), so the JSON can be rebuilt and checked anywhere. Definitions are the
field descriptions in whileai.tokenview.document.
"""

from __future__ import annotations

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
    pos = sorted((max(v, 0.0) for v in values), reverse=True)
    total = sum(pos)
    if not pos or total <= 0.0:
        return None
    k = max(1, math.ceil(share * len(pos)))
    return sum(pos[:k]) / total


def stats(tokens: Sequence[Token], top_k: int) -> Stats:
    signal = [t.signal for t in tokens]
    full = [t.full_kl for t in tokens]
    have_full = bool(full) and all(x is not None for x in full)
    kl = [float(x) for x in full if x is not None] if have_full else []
    ranked = [t.teacher_rank for t in tokens]
    return Stats(
        tokens=len(tokens),
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


def by_position(completions: Sequence[Completion]) -> list[PositionBin]:
    longest = max((len(c.tokens) for c in completions), default=0)
    if longest == 0:
        return []
    width = bin_width(longest)
    out = []
    for start in range(0, longest, width):
        toks = [t for c in completions for t in c.tokens[start:start + width]]
        if not toks:
            continue
        full = [t.full_kl for t in toks]
        out.append(PositionBin(
            start=start, end=start + width, tokens=len(toks),
            mean_signal=sum(t.signal for t in toks) / len(toks),
            mean_full_kl=mean([float(x) for x in full if x is not None]) if all(
                x is not None for x in full) else None,
        ))
    return out


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
