"""The TRL recipe as a subprocess: --dry-run plans without torch; a 2-step run trains tiny models
on the CPU end to end and writes a schema-valid results.json and the plot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import needs

from whileai.launch import load_manifest
from whileai.targets.trl.eval import _BAR, PROGRESS, task_ids, train_and_evaluate
from whileai.targets.trl.metrics import log_series, usage

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "04-train" / "trl" / "run.py"
MINE = ROOT / "tests" / "data" / "arms"
SFT_ARM = ROOT / "tests" / "data" / "arms-sft" / "off-policy.toml"
HEAVY = ("torch", "transformers", "trl", "datasets", "numpy", "scipy", "matplotlib")
EVAL = "whileai.targets.trl.eval:train_and_evaluate"


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
    flat = " ".join(p.stdout.split())  # a long path may wrap onto its own line
    assert flat.count(f"trl config: {tmp_path / 'trl-tiny'}") == 4 and "(not written)" not in flat
    m = load_manifest(tmp_path / "trl-tiny")
    assert list(m.arms) == ["grpo", "opd", "opsd", "sft"] and m.meta["steps"] == 4
    assert m.meta["comparisons"] == [["opd", "grpo"], ["opsd", "grpo"], ["sft", "grpo"], ["opd", "sft"]]
    models = Path(m.meta["models_dir"])
    assert models.parent.parent == Path(os.environ["WHILEAI_CACHE"]) and not models.exists()
    for arm in m.arms.values():
        spec = arm.spec
        assert spec.target == "trl" and spec.argv[-3:-1] == ["call", EVAL]
        # the arm's commands in order as one line: SFT samples the teacher, then trains
        assert json.loads(spec.argv[-1]) == {"command": " && ".join(spec.commands),
                                             "taskset": "reverse-text", "reward": None}
        assert spec.student == str(models / "student")
        assert (Path(arm.dir) / "config.yaml").exists()
        assert len((Path(arm.dir) / "data" / "test.jsonl").read_text().splitlines()) == 8
    out = tmp_path / "trl-tiny"
    assert (out / "opsd" / "train.py").exists() and (out / "grpo" / "reverse_text.py").exists()
    sft = m.arms["sft"].spec
    assert (out / "sft" / "sample.py").exists() and len(sft.commands) == 2
    assert sft.commands[0].startswith("python sample.py --teacher " + str(models / "teacher"))
    assert "--prompts 16 --samples 4" in sft.commands[0] and "--max-new-tokens 64" in sft.commands[0]
    assert sft.commands[1] == "trl sft --config config.yaml --accelerate_config accelerate.yaml"
    cfg = (out / "opd" / "config.yaml").read_text()
    assert f"teacher_model_name_or_path: {models / 'teacher'}" in cfg
    import yaml

    assert yaml.safe_load(cfg)["save_steps"] == 1 and yaml.safe_load(cfg)["eval_strategy"] == "no"
    assert "substituted model: 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT' ->" in p.stdout
    subs = {(s["arm"], s["field"]) for s in m.meta["substitutions"]}
    assert ("opd", "method.teacher.model") in subs and ("grpo", "steps") in subs
    assert "warning: budgets differ 4.0x in rollouts" in p.stdout


@pytest.mark.parametrize("mode, extras", [("--validate", "trl"), ("--steps", "trl,results")])
def test_without_the_extras_it_refuses_in_one_line(tmp_path: Path, mode: str, extras: str) -> None:
    """No traceback and nothing written where TRL (or numpy, scipy, matplotlib) is missing: the
    modules are hidden here, so this runs in any environment."""
    hidden = ("torch", "transformers", "trl", "numpy", "scipy", "matplotlib")
    args = [mode, *(["2"] if mode == "--steps" else []), "--out", str(tmp_path / "runs")]
    probe = (f"import runpy, sys\nsys.modules.update(dict.fromkeys({hidden!r}))\n"
             f"sys.argv = [{str(RECIPE)!r}, *{args!r}]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert f"pip install -e '.[{extras}]'" in p.stderr and "--dry-run needs neither" in p.stderr, p.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("args, words", [
    (["--arms", "grpo,ppo"], ["--arms", "'ppo'"]),
    (["--holdout", "0"], ["--holdout", "'0'"]),
    (["--collect", "--tag", "nonexistent"], ["--tag", "'nonexistent'"]),
    (["--x", "step,epochs"], ["--x", "'step,epochs'", "gpu-hours"]),
])
def test_bad_options_exit_2_in_one_line(tmp_path: Path, args: list[str], words: list[str]) -> None:
    p = run(*args, "--out", str(tmp_path / "runs"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert all(w in p.stderr for w in words), p.stderr
    assert not (tmp_path / "runs").exists()


def test_specs_it_cannot_run_offline_are_refused(tmp_path: Path) -> None:
    wordle = tmp_path / "grpo.toml"
    wordle.write_text('taskset = "wordle"\nmodel = "S"\n[method]\ntype = "grpo"\n')
    p = run(str(wordle), "--dry-run", "--out", str(tmp_path / "runs"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "taskset: 'wordle'" in p.stderr and "offline arms need tasks" in p.stderr
    no_reward = tmp_path / "own.toml"
    no_reward.write_text(f'taskset = "x"\nmodel = "S"\ndata = "{MINE / "tasks.jsonl"}"\n'
                         '[method]\ntype = "opsd"\n')
    p = run(str(no_reward), "--baseline", "own", "--dry-run", "--out", str(tmp_path / "runs"))
    assert p.returncode == 2 and "reward" in p.stderr and "baseline's reward" in p.stderr, p.stderr
    assert not (tmp_path / "runs").exists()


def test_log_series_and_progress_bar() -> None:
    history = [{"loss": 0.5, "reward": 0.1, "step": 1}, {"loss": 0.4, "reward": 0.3, "step": 2},
               {"train_loss": 0.45, "step": 2}]
    assert log_series(history, "grpo") == {"train_reward": [(1, 0.1), (2, 0.3)],
                                           "train_loss": [(1, 0.5), (2, 0.4)]}
    assert log_series(history, "distillation") == {"teacher_kl": [(1, 0.5), (2, 0.4)]}
    history[0]["entropy"] = 2.5
    assert log_series(history, "grpo")["entropy"] == [(1, 2.5)]
    out = b"\rLoading weights: 100%|##| 25/25 [00:00]\r 50%|#    | 2/4 [00:01<00:01,  1.9it/s]"
    assert [(m.group(1), m.group(2)) for m in _BAR.finditer(out)] == [(b"2", b"4")]
    assert task_ids(2) == ["test-0000", "test-0001"]


def test_usage_from_the_trainer_log() -> None:
    state = {"global_step": 4, "log_history": [
        {"step": 1, "completions/mean_length": 10.0}, {"step": 2, "completions/mean_length": 14.0},
        {"step": 4, "train_runtime": 3.0}]}
    got, how = usage(state, {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 2})
    assert got == {"rollouts": 64.0, "sampled_tokens": 64 * 12.0}
    assert "global_step 4" in how["rollouts"] and "mean_length" in how["sampled_tokens"]
    assert usage({"global_step": 0}, {})[0] == {"rollouts": 0.0}  # nothing logged: no token count


def test_a_failing_command_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner turns the exception into an error record and exit code 1 (a failed arm)."""
    pytest.importorskip("yaml")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("model_name_or_path: none\nmax_steps: 3\n")
    with pytest.raises(RuntimeError, match="exited with code 3"):
        train_and_evaluate("echo training; exit 3", eval_base=False)
    assert json.loads((tmp_path / PROGRESS).read_text()) == {"phase": "train", "done": 0, "total": 4}


