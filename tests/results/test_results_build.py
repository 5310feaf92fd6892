"""results.json from a manifest: schema, deltas vs GRPO, repeats, failures, the plot."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from whileai.launch import ArmSpec, Manifest, Metrics, plan
from whileai.results import build, plot, schema_text, write_results
from whileai.results.stats import noise_band, paired_delta

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
    assert res["vs_grpo"] == {} and any("rule 17" in w for w in res["warnings"])


def test_without_per_task_rewards(tmp_path: Path) -> None:
    m = plan({n: ArmSpec(name=n, method=n) for n in ("grpo", "opd")}, "t", tmp_path)
    for n, v in (("grpo", 0.4), ("opd", 0.5)):
        m.arms[n].state = "done"
        m.arms[n].result = Metrics(series={"eval_reward": [(5, v)]})
    d = build(m)["vs_grpo"]["opd"]
    assert d["verdict"] == "insufficient data" and abs(d["delta"] - 0.1) < 1e-12


def test_schema_file_is_current() -> None:
    assert (ROOT / "schemas" / "results.schema.json").read_text() == schema_text()


def test_plot_writes_png(tmp_path: Path) -> None:
    out = plot(build(manifest(tmp_path)), tmp_path / "r.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
