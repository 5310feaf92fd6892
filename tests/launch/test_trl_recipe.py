"""The TRL recipe as a subprocess: --dry-run plans without torch; a 2-step run trains tiny models
on the CPU end to end and writes a schema-valid results.json and the plot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai.launch import load_manifest
from whileai.launch.trl_eval import _BAR, PROGRESS, log_series, task_ids, train_and_evaluate

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "04-train" / "trl" / "run.py"
HEAVY = ("torch", "transformers", "trl", "datasets", "numpy", "scipy", "matplotlib")
EVAL = "whileai.launch.trl_eval:train_and_evaluate"


def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, str(RECIPE), *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def test_dry_run_writes_the_run_dirs_without_torch(tmp_path: Path) -> None:
    probe = (f"import runpy, sys, json\nsys.argv = [{str(RECIPE)!r}, '--dry-run', '--out', "
             f"{str(tmp_path)!r}, '--steps', '4', '--holdout', '8']\n"
             "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit as e:\n"
             "    assert not e.code, e.code\nprint(json.dumps(sorted(sys.modules)))\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    loaded = {m.split(".")[0] for m in json.loads(p.stdout.strip().splitlines()[-1])}
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
    assert p.stdout.count("trl config: config.yaml") == 3
    m = load_manifest(tmp_path)
    assert list(m.arms) == ["grpo", "opsd", "opd"] and m.meta["steps"] == 4
    for arm in m.arms.values():
        spec = arm.spec
        assert spec.target == "trl" and spec.argv[-3:-1] == ["call", EVAL]
        assert json.loads(spec.argv[-1]) == {"command": spec.commands[0]}
        assert spec.student == str(tmp_path / "models" / "student")
        assert (Path(arm.dir) / "config.yaml").exists()
        assert len((Path(arm.dir) / "data" / "test.jsonl").read_text().splitlines()) == 8
    assert (tmp_path / "opsd" / "train.py").exists() and (tmp_path / "grpo" / "reverse_text.py").exists()
    cfg = (tmp_path / "opd" / "config.yaml").read_text()
    assert f"teacher_model_name_or_path: {tmp_path / 'models' / 'teacher'}" in cfg
    import yaml

    assert yaml.safe_load(cfg)["save_steps"] == 1 and yaml.safe_load(cfg)["eval_strategy"] == "no"
    assert not (tmp_path / "models").exists()
    p = run("--dry-run", "--out", str(tmp_path), "--arms", "grpo,ppo")
    assert p.returncode == 2 and "unknown arms ['ppo']" in p.stderr


def test_log_series_and_progress_bar() -> None:
    history = [{"loss": 0.5, "reward": 0.1, "step": 1}, {"loss": 0.4, "reward": 0.3, "step": 2},
               {"train_loss": 0.45, "step": 2}]
    assert log_series(history, "grpo") == {"train_reward": [(1, 0.1), (2, 0.3)],
                                           "train_loss": [(1, 0.5), (2, 0.4)]}
    assert log_series(history, "distillation") == {"teacher_kl": [(1, 0.5), (2, 0.4)]}
    out = b"\rLoading weights: 100%|##| 25/25 [00:00]\r 50%|#    | 2/4 [00:01<00:01,  1.9it/s]"
    assert [(m.group(1), m.group(2)) for m in _BAR.finditer(out)] == [(b"2", b"4")]
    assert task_ids(2) == ["test-0000", "test-0001"]


def test_a_failing_command_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner turns the exception into an error record and exit code 1 (a failed arm)."""
    pytest.importorskip("yaml")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("model_name_or_path: none\nmax_steps: 3\n")
    with pytest.raises(RuntimeError, match="exited with code 3"):
        train_and_evaluate("echo training; exit 3", eval_base=False)
    assert json.loads((tmp_path / PROGRESS).read_text()) == {"phase": "train", "done": 0, "total": 4}


@pytest.mark.trl
@pytest.mark.slow
def test_recipe_trains_tiny_models_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("torch")
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("matplotlib")
    out = tmp_path / "run"
    p = run("--out", str(out), "--steps", "2", "--holdout", "8", "--warmup", "20")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    schema = json.loads((ROOT / "schemas" / "results.schema.json").read_text())
    jsonschema.validate(res, schema)
    assert sorted(res["arms"]) == ["grpo", "opd", "opsd"] and res["baseline"] == "grpo"
    for name, arm in res["arms"].items():
        assert arm["state"] == "done" and arm["returncode"] == 0, (name, arm["error"])
        assert sorted(arm["per_task"]) == task_ids(8)
        assert all(0.0 <= v <= 1.0 for v in arm["per_task"].values())
        assert [s for s, _ in arm["series"]["eval_reward"]] == [0, 1, 2]
    assert [p[0] for p in res["arms"]["grpo"]["series"]["train_reward"]] == [1, 2]
    assert [p[0] for p in res["arms"]["opd"]["series"]["teacher_kl"]] == [1, 2]
    base = {a["series"]["eval_reward"][0][1] for a in res["arms"].values()}
    assert len(base) == 1  # the same base model, greedy, on the same holdout
    for group in ("opd", "opsd"):
        d = res["vs_grpo"][group]
        assert d["paired"] and d["n_tasks"] == 8 and d["baseline"] == "grpo"
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "grpo" / "run.log").exists() and "eval reward" in p.stdout
    before = (out / "results.json").read_bytes()
    p = run("--collect", "--out", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    assert (out / "results.json").read_bytes() == before
