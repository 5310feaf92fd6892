"""results.json from a manifest: schema, deltas vs GRPO, repeats, failures, the plot."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from whileai.cli.schemas import dumps
from whileai.launch import ArmSpec, Manifest, Metrics, plan
from whileai.results import build, plot, write_results
from whileai.results.stats import noise_band, paired_delta

np = pytest.importorskip("numpy", reason="the results extra (pip install -e '.[results]'): numpy")

ROOT = Path(__file__).resolve().parents[2]


def manifest(tmp_path: Path, n_tasks: int = 12) -> Manifest:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, n_tasks)
    shifts = {"grpo": 0.0, "grpo@2": 0.01, "opd": 0.15, "opd@2": 0.13, "opsd": 0.0,
              "broken": 0.0}
    names = list(shifts)
    m = plan({n: ArmSpec(name=n, method=n.split("@")[0].replace("broken", "opsd"),
                         files={"rl.toml": f"# {n}\n"}, main="rl.toml",
                         reads=[{"field": "steps", "path": "max_steps", "value": 20, "note": ""}],
                         student="S", taskset="reverse-text", steps=20) for n in names},
             "tag1", tmp_path, meta={"holdout": "reverse-text (eval split)"})
    for n, s in shifts.items():
        a = m.arms[n]
        a.backend, a.handle, a.attempts = "local", a.dir, 1
        if n == "broken":
            a.state, a.error = "failed", "killed by signal 9 (SIGKILL) without writing metrics"
            continue
        tasks = base + s + rng.normal(0, 0.01, n_tasks)
        a.state = "done"
        a.result = Metrics(series={"eval_reward": [(0, 0.3), (20, float(tasks.mean()))],
                                   "teacher_kl": [(1, 0.5)] if n.startswith("opd") else []},
                           per_task={f"t{i}": float(v) for i, v in enumerate(tasks)},
                           returncode=0, seconds=60.0, gpu="H100 x2", image="img")
    m.save()
    return m


def test_build_validates_and_compares(tmp_path: Path) -> None:
    m = manifest(tmp_path)
    res = build(m)
    schema = json.loads((ROOT / "schemas" / "results.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(res)
    assert res["tag"] == "tag1" and res["student"] == "S" and res["holdout"].startswith("reverse")
    assert res["versions"]["prime-rl"].startswith("559b4477")
    assert res["baseline"] == "grpo" and set(res["vs_grpo"]) == {"opd", "opsd"}
    opd, opsd = res["vs_grpo"]["opd"], res["vs_grpo"]["opsd"]
    assert opd["verdict"] == "better" and opd["paired"] and opd["n_tasks"] == 12
    assert opd["noise_band"] is not None and opd["within_noise"] is False
    assert opsd["verdict"] == "within noise"
    assert res["noise"]["grpo"]["runs"] == ["grpo", "grpo@2"]
    arm = res["arms"]["opd@2"]
    assert arm["config"]["text"] == "# opd@2\n" and arm["config"]["reads"][0]["value"] == 20
    assert arm["series"]["teacher_kl"] == [[1, 0.5]] and arm["gpu"] == "H100 x2"
    assert arm["delta"] == opd
    assert res["arms"]["broken"]["state"] == "failed" and res["arms"]["broken"]["delta"] is None
    assert any("broken is failed: killed by signal 9" in w for w in res["warnings"])


def test_delta_agrees_with_direct_computation(tmp_path: Path) -> None:
    m = manifest(tmp_path)
    res = build(m)

    def tasks(n: str) -> dict[str, float]:
        r = m.arms[n].result
        assert r is not None
        return r.per_task

    keys = sorted(tasks("opd"))
    a = [(tasks("opd")[k] + tasks("opd@2")[k]) / 2 for k in keys]
    b = [(tasks("grpo")[k] + tasks("grpo@2")[k]) / 2 for k in keys]
    direct = paired_delta(a, b)
    got = res["vs_grpo"]["opd"]
    assert got["delta"] == direct.delta and tuple(got["ci95"]) == direct.ci95
    band = noise_band([float(np.mean(list(tasks(n).values()))) for n in ("opd", "opd@2")],
                      [float(np.mean(list(tasks(n).values()))) for n in ("grpo", "grpo@2")])
    assert band is not None and got["noise_band"] == pytest.approx(band.band, rel=1e-12)


def test_deterministic_output(tmp_path: Path) -> None:
    m = manifest(tmp_path)
    p1 = write_results(tmp_path / "a.json", build(m)).read_text()
    p2 = write_results(tmp_path / "b.json", build(m)).read_text()
    assert p1 == p2


def test_no_grpo_arm_warns_rule_17(tmp_path: Path) -> None:
    m = plan({"opd": ArmSpec(name="opd", method="opd")}, "t", tmp_path)
    m.arms["opd"].state = "done"
    m.arms["opd"].result = Metrics(per_task={"a": 1.0})
    res = build(m)
    assert res["vs_grpo"] == {} and any("docs/research.md R17" in w for w in res["warnings"])


def test_without_per_task_rewards(tmp_path: Path) -> None:
    m = plan({n: ArmSpec(name=n, method=n) for n in ("grpo", "opd")}, "t", tmp_path)
    for n, v in (("grpo", 0.4), ("opd", 0.5)):
        m.arms[n].state = "done"
        m.arms[n].result = Metrics(series={"eval_reward": [(5, v)]})
    d = build(m)["vs_grpo"]["opd"]
    assert d["verdict"] == "insufficient data" and abs(d["delta"] - 0.1) < 1e-12


def test_schema_file_is_current() -> None:
    assert (ROOT / "schemas" / "results.schema.json").read_text() == dumps("results")


def test_plot_writes_png(tmp_path: Path) -> None:
    out = plot(build(manifest(tmp_path)), tmp_path / "r.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_stats_record_resampling_counts_and_the_noise_band(tmp_path: Path) -> None:
    res = build(manifest(tmp_path))
    opd = res["vs_grpo"]["opd"]
    assert opd["permutations"] == 2 ** 12 and opd["permutation_exact"]  # 12 tasks: enumerated
    assert opd["p_floor"] == pytest.approx(2 / 2 ** 12) and opd["p_text"]
    assert res["stats"]["bootstrap_draws"] == 2000 and res["stats"]["permutations"] == 9999
    assert res["stats"]["noise_band"].startswith("from 2 runs")
    assert res["comparisons"] == list(res["vs_grpo"].values())
    assert [(d["arm"], d["baseline"]) for d in res["comparisons"]] == [("opd", "grpo"), ("opsd", "grpo")]
    big = manifest(tmp_path / "big", n_tasks=40)
    for n in ("grpo@2", "opd@2"):
        del big.arms[n]
    d = build(big)["vs_grpo"]["opd"]
    assert d["permutations"] == 9999 and not d["permutation_exact"] and d["noise_band"] is None
    assert d["p_value"] == pytest.approx(2 / 10000) and d["p_text"].startswith("<= 2/10000")
    assert build(big)["stats"]["noise_band"].startswith("none")


def test_extra_pairs_are_compared_and_named(tmp_path: Path) -> None:
    m = manifest(tmp_path)
    res = build(m, pairs=[("opd", "grpo"), ("opd", "opsd")])
    assert [(d["arm"], d["baseline"]) for d in res["comparisons"]] == [("opd", "grpo"), ("opd", "opsd")]
    assert set(res["vs_grpo"]) == {"opd"} and res["comparisons"][1]["delta"] == pytest.approx(0.14, abs=0.02)
    m.meta["comparisons"] = [["opsd", "opd"]]
    m.meta["baseline"] = "opd"
    res = build(m)
    assert res["baseline"] == "opd" and list(res["vs_grpo"]) == ["opsd"]


def budget_manifest(tmp_path: Path) -> Manifest:
    step = {"rollouts": 16, "prompts": 4, "samples": 4, "max_tokens": 64, "teacher": None, "gpus": None}
    opd_step = step | {"rollouts": 4, "samples": 1, "teacher": "teacher"}
    m = plan({"grpo": ArmSpec(name="grpo", method="grpo", steps=40, per_step=step),
              "opd": ArmSpec(name="opd", method="opd", steps=40, per_step=opd_step),
              "gpu": ArmSpec(name="gpu", method="opsd", steps=10, per_step=opd_step | {"gpus": 2,
                                                                                      "teacher": "self"})},
             "b", tmp_path)
    tasks = {f"t{i}": 0.1 * i for i in range(8)}
    usage = {"rollouts": 640.0, "sampled_tokens": 20000.0, "cpu_seconds": 18.0}
    how = {"rollouts": "trainer_state", "sampled_tokens": "mean length", "cpu_seconds": "getrusage"}
    for n in m.arms:
        m.arms[n].state = "done"
        m.arms[n].result = Metrics(per_task=tasks, series={"eval_reward": [(0, 0.1), (40, 0.2)]},
                                   seconds=30.0, gpu="H100 x2" if n == "gpu" else None,
                                   usage=usage if n == "grpo" else {},
                                   usage_source=how if n == "grpo" else {})
    return m


def test_budgets_are_logged_or_estimated_and_a_gap_is_warned(tmp_path: Path) -> None:
    res = build(budget_manifest(tmp_path))
    g, o, u = (res["arms"][n]["budget"] for n in ("grpo", "opd", "gpu"))
    assert g["rollouts"] == {"value": 640.0, "source": "logged", "how": "trainer_state"}
    assert g["teacher_tokens"]["value"] == 0 and g["teacher_tokens"]["source"] == "exact"
    assert g["device"] == "cpu" and g["device_seconds"]["value"] == 18.0
    assert o["rollouts"]["value"] == 160 and o["rollouts"]["source"] == "estimate"
    assert "40 x 4 x 1" in o["rollouts"]["how"]
    assert o["sampled_tokens"]["value"] == 160 * 64 and "upper bound" in o["sampled_tokens"]["how"]
    assert o["teacher_tokens"]["value"] == o["sampled_tokens"]["value"]
    assert u["device"] == "gpu" and u["device_seconds"]["value"] == 60.0
    assert "x 2 GPUs" in u["device_seconds"]["how"]
    d = res["vs_grpo"]["opd"]
    assert d["budget_ratio"]["rollouts"] == pytest.approx(0.25)
    assert any("opd spends 0.25x the rollouts" in w for w in res["budget"]["warnings"])
    assert res["budget"]["warnings"][0] in res["warnings"]
    out = plot(res, tmp_path / "b.png", xs=("step", "rollouts", "tokens", "gpu-hours"))
    assert out.stat().st_size > 10_000
    with pytest.raises(ValueError, match="unknown x"):
        plot(res, tmp_path / "c.png", xs=("epochs",))


def test_gpu_seconds_are_compared_only_on_one_gpu_type(tmp_path: Path) -> None:
    """A fallback list may give the arms of a pair different GPU types: the rewards are compared,
    their GPU-seconds (4x apart here) are not, and results.json says why."""
    m = manifest(tmp_path)
    for n in ("opd", "opd@2"):
        r = m.arms[n].result
        assert r is not None
        m.arms[n].result = r.model_copy(update={"gpu": "NVIDIA A100-SXM4-80GB x2", "seconds": 240.0})
    res = build(m)
    opd = res["vs_grpo"]["opd"]
    assert opd["verdict"] == "better" and "device_seconds" not in opd["budget_ratio"]
    line = "GPU-seconds not compared: opd ran on NVIDIA A100-SXM4-80GB, grpo on H100"
    assert any(w.startswith(line) for w in opd["warnings"])
    assert any(w.startswith(line) for w in res["warnings"])
    assert not any("budgets differ" in w for w in res["warnings"])
    same = res["vs_grpo"]["opsd"]  # one type on both sides: compared as before
    assert same["budget_ratio"]["device_seconds"] == pytest.approx(1.0)
    assert not any("GPU-seconds" in w for w in same["warnings"])
