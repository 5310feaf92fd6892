"""results.json tells the truth: the tasks really scored beside the planned holdout, whether
pairing held (and the plot's label follows), and one documented rule behind every verdict,
named with the numbers that decided it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai.launch import ArmSpec, Metrics, plan
from whileai.results import build, plot, write_results
from whileai.results.plot import delta_label
from whileai.results.truth import VERDICT_RULE

pytest.importorskip("numpy", reason="the results extra (pip install -e '.[results]'): numpy")


def four_task_manifest(tmp_path: Path, shared: bool, n: int = 4):  # type: ignore[no-untyped-def]
    m = plan({n: ArmSpec(name=n, method=n, student="S", taskset="reverse-text") for n in ("grpo", "sft")},
             "t", tmp_path, meta={"holdout": "tasks.jsonl test split (32 tasks)"})
    rewards = {"grpo": [0.50, 0.52, 0.49, 0.51] * (n // 4), "sft": [0.45, 0.47, 0.44, 0.46] * (n // 4)}
    for arm, vals in rewards.items():
        a = m.arms[arm]
        a.state, a.backend, a.attempts = "done", "local", 1
        keys = [f"t{i}" for i in range(n)] if shared or arm == "grpo" else [f"u{i}" for i in range(n)]
        a.result = Metrics(per_task=dict(zip(keys, vals, strict=True)),
                           series={"eval_reward": [(0, sum(vals) / n)]})
    m.save()
    return m


def test_holdout_says_what_was_scored_and_whether_it_was_paired(tmp_path: Path) -> None:
    res = build(four_task_manifest(tmp_path, shared=False))
    assert res["holdout"] == "tasks.jsonl test split (4 tasks scored of 32 planned)"
    assert res["scored"] == {"planned": 32, "per_arm": {"grpo": 4, "sft": 4}, "paired": False}
    d = res["vs_grpo"]["sft"]
    assert d["paired"] is False and "unpaired" in d["verdict_reason"]
    write_results(tmp_path / "results.json", res)
    assert plot(res, tmp_path / "results.png").is_file()
    assert delta_label(res["comparisons"]) == "unpaired delta of mean eval reward (95% CI)"
    paired = build(four_task_manifest(tmp_path / "p", shared=True, n=32))["comparisons"]
    assert paired[0]["paired"] is True
    assert delta_label(paired) == "paired per-task delta in eval reward (95% CI)"


def test_every_verdict_names_the_one_rule_and_its_numbers(tmp_path: Path) -> None:
    res = build(four_task_manifest(tmp_path, shared=True))
    assert res["stats"]["verdict_rule"] == VERDICT_RULE
    d = res["vs_grpo"]["sft"]
    ci = d["ci95"]
    assert ci[1] < 0 and d["verdict_reason"].startswith(f"{d['verdict']}: the 95% CI [{ci[0]:+.3f}, "
                                                         f"{ci[1]:+.3f}] excludes 0")
    if d["verdict"] == "within noise":  # 4 pairs: the permutation test cannot reach 0.05
        assert "is not below 0.05" in d["verdict_reason"] and "not all agree" in d["verdict_reason"]
    assert json.dumps(res).count(VERDICT_RULE) == 1
