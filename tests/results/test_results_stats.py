"""The statistics against independent computations."""

from __future__ import annotations

import itertools
import math

import pytest

from whileai.results import stats

np = pytest.importorskip("numpy", reason="the results extra (pip install -e '.[results]'): numpy")
sps = pytest.importorskip("scipy.stats", reason="the results extra (pip install -e '.[results]'): scipy")


def test_sign_flip_p_matches_exact_enumeration() -> None:
    a = np.array([0.9, 0.7, 0.65, 0.8, 0.4, 0.75])
    b = np.array([0.6, 0.72, 0.5, 0.55, 0.45, 0.5])
    d = a - b
    obs = abs(d.mean())
    flips = [np.mean(d * np.array(s)) for s in itertools.product((1, -1), repeat=len(d))]
    exact = sum(abs(f) >= obs - 1e-12 for f in flips) / len(flips)
    res = stats.paired_delta(a, b)
    assert res.p_value == pytest.approx(exact)
    assert res.delta == pytest.approx(d.mean()) and res.paired and res.n_tasks == 6


def test_bootstrap_ci_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0.3, 0.9, 40)
    b = a - rng.normal(0.05, 0.1, 40)
    d = a - b
    res = stats.paired_delta(a, b, draws=2000, seed=0)
    boot = np.random.default_rng(123)
    means = np.array([d[boot.integers(0, len(d), len(d))].mean() for _ in range(20000)])
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert res.ci95 is not None
    se = d.std(ddof=1) / math.sqrt(len(d))
    assert res.ci95[0] == pytest.approx(lo, abs=0.15 * se)
    assert res.ci95[1] == pytest.approx(hi, abs=0.15 * se)
    assert stats.paired_delta(a, b, seed=0) == res  # fixed seed: reproducible


def test_ci_narrows_as_tasks_grow() -> None:
    rng = np.random.default_rng(7)
    widths = []
    for n in (10, 40, 160, 640):
        b = rng.uniform(0, 1, n)
        a = b + rng.normal(0.05, 0.2, n)
        ci = stats.paired_delta(a, b).ci95
        assert ci is not None
        widths.append(ci[1] - ci[0])
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < widths[0] / 4


def test_compare_pairs_by_task_and_falls_back() -> None:
    a = {f"t{i}": 0.5 + 0.01 * i for i in range(6)}
    b = {f"t{i}": 0.4 + 0.01 * i for i in range(6)} | {"extra": 0.0}
    res = stats.compare(a, b)
    assert res.paired and res.n_tasks == 6 and res.delta == pytest.approx(0.1)
    assert any("only one arm" in w for w in res.warnings)
    few = stats.compare({"x": 0.9, "y": 0.8, "z": 0.7}, {"x": 0.1, "q": 0.2, "r": 0.3})
    assert not few.paired and any("unpaired" in w for w in few.warnings)
    ind = sps.permutation_test(([0.7, 0.8, 0.9], [0.1, 0.2, 0.3]),
                               lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                               permutation_type="independent", n_resamples=9999)
    assert few.p_value == pytest.approx(ind.pvalue)  # 20 splits: exact either way
    assert few.delta == pytest.approx(0.6)


def test_noise_band_formula() -> None:
    ra, rb = [0.50, 0.54, 0.52], [0.40, 0.45]
    band = stats.noise_band(ra, rb)
    assert band is not None and band.df == 3
    pooled = (np.var(ra, ddof=1) * 2 + np.var(rb, ddof=1) * 1) / 3
    expect = sps.t.ppf(0.975, 3) * math.sqrt(pooled) * math.sqrt(1 / 3 + 1 / 2)
    assert band.band == pytest.approx(expect)
    assert stats.noise_band([0.5], [0.4]) is None


def test_verdicts() -> None:
    band = stats.NoiseBand(band=0.05, run_std=0.02, df=2, n_a=2, n_b=2)
    assert stats.verdict(0.1, (0.02, 0.2), None) == "better"
    assert stats.verdict(-0.1, (-0.2, -0.01), None) == "worse"
    assert stats.verdict(0.1, (-0.02, 0.2), None) == "within noise"
    assert stats.verdict(0.04, (0.02, 0.06), band) == "within noise"
    assert stats.verdict(0.1, None, None) == "insufficient data"
    # a CI that excludes 0 is not enough when the sign-flip test does not agree
    assert stats.verdict(-0.1, (-0.2, -0.01), None, p_value=0.25) == "within noise"
    assert stats.verdict(-0.1, (-0.2, -0.01), None, p_value=0.01) == "worse"


def test_degenerate_inputs() -> None:
    same = stats.paired_delta([0.5] * 6, [0.3] * 6)
    assert same.ci95 == pytest.approx((0.2, 0.2))
    one = stats.paired_delta([0.5], [0.3])
    assert one.ci95 is None and one.p_value is None
    empty = stats.compare({}, {"a": 1.0})
    assert empty.ci95 is None and math.isnan(empty.delta)
