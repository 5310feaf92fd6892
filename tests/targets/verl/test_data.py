"""A run's tasks as verl's rows (whileai/targets/verl/data.py): own data, whileai's generated
tasksets, verl's own gsm8k preprocessing, and the tasksets verl cannot run. The live test reads
the written files with verl's own loaders (WHILEAI_VERL_PYTHON: a Python with verl 0.9.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import verl_python

from whileai.errors import SpecError
from whileai.spec.load import load_spec, replace_run
from whileai.targets.verl import data

ROOT = Path(__file__).resolve().parents[3]
OWN = ROOT / "examples" / "own-data" / "grpo.toml"


def write(plan: data.DataPlan, folder: Path) -> None:
    for name, body in plan.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(body)


def test_own_data_becomes_verls_rows_and_reward():
    run = load_spec(OWN)
    plan = data.rows(run)
    text = (ROOT / "examples" / "own-data" / "tasks.jsonl").read_text()
    tasks = [json.loads(ln) for ln in text.splitlines()]
    train = [json.loads(ln) for ln in plan.files["data/train.jsonl"].decode().splitlines()]
    test = [json.loads(ln) for ln in plan.files["data/test.jsonl"].decode().splitlines()]
    assert len(train) + len(test) == len(tasks) and len(test) >= 1
    first = train[0]
    assert set(first) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert first["prompt"] == [{"role": "user", "content": tasks[0]["prompt"]}]
    assert first["reward_model"] == {"style": "rule", "ground_truth": tasks[0]["answer"]}
    assert first["extra_info"] == {"answer": tasks[0]["answer"], "prompt": tasks[0]["prompt"],
                                   "split": "train", "index": 0}
    assert test[0]["extra_info"]["split"] == "test"
    assert plan.overrides == {"data.train_files": "$PWD/data/train.jsonl",
                              "data.val_files": "$PWD/data/test.jsonl",
                              "reward.custom_reward_function.path": "$PWD/reward.py",
                              "reward.custom_reward_function.name": "compute_score"}
    assert plan.steps == [] and (plan.train_files, plan.val_files) == ("data/train.jsonl", "data/test.jsonl")
    assert plan.files["rewards.py"] == (ROOT / "examples" / "own-data" / "rewards.py").read_bytes()


def test_the_reward_adapter_calls_the_users_function_with_verls_signature(tmp_path, monkeypatch):
    plan = data.rows(load_spec(OWN))
    write(plan, tmp_path)
    row = json.loads(plan.files["data/train.jsonl"].decode().splitlines()[0])
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {"__file__": str(tmp_path / "reward.py")}
    exec(compile(plan.files["reward.py"], "reward.py", "exec"), namespace)  # noqa: S102 (our own file)
    score = namespace["compute_score"]
    truth = row["reward_model"]["ground_truth"]
    assert score(row["data_source"], f"It is {truth}.", truth, row["extra_info"]) == 1.0
    assert score(row["data_source"], "no idea", truth, row["extra_info"]) == 0.0
    sys.modules.pop("rewards", None)


def _adapter_for(tmp_path: Path, source: str, func: str, monkeypatch=None):
    """reward.py written for `rewards.<func>` (rewards.py: `source`), loaded as verl loads it."""
    sys.modules.pop("rewards", None)  # another test's rewards.py
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "2+3?", "answer": "5", "unit": "apples"}\n' * 10)
    (tmp_path / "rewards.py").write_text(textwrap.dedent(source))
    spec = tmp_path / "spec.toml"
    spec.write_text(f'taskset = "mine"\nmodel = "Qwen/Qwen3-0.6B"\ndata = "tasks.jsonl"\n'
                    f'reward = "rewards.{func}"\n\n[method]\ntype = "grpo"\n')
    plan = data.rows(load_spec(spec))
    run_dir = tmp_path / "run"
    write(plan, run_dir)
    if monkeypatch is not None:
        monkeypatch.syspath_prepend(str(run_dir))  # (invalidates the import caches)
    row = json.loads(plan.files["data/train.jsonl"].decode().splitlines()[0])
    namespace: dict = {"__file__": str(run_dir / "reward.py")}
    exec(compile(plan.files["reward.py"], "reward.py", "exec"), namespace)  # noqa: S102 (our own file)
    return namespace["compute_score"], row


def _as_verls_naive_manager_calls(score, row: dict, answer: str) -> float:
    """experimental/reward_loop/reward_manager/naive.py:42-83: extra_info gains num_turns and
    rollout_reward_scores, then compute_score is called with keywords only."""
    extra_info = dict(row["extra_info"])
    extra_info["num_turns"] = None
    extra_info["rollout_reward_scores"] = {}
    return score(data_source=row["data_source"], solution_str=answer,
                 ground_truth=row["reward_model"]["ground_truth"], extra_info=extra_info)


@pytest.mark.parametrize(("source", "func"), [
    ("def strict(completions, answer):\n    return [float(answer[0] in completions[0])]\n", "strict"),
    ("def bare(completions):\n    return [float('5' in completions[0])]\n", "bare"),
    ("def keyed(*, prompts, completions, unit):\n"
     "    assert unit == ['apples'] and prompts == ['2+3?']\n    return [float('5' in completions[0])]\n",
     "keyed"),
], ids=["positional-strict", "completions-only", "keyword-only"])
def test_the_reward_adapter_passes_only_what_the_users_function_takes(tmp_path, monkeypatch,
                                                                     source, func):
    """verl adds num_turns and rollout_reward_scores to extra_info: a function that does not take
    them (or takes no task fields at all) still scores."""
    score, row = _adapter_for(tmp_path, source, func, monkeypatch)
    assert _as_verls_naive_manager_calls(score, row, "It is 5.") == 1.0
    assert _as_verls_naive_manager_calls(score, row, "no idea") == 0.0
    sys.modules.pop("rewards", None)


def test_a_reward_with_kwargs_gets_every_column_verls_keys_too(tmp_path, monkeypatch):
    source = ("def loose(completions, **kw):\n"
              "    assert sorted(kw) == ['answer', 'num_turns', 'prompts', 'rollout_reward_scores',"
              " 'unit'], kw\n"
              "    return [1.0]\n")
    score, row = _adapter_for(tmp_path, source, "loose", monkeypatch)
    assert _as_verls_naive_manager_calls(score, row, "x") == 1.0
    sys.modules.pop("rewards", None)


@pytest.mark.slow
def test_live_verls_own_loader_and_call_score_a_strict_reward(tmp_path):
    """verl loads reward.py (trainer/ppo/reward.py:50-86, get_custom_reward_fn) and calls it with
    the extra_info its naive reward manager builds (naive.py:42-83)."""
    python = verl_python()
    strict = "def strict(completions, answer):\n    return [float(answer[0] in completions[0])]\n"
    _adapter_for(tmp_path, strict, "strict")
    sys.modules.pop("rewards", None)
    check = textwrap.dedent(f"""
        import json
        from omegaconf import OmegaConf
        from verl.trainer.ppo.reward import get_custom_reward_fn
        fn = get_custom_reward_fn(OmegaConf.create({{"reward": {{"custom_reward_function": {{
            "path": {str(tmp_path / "run" / "reward.py")!r}, "name": "compute_score"}}}}}}))
        row = json.loads(open("data/train.jsonl").readline())
        info = dict(row["extra_info"], num_turns=None, rollout_reward_scores={{}})
        print(fn(data_source=row["data_source"], solution_str="It is 5.",
                 ground_truth=row["reward_model"]["ground_truth"], extra_info=info))
    """)
    done = subprocess.run([python, "-c", check], cwd=tmp_path / "run", capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split()[-1] == "1.0", done.stderr[-3000:]


def test_generated_taskset_ships_its_own_reward():
    run = load_spec(ROOT / "examples" / "grpo.toml")
    plan = data.rows(run)
    row = json.loads(plan.files["data/train.jsonl"].decode().splitlines()[0])
    namespace: dict = {}
    exec(compile(plan.files["reward.py"], "reward.py", "exec"), namespace)  # noqa: S102
    truth = row["reward_model"]["ground_truth"]
    score = namespace["compute_score"]
    assert score(row["data_source"], f"<reversed_text>{truth}</reversed_text>", truth) == 1.0
    assert score(row["data_source"], "<reversed_text>no</reversed_text>", truth) < 0.5
    assert row["data_source"] == "reverse-text"


def test_sft_converts_to_parquet_on_the_machine_that_runs_it():
    plan = data.rows(load_spec(ROOT / "examples" / "sft.toml"))
    assert (plan.train_files, plan.val_files) == ("data/train.parquet", "data/test.parquet")
    assert len(plan.steps) == 1 and "pd.read_json(a, lines=True).to_parquet(b)" in plan.steps[0]
    assert "data/train.jsonl" in plan.files
    assert plan.overrides["data.train_files"] == "$PWD/data/train.parquet"
    row = json.loads(plan.files["data/train.jsonl"].decode().splitlines()[0])
    assert row["extra_info"] == {"split": "train", "index": 0}  # parquet: one type a column


def on_taskset(folder: Path, taskset: str):
    spec = folder / "spec.toml"
    spec.write_text(f'taskset = "{taskset}"\nmodel = "Qwen/Qwen3-0.6B"\n\n[method]\ntype = "grpo"\n')
    return load_spec(spec)


def test_gsm8k_rows_are_made_by_whileais_own_script_in_the_run_folder_nothing_fetched(tmp_path):
    from whileai.targets.verl import gsm8k

    run = on_taskset(tmp_path, "primeintellect/gsm8k")
    plan = data.rows(run)
    assert plan.files == {"gsm8k_rows.py": Path(gsm8k.__file__).read_bytes()}
    assert "reward.custom_reward_function.path" not in plan.overrides  # verl's built-in scorer
    assert plan.overrides["data.train_files"] == "$PWD/data/train.parquet"
    assert plan.steps[1] == "[ -f data/train.parquet ] || python3 gsm8k_rows.py data"
    assert not any("://" in s or "curl" in s for s in plan.steps)  # no script from a URL
    assert gsm8k.REVISION in plan.files["gsm8k_rows.py"].decode()


@pytest.mark.parametrize(("taskset", "why"), [
    ("kuhn-poker", "2 seats (player0, player1)"), ("wiki-search", "calls tools"),
    ("alphabet-sort", "multi-turn environment (AlphabetSortEnv)"), ("someone/unknown@1", "does not know"),
])
def test_tasksets_verl_cannot_run_are_refused_naming_why(taskset, why, tmp_path):
    run = on_taskset(tmp_path, taskset)
    with pytest.raises(SpecError) as e:
        data.rows(run)
    assert e.value.field == "taskset" and why in str(e.value) and "data = " in str(e.value)
    assert "\n" not in str(e.value)


def test_grpo_on_own_data_needs_a_reward():
    run = replace_run(load_spec(OWN), reward=None)
    with pytest.raises(SpecError, match="reward"):
        data.rows(run)


@pytest.mark.slow
def test_live_verl_reads_the_rows(tmp_path):
    """verl's RLHFDataset loader (datasets' json, rl_dataset.py:175-176) reads the rows; the SFT
    step writes parquet with verl's pandas; verl's own gsm8k scorer is chosen by data_source."""
    python = verl_python()
    plan = data.rows(load_spec(ROOT / "examples" / "sft.toml"))
    write(plan, tmp_path)
    check = textwrap.dedent(f"""
        import datasets, subprocess
        ds = datasets.load_dataset("json", data_files="data/train.jsonl")["train"]
        assert ds[0]["prompt"][-1]["role"] == "user" and ds[0]["reward_model"]["style"] == "rule", ds[0]
        subprocess.run({plan.steps[0]!r}, shell=True, check=True)
        import pandas as pd
        df = pd.read_parquet("data/train.parquet")
        assert len(df) == len(ds) and df["prompt"][0][-1]["role"] == "user", df["prompt"][0]
        from verl.utils.reward_score import default_compute_score
        assert default_compute_score("openai/gsm8k", "so #### 42", "42") == 1.0
        print("ok", len(ds))
    """)
    done = subprocess.run([python, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-3000:]


def test_the_data_rules_and_check_import_no_verl_torch_or_pyarrow():
    code = ("import sys, whileai.targets.verl.data, whileai.targets.verl.lax, "
            "whileai.targets.verl.check; "
            "heavy = [m for m in ('verl', 'torch', 'pyarrow', 'pandas', 'datasets') if m in sys.modules]; "
            "assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_live_mixed_field_types_still_load(tmp_path):
    """Tasks whose fields change type between rows (an int answer, then a text one): verl's JSON
    loader reads the RL rows, and SFT's parquet step works (pyarrow takes one type a column)."""
    python = verl_python()
    tasks = [{"prompt": "2+3?", "answer": 5}, {"prompt": "Capital of France?", "answer": "Paris"}] * 5
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (tmp_path / "rewards.py").write_text("def r(completions, answer, **kw):\n    return [1.0]\n")
    for method in ("grpo", "sft"):
        folder = tmp_path / method
        folder.mkdir()
        spec = folder / "spec.toml"
        teacher = '\nteacher = "vllm:Qwen/Qwen3-8B@http://localhost:8001/v1"' if method == "sft" else ""
        spec.write_text(f'taskset = "mine"\nmodel = "Qwen/Qwen3-0.6B"\ndata = "../tasks.jsonl"\n'
                        f'reward = "rewards.r"\n\n[method]\ntype = "{method}"{teacher}\n')
        plan = data.rows(load_spec(spec))
        write(plan, folder)
        check = ("import datasets, subprocess\n"
                 f"for step in {plan.steps!r}: subprocess.run(step, shell=True, check=True)\n"
                 "ds = datasets.load_dataset('json', data_files='data/train.jsonl')['train']\n"
                 "assert len(ds) >= 8, len(ds)\nprint('ok')\n")
        done = subprocess.run([python, "-c", check], cwd=folder, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.startswith("ok"), (method, done.stderr[-3000:])


def test_a_reward_that_cannot_be_found_is_refused_at_compile(tmp_path):
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "2+3?", "answer": "5"}\n' * 10)
    spec = tmp_path / "spec.toml"
    body = ('taskset = "mine"\nmodel = "Qwen/Qwen3-0.6B"\ndata = "tasks.jsonl"\nreward = "{r}"\n\n'
            '[method]\ntype = "grpo"\n')
    spec.write_text(body.format(r="nosuchmodule_xyz.score"))
    with pytest.raises(SpecError, match="no nosuchmodule_xyz.py beside the spec"):
        data.rows(load_spec(spec))
    (tmp_path / "mine.py").write_text("def other(completions, **kw):\n    return [0.0]\n")
    spec.write_text(body.format(r="mine.score"))
    with pytest.raises(SpecError, match="a function 'score' defined at the top level"):
        data.rows(load_spec(spec))
    (tmp_path / "mine.py").write_text("def score(completions, **kw):\n    return [1.0]\n")
    assert data.rows(load_spec(spec)).files["mine.py"].startswith(b"def score")