@pytest.mark.trl
def test_validate_checks_every_arm_with_trls_parser(tmp_path: Path) -> None:
    needs("trl", "torch", "transformers", "trl")  # the subprocess's TRL parser
    specs = [str(p) for p in sorted(MINE.glob("*.toml"))]
    p = run(*specs, "--baseline", "baseline", "--validate", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.count(": ok (TRL's parser, unknown keys rejected)") == 4
    assert not Path(load_manifest(tmp_path / "trl-tiny").meta["models_dir"]).exists()


@pytest.mark.trl
@pytest.mark.slow
def test_five_own_specs_compare_offline_end_to_end_with_matched_budgets(tmp_path: Path) -> None:
    """A user's five spec files (own data and reward, two GRPO variants, OPD, OPSD with a
    prime-rl override, off-policy SFT) through the whole offline loop, budget-matched on
    rollouts; OPD is compared with SFT by default (on- vs off-policy)."""
    needs("trl", "torch", "transformers", "trl")
    needs("results", "numpy", "scipy", "matplotlib")
    needs("dev", "jsonschema")
    import jsonschema
    specs = [str(p) for p in sorted(MINE.glob("*.toml"))] + [str(SFT_ARM)]
    args = (*specs, "--baseline", "baseline", "--pair", "distill:self-distill", "--budget",
            "rollouts=16", "--holdout", "8", "--max-tokens", "16", "--warmup", "20", "--out",
            str(tmp_path), "--tag", "mine", "--x", "step,rollouts,tokens,gpu-hours")
    p = run(*args)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = tmp_path / "mine"
    res = json.loads((out / "results.json").read_text())
    schema = json.loads((ROOT / "schemas" / "results.schema.json").read_text())
    jsonschema.validate(res, schema)
    assert sorted(res["arms"]) == ["baseline", "distill", "off-policy", "self-distill", "small-group"]
    assert res["baseline"] == "baseline" and res["budget"]["matched"] == "rollouts=16"
    steps = {"baseline": 1, "distill": 4, "self-distill": 4, "small-group": 2, "off-policy": 2}
    for name, arm in res["arms"].items():
        assert arm["state"] == "done" and arm["returncode"] == 0, (name, arm["error"])
        assert sorted(arm["per_task"]) == task_ids(8)
        assert [s for s, _ in arm["series"]["eval_reward"]][-1] == steps[name]
        b = arm["budget"]
        assert b["rollouts"] == {"value": 16.0, "source": "logged", "how": b["rollouts"]["how"]}
        assert b["sampled_tokens"]["source"] == "logged" and b["device"] == "cpu"
        assert b["device_seconds"]["source"] == "logged" and b["device_seconds"]["value"] > 0
    assert res["arms"]["distill"]["budget"]["teacher_tokens"]["value"] > 0
    assert res["arms"]["baseline"]["budget"]["teacher_tokens"]["value"] == 0
    sft = res["arms"]["off-policy"]["budget"]  # the teacher's completions, counted in the file
    assert sft["teacher_tokens"]["value"] == sft["sampled_tokens"]["value"] > 0
    assert "teacher's completions" in sft["sampled_tokens"]["how"]
    pairs = [(d["arm"], d["baseline"]) for d in res["comparisons"]]
    assert pairs == [("distill", "baseline"), ("self-distill", "baseline"), ("small-group", "baseline"),
                     ("off-policy", "baseline"), ("distill", "self-distill"), ("distill", "off-policy")]
    on_off = res["comparisons"][-1]
    assert on_off["ci95"] is not None and on_off["ci95"][0] <= on_off["delta"] <= on_off["ci95"][1]
    for d in res["comparisons"]:
        assert d["paired"] and d["n_tasks"] == 8 and d["permutations"] > 0 and d["p_text"]
        # matched on rollouts: no arm spends twice the rollouts of another (the teacher's SFT
        # completions may be longer than a student's, so tokens can differ and be said so)
        assert not any(w.startswith("budgets differ") and "rollouts" in w for w in d["warnings"]), d
    assert res["metric"] == "similarity.closeness (the baseline's reward)"
    assert res["models"].startswith("tiny random") and res["stats"]["noise_band"].startswith("none")
    subs = {(s["arm"], s["field"]) for s in res["substitutions"]}
    assert {("distill", "method.teacher.model"), ("self-distill", "overrides.trainer.optim.weight_decay"),
            ("baseline", "model"), ("small-group", "steps")} <= subs
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "models: " in p.stdout and "built in" in p.stdout
    before = (out / "results.json").read_bytes()
    p = run("--collect", "--out", str(tmp_path), "--tag", "mine")
    assert p.returncode == 0, p.stderr[-3000:]
    assert (out / "results.json").read_bytes() == before
    models = Path(res["meta"]["models_dir"])
    stamp = (models / "done.json").stat().st_mtime_ns
    p = run(*args)  # a second launch: arms done are kept, the models come from the cache
    assert p.returncode == 0, p.stderr[-3000:]
    assert "cached: reused, not rebuilt" in p.stdout and "spawned on" not in p.stdout
    assert (models / "done.json").stat().st_mtime_ns == stamp
