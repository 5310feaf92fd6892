"""Collapse and instability findings, and how they reach results.json, the verdict and the plot."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest

from whileai.launch import ArmSpec, Metrics, plan
from whileai.results import build, plot, write_results
from whileai.results.health import RULES, check

pytest.importorskip("numpy", reason="the results extra (pip install -e '.[results]'): numpy")

ROOT = Path(__file__).resolve().parents[2]
FLAT = [(0, 0.22), (10, 0.0), (20, 0.0), (30, 0.0), (40, 0.0)]


def ids(series: dict[str, list[tuple[int, float]]]) -> list[str]:
    return [f.id for f in check(series)]


def test_eval_reward_that_falls_and_stays_has_collapsed() -> None:
    (f,) = check({"eval_reward": FLAT})
    assert f.id == "eval-reward-collapsed" and f.collapse and f.step == 10
    assert "0.000 from step 10 to 40" in f.message and "0.220" in f.message


def test_flat_from_the_start_is_flat_not_collapsed() -> None:
    (f,) = check({"eval_reward": [(0, 0.0), (5, 0.0), (10, 0.0)]})
    assert f.id == "eval-reward-flat" and not f.collapse
    assert ids({"eval_reward": [(0, 0.1), (10, 0.2), (20, 0.2), (30, 0.25)]}) == []
    assert ids({"eval_reward": [(0, 0.1), (10, 0.0)]}) == []  # too few evaluations to say


def test_non_finite_spikes_and_divergence() -> None:
    assert ids({"teacher_kl": [(1, 0.5), (2, math.nan), (3, 0.4)]}) == ["non-finite"]
    assert ids({"train_loss": [(1, 0.5), (2, math.inf)]}) == ["non-finite"]
    spike = [(1, 0.5), (2, 0.4), (3, 0.6), (4, 80.0), (5, 0.5)]
    assert ids({"train_loss": spike}) == ["spike"]
    (f,) = check({"teacher_kl": spike[:4] + [(5, 900.0)]})
    assert f.id == "diverged" and f.collapse and f.step == 4 and "160x" in f.message
    assert ids({"train_reward": spike}) == []  # rewards are not losses


def test_entropy_collapse() -> None:
    (f,) = check({"entropy": [(1, 2.0), (2, 1.0), (3, 0.05)]})
    assert f.id == "entropy-collapse" and f.collapse
    assert ids({"entropy": [(1, 2.0), (2, 1.5)]}) == []
    assert {r.id for r in RULES} >= {"eval-reward-collapsed", "non-finite", "diverged", "entropy-collapse"}


def manifest(tmp_path: Path, series: dict[str, dict[str, list[tuple[int, float]]]]) -> object:
    m = plan({n: ArmSpec(name=n, method=n.split("@")[0]) for n in series}, "h", tmp_path,
             meta={"holdout": "h (8 tasks)", "metric": "m"})
    for i, (n, s) in enumerate(series.items()):
        m.arms[n].state = "done"
        m.arms[n].result = Metrics(series=s, per_task={f"t{k}": 0.1 * k + 0.01 * i for k in range(8)})
    return m


def test_collapse_is_the_verdict_and_non_finite_points_become_null(tmp_path: Path) -> None:
    m = manifest(tmp_path, {"grpo": {"eval_reward": [(0, 0.2), (10, 0.3), (20, 0.3), (30, 0.31)]},
                            "opsd": {"eval_reward": FLAT, "teacher_kl": [(1, 0.3), (2, math.nan)]},
                            "opd": {"eval_reward": [(0, 0.2), (20, 0.25), (40, 0.3)]}})
    res = build(m)  # type: ignore[arg-type]
    opsd = res["vs_grpo"]["opsd"]
    assert opsd["verdict"] == "collapsed" and opsd["collapsed"] == ["opsd"]
    assert opsd["statistical_verdict"] in ("better", "worse", "within noise")
    assert res["vs_grpo"]["opd"]["verdict"] != "collapsed"
    health = {h["id"] for h in res["arms"]["opsd"]["health"]}
    assert health == {"eval-reward-collapsed", "non-finite"}
    assert res["arms"]["opsd"]["series"]["teacher_kl"] == [[1, 0.3], [2, None]]
    assert any("opsd: eval-reward-collapsed" in w for w in res["warnings"])
    path = write_results(tmp_path / "r.json", res)  # strict JSON: NaN would raise here
    jsonschema.validate(json.loads(path.read_text()), json.loads(
        (ROOT / "schemas" / "results.schema.json").read_text()))
    assert plot(res, tmp_path / "r.png", xs=("step", "rollouts")).stat().st_size > 10_000


def test_a_collapsed_baseline_is_named(tmp_path: Path) -> None:
    m = manifest(tmp_path, {"grpo": {"eval_reward": FLAT}, "opd": {"eval_reward": [(0, 0.2), (40, 0.3)]}})
    assert build(m)["vs_grpo"]["opd"]["verdict"] == "baseline collapsed"  # type: ignore[arg-type]
