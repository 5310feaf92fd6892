"""What results.json claims about the holdout and the verdicts, from what was really scored.

- The holdout: the recipes plan `eval.examples` tasks, but a small test split scores fewer.
  `scored` records the tasks each arm really scored and whether every comparison was paired
  (by task), and the top-level `holdout` text gives the scored count beside the planned one.
- The verdict: one rule, VERDICT_RULE, decides every comparison (whileai.results.stats.verdict);
  each comparison's `verdict_reason` says which part of the rule gave its verdict, with the
  numbers, so a CI that excludes 0 beside "within noise" explains itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

VERDICT_RULE = ("better or worse only when all three agree: the 95% bootstrap CI of the delta "
                "excludes 0, the permutation p is below alpha (0.05), and |delta| clears the noise "
                "band of repeated runs (when there is one); otherwise within noise")
_PLANNED = re.compile(r"(\d+) tasks\)$")


def reason(d: Any, alpha: float = 0.05) -> str:
    """Why a comparison (a whileai.results.document.Delta) got its verdict, by VERDICT_RULE."""
    if d.verdict in ("collapsed", "baseline collapsed"):
        return f"{d.verdict}: {', '.join(d.collapsed)} collapsed (health), whatever the statistics say"
    if d.ci95 is None or d.delta is None:
        return "insufficient data: no per-task rewards to compare"
    ci = f"the 95% CI [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]"
    excludes = d.ci95[0] > 0 or d.ci95[1] < 0
    p_ok = d.p_value is not None and d.p_value < alpha
    band_ok = d.noise_band is None or abs(d.delta) > d.noise_band
    parts = [f"{ci} {'excludes' if excludes else 'includes'} 0",
             f"p {d.p_text or d.p_value} {'<' if p_ok else 'is not below'} {alpha}"]
    if d.noise_band is not None:
        parts.append(f"|delta| {abs(d.delta):.3f} {'clears' if band_ok else 'is within'} the noise "
                     f"band {d.noise_band:.3f}")
    agree = excludes and p_ok and band_ok
    how = "all agree" if agree else "not all agree"
    return f"{d.statistical_verdict}: {'; '.join(parts)} ({how}; {'paired' if d.paired else 'unpaired'}, " \
           f"{d.n_tasks} tasks)"


def scored(arms: Mapping[str, Any], comparisons: list[Any], holdout: Any) -> tuple[Any, dict[str, Any]]:
    """(the holdout text with the scored count, the `scored` record)."""
    per_arm = {n: len(a.per_task) for n, a in arms.items() if a.state == "done"}
    counts = sorted(set(per_arm.values()))
    planned = None
    if isinstance(holdout, str) and (m := _PLANNED.search(holdout)):
        planned = int(m.group(1))
    record = {"planned": planned, "per_arm": per_arm,
              "paired": all(d.paired for d in comparisons) if comparisons else None}
    if planned is not None and counts and counts != [planned]:
        got = " to ".join(str(c) for c in (counts[0], counts[-1]) if c is not None) \
            if len(counts) > 1 else str(counts[0])
        holdout = _PLANNED.sub(f"{got} tasks scored of {planned} planned)", holdout)
    return holdout, record
