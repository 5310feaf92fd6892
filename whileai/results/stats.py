"""Paired comparison of an arm against the GRPO baseline: pure functions over arrays.

- Pairing: per task, on the same holdout (mean over repeated runs first).
- CI: percentile bootstrap, 95 %, 2000 draws, fixed seed (`scipy.stats.bootstrap`, paired).
- p-value: sign-flip permutation test on the paired differences (`scipy.stats.permutation_test`,
  permutation_type='samples'); exact enumeration when 2^n <= n_resamples, else
  (extreme + 1) / (n_resamples + 1) per side, doubled (two-sided): its floor is
  2 / (PERMUTATIONS + 1), reported as such (`p_floor`, `p_text`), never as a small number.
- Fewer than MIN_PAIRS shared tasks: an unpaired comparison (independent bootstrap and
  permutation) with a warning.
- Noise band when an arm or the baseline has repeated runs: t(df) · run_std · √(1/n_a + 1/n_b),
  run_std pooled over both groups' per-run means, df = Σ(n_g − 1).

numpy and scipy (the `results` extra) are imported inside the functions.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

DRAWS = 2000
SEED = 0
PERMUTATIONS = 9999
MIN_PAIRS = 5
Verdict = Literal["better", "worse", "within noise", "insufficient data"]


@dataclass(frozen=True)
class DeltaStats:
    mean_a: float
    mean_b: float
    delta: float
    ci95: tuple[float, float] | None
    p_value: float | None
    n_tasks: int
    paired: bool
    warnings: tuple[str, ...] = field(default_factory=tuple)
    permutations: int = 0  # resamples the p-value was computed from (exact: all of them)
    exact: bool = False

    @property
    def p_floor(self) -> float | None:
        """The smallest p-value this test can return (two-sided)."""
        if not self.permutations:
            return None
        return min(1.0, 2 / self.permutations if self.exact else 2 / (self.permutations + 1))

    @property
    def p_text(self) -> str | None:
        """p as a person should read it: at the floor, '<= 2/N' with how N came about."""
        if self.p_value is None:
            return None
        floor = self.p_floor
        if floor is not None and self.p_value <= floor * (1 + 1e-9):
            if self.exact:
                return f"= 2/{self.permutations} (the floor: all {self.permutations} permutations enumerated)"
            return (f"<= 2/{self.permutations + 1} (the floor of {self.permutations} random "
                    "permutations: none was as extreme)")
        return f"{self.p_value:.4g}"


@dataclass(frozen=True)
class NoiseBand:
    band: float
    run_std: float
    df: int
    n_a: int
    n_b: int


def _rng(fn: Any, seed: int) -> dict[str, Any]:
    import numpy as np

    key = "rng" if "rng" in inspect.signature(fn).parameters else "random_state"
    return {key: np.random.default_rng(seed)}


def _mean_diff(x: Any, y: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _mean(x: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.mean(x, axis=axis)


def paired_delta(a: Sequence[float], b: Sequence[float], *, draws: int = DRAWS,
                 seed: int = SEED) -> DeltaStats:
    """a[i] and b[i] are the same task under two arms."""
    import numpy as np
    from scipy import stats

    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired samples must be 1-D and of equal length")
    d = x - y
    n = len(d)
    out = DeltaStats(float(x.mean()), float(y.mean()), float(d.mean()), None, None, n, True)
    if n < 2:
        return replace(out, warnings=("fewer than 2 tasks",))
    if np.ptp(d) == 0:
        ci: tuple[float, float] = (float(d[0]), float(d[0]))
    else:
        res = stats.bootstrap((x, y), _mean_diff, paired=True, vectorized=True, n_resamples=draws,
                              method="percentile", confidence_level=0.95,
                              **_rng(stats.bootstrap, seed))
        ci = (float(res.confidence_interval.low), float(res.confidence_interval.high))
    perm = stats.permutation_test((d,), _mean, permutation_type="samples", vectorized=True,
                                  n_resamples=PERMUTATIONS, alternative="two-sided",
                                  **_rng(stats.permutation_test, seed))
    exact = 2 ** n <= PERMUTATIONS
    return replace(out, ci95=ci, p_value=float(perm.pvalue), exact=exact,
                   permutations=2 ** n if exact else PERMUTATIONS)


def unpaired_delta(a: Sequence[float], b: Sequence[float], *, draws: int = DRAWS,
                   seed: int = SEED) -> DeltaStats:
    """Independent samples (no task pairing)."""
    import numpy as np
    from scipy import stats

    x, y = np.asarray(a, float), np.asarray(b, float)
    warn = ("unpaired comparison: the arms share fewer than "
            f"{MIN_PAIRS} tasks, so per-task pairing was not possible",)
    if len(x) == 0 or len(y) == 0:
        return DeltaStats(math.nan, math.nan, math.nan, None, None, 0, False,
                          warn + ("an arm has no per-task results",))
    out = DeltaStats(float(x.mean()), float(y.mean()), float(x.mean() - y.mean()), None, None,
                     min(len(x), len(y)), False, warn)
    if len(x) < 2 or len(y) < 2:
        return out
    res = stats.bootstrap((x, y), _mean_diff, vectorized=True, n_resamples=draws,
                          method="percentile", **_rng(stats.bootstrap, seed))
    perm = stats.permutation_test((x, y), _mean_diff, permutation_type="independent",
                                  vectorized=True, n_resamples=PERMUTATIONS,
                                  **_rng(stats.permutation_test, seed))
    ci = (float(res.confidence_interval.low), float(res.confidence_interval.high))
    total = math.comb(len(x) + len(y), len(x))
    exact = total <= PERMUTATIONS
    return replace(out, ci95=ci, p_value=float(perm.pvalue), exact=exact,
                   permutations=total if exact else PERMUTATIONS)


def compare(a: Mapping[str, float], b: Mapping[str, float], *, draws: int = DRAWS,
            seed: int = SEED, min_pairs: int = MIN_PAIRS) -> DeltaStats:
    """Per-task rewards of arm a vs baseline b: paired on shared tasks, else unpaired."""
    shared = sorted(set(a) & set(b))
    if len(shared) >= min_pairs:
        res = paired_delta([a[t] for t in shared], [b[t] for t in shared], draws=draws, seed=seed)
        dropped = len(set(a) | set(b)) - len(shared)
        if dropped:
            note = f"{dropped} task(s) present in only one arm were left out of the pairing"
            res = replace(res, warnings=res.warnings + (note,))
        return res
    return unpaired_delta([a[t] for t in sorted(a)], [b[t] for t in sorted(b)],
                          draws=draws, seed=seed)


def noise_band(runs_a: Sequence[float], runs_b: Sequence[float]) -> NoiseBand | None:
    """From per-run mean rewards of each group; None without any repeated run."""
    import numpy as np
    from scipy import stats

    groups = [np.asarray(g, float) for g in (runs_a, runs_b)]
    df = sum(len(g) - 1 for g in groups)
    if df < 1:
        return None
    pooled = sum(float(((g - g.mean()) ** 2).sum()) for g in groups if len(g) > 1) / df
    run_std = math.sqrt(pooled)
    n_a, n_b = len(groups[0]), len(groups[1])
    band = float(stats.t.ppf(0.975, df)) * run_std * math.sqrt(1 / n_a + 1 / n_b)
    return NoiseBand(band=band, run_std=run_std, df=df, n_a=n_a, n_b=n_b)


def verdict(delta: float, ci95: tuple[float, float] | None, band: NoiseBand | None,
            p_value: float | None = None, alpha: float = 0.05) -> Verdict:
    """better / worse when the CI excludes 0, the permutation test agrees (p < alpha) and
    |delta| clears the noise band; otherwise within noise."""
    if ci95 is None or math.isnan(delta):
        return "insufficient data"
    if band is not None and abs(delta) <= band.band:
        return "within noise"
    if p_value is not None and not p_value < alpha:
        return "within noise"
    if ci95[0] > 0:
        return "better"
    if ci95[1] < 0:
        return "worse"
    return "within noise"
