"""Collapse and instability in a run's per-step series: named findings, as data.

    check({"eval_reward": [(0, .1), (10, 0.), (20, 0.), (30, 0.), (40, 0.)]})
    # [HealthFinding(id="eval-reward-collapsed", series="eval_reward", step=10, collapse=True, ...)]

A finding with `collapse` true makes the comparison's verdict "collapsed" (not only "worse").
The rules are a table (RULES) that docs/results.md lists. Pure: no numpy.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import NamedTuple

Point = tuple[int, float]
SPIKE = 100.0  # "orders of magnitude": a loss or KL this many times its earlier typical size
ENTROPY_FLOOR = 0.1  # entropy ending below this fraction of its first value has collapsed
EPS = 1e-9


class HealthRule(NamedTuple):
    id: str
    collapse: bool
    condition: str


RULES: tuple[HealthRule, ...] = (
    HealthRule("eval-reward-collapsed", True, "eval reward is constant over the last half of the run "
         "(at least two evaluations) below its own earlier best: it fell (e.g. to 0) and stayed"),
    HealthRule("eval-reward-flat", False, "eval reward is constant over the last half of the run and "
         "never was higher: the arm may not have learned at all"),
    HealthRule("non-finite", True, "a logged series (loss, KL, reward, entropy) holds NaN or infinity"),
    HealthRule("diverged", True, f"a loss or KL ends at least {SPIKE:g}x above the median of its "
         "earlier values (three or more)"),
    HealthRule("spike", False, f"a loss or KL jumps at least {SPIKE:g}x above the median of its earlier "
         "values, then comes back"),
    HealthRule("entropy-collapse", True, f"policy entropy ends below {ENTROPY_FLOOR:g} of its first "
         "logged value"),
)
COLLAPSE = {r.id: r.collapse for r in RULES}


class HealthFinding(NamedTuple):
    id: str
    series: str
    step: int | None
    collapse: bool
    message: str


def _finding(rule: str, series: str, step: int | None, message: str) -> HealthFinding:
    return HealthFinding(rule, series, step, COLLAPSE[rule], message)


def eval_flat(points: Sequence[Point]) -> HealthFinding | None:
    """Constant eval reward over the last half of the steps."""
    pts = [(s, v) for s, v in points if _finite(v)]
    if len(pts) < 3:
        return None
    last = pts[-1][0]
    tail = [(s, v) for s, v in pts if s >= pts[0][0] + (last - pts[0][0]) / 2]
    if len(tail) < 2 or max(v for _, v in tail) - min(v for _, v in tail) > EPS:
        return None
    value = tail[-1][1]
    start = next(i for i, (_, v) in enumerate(pts) if all(abs(w - value) <= EPS for _, w in pts[i:]))
    since = pts[start][0]
    best = max(v for _, v in pts[:start]) if start else value
    if value < best - EPS:
        return _finding("eval-reward-collapsed", "eval_reward", since,
                        f"eval reward stuck at {value:.3f} from step {since} to {last} "
                        f"(earlier best {best:.3f})")
    return _finding("eval-reward-flat", "eval_reward", since,
                    f"eval reward unchanged at {value:.3f} from step {since} to {last}, never "
                    "higher: did it learn?")


def non_finite(name: str, points: Sequence[Point]) -> HealthFinding | None:
    bad = [(s, v) for s, v in points if not _finite(v)]
    if not bad:
        return None
    return _finding("non-finite", name, bad[0][0], f"{name} is {bad[0][1]} at step {bad[0][0]} "
                    f"({len(bad)} of {len(points)} points not finite)")


def jumps(name: str, points: Sequence[Point]) -> HealthFinding | None:
    """A loss or KL far above the median of its earlier magnitudes: spike, or diverged if it ends there."""
    pts = [(s, abs(v)) for s, v in points if _finite(v)]
    first: tuple[int, float, float] | None = None
    for i in range(3, len(pts)):
        typical = statistics.median(v for _, v in pts[:i])
        if typical > EPS and pts[i][1] >= SPIKE * typical:
            first = (pts[i][0], pts[i][1], typical)
            break
    if first is None:
        return None
    step, value, typical = first
    ends_high = pts[-1][1] >= SPIKE * typical
    rule = "diverged" if ends_high else "spike"
    tail = f", and ends at {pts[-1][1]:.3g}" if ends_high else ", then comes back"
    return _finding(rule, name, step, f"{name} jumps to {value:.3g} at step {step}, "
                    f"{value / typical:.0f}x its earlier median {typical:.3g}{tail}")


def entropy(points: Sequence[Point]) -> HealthFinding | None:
    pts = [(s, v) for s, v in points if _finite(v)]
    if len(pts) < 2 or pts[0][1] <= EPS or pts[-1][1] >= ENTROPY_FLOOR * pts[0][1]:
        return None
    return _finding("entropy-collapse", "entropy", pts[-1][0], f"entropy falls from "
                    f"{pts[0][1]:.3g} (step {pts[0][0]}) to {pts[-1][1]:.3g} (step {pts[-1][0]})")


def check(series: Mapping[str, Sequence[Point]]) -> list[HealthFinding]:
    """Every finding for one run, in RULES order per series."""
    out: list[HealthFinding] = []
    for name, points in sorted(series.items()):
        found = [non_finite(name, points)]
        if name == "eval_reward":
            found.append(eval_flat(points))
        if "loss" in name or "kl" in name:
            found.append(jumps(name, points))
        if name == "entropy":
            found.append(entropy(points))
        out += [f for f in found if f is not None]
    return out


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


__all__ = ["COLLAPSE", "RULES", "HealthFinding", "HealthRule", "check"]
