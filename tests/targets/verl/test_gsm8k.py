"""gsm8k_rows.py (whileai/targets/verl/gsm8k.py): openai/gsm8k at a pinned revision as verl's rows,
made by a script whileai writes into the run folder. Its row builder runs offline on gsm8k-shaped
records; the live test runs the script (the hub stood in by local records) and reads its parquet
with verl's own RLHFDataset and scores a row with verl's built-in gsm8k reward
(WHILEAI_VERL_PYTHON: a Python with verl 0.9.1)."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from helpers import ROOT, verl_python

from whileai.spec.load import load_spec
from whileai.targets.verl import gsm8k
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import parse

RECORDS = [
    {"question": "Natalia sold clips to 48 of her friends in April, and then she sold half as many "
                 "clips in May. How many clips did Natalia sell altogether in April and May?",
     "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 "
               "clips altogether in April and May.\n#### 72"},
    {"question": "A fee of $1,200 a month for 2 months?", "answer": "1200 * 2 = 2400\n#### 2,400"},
    {"question": "It drops 5 below zero.", "answer": "0 - 5 = -5\n#### -5"},
]


def test_rows_have_verls_columns_instruction_and_final_number():
    rows = gsm8k.rows(RECORDS, "train")
    assert rows[0] == {
        "data_source": "openai/gsm8k",
        "prompt": [{"role": "user", "content": RECORDS[0]["question"] + " Let's think step by step "
                    "and output the final answer after \"####\"."}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": "72"},
        "extra_info": {"split": "train", "index": 0, "answer": RECORDS[0]["answer"],
                       "question": RECORDS[0]["question"]}}
    assert [r["reward_model"]["ground_truth"] for r in rows] == ["72", "2400", "-5"]
    assert [r["extra_info"]["index"] for r in gsm8k.rows(RECORDS, "test")] == [0, 1, 2]
    with pytest.raises(ValueError, match="without '#### <number>'"):
        gsm8k.row({"question": "q", "answer": "no final line"}, "train", 0)


def test_the_revision_is_a_full_commit_and_the_compiled_run_runs_the_script():
    assert len(gsm8k.REVISION) == 40 and int(gsm8k.REVISION, 16) >= 0
    c = compile(load_spec(ROOT / "tests" / "fixtures" / "verl" / "specs" / "gsm8k-grpo.toml"))
    assert c.files["gsm8k_rows.py"] == Path(gsm8k.__file__).read_text()
    text = c.files["run.sh"]
    assert "python3 gsm8k_rows.py data" in text and "://" not in text.split("python3 -m")[0]
    [cmd] = parse(text, {"PWD": "/run"})
    assert 'data.train_files="/run/data/train.parquet"' in cmd.overrides


@pytest.mark.slow
def test_live_the_script_writes_rows_verls_rlhf_dataset_reads_and_its_gsm8k_reward_scores(tmp_path):
    python = verl_python()
    c = compile(load_spec(ROOT / "tests" / "fixtures" / "verl" / "specs" / "gsm8k-grpo.toml"))
    (tmp_path / "gsm8k_rows.py").write_text(c.files["gsm8k_rows.py"])
    [cmd] = parse(c.files["run.sh"], {"PWD": str(tmp_path)})
    (tmp_path / "overrides.json").write_text(json.dumps(list(cmd.overrides)))
    (tmp_path / "records.json").write_text(json.dumps(RECORDS))
    check = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        import datasets, verl
        from hydra import compose, initialize_config_dir
        from verl.utils.dataset.rl_dataset import RLHFDataset
        from verl.utils.reward_score import default_compute_score
        from whileai.vocab.tiny import tokenizer

        records = json.load(open("records.json"))
        calls, real = [], datasets.load_dataset
        def load_dataset(*args, **kwargs):  # the hub, stood in by local gsm8k-shaped records
            calls.append([list(args), kwargs])
            return {split: datasets.Dataset.from_list((records * n)[:n])
                    for split, n in (("train", 7473), ("test", 1319))}
        datasets.load_dataset = load_dataset
        sys.argv = ["gsm8k_rows.py", "data"]
        import runpy
        try:
            runpy.run_path("gsm8k_rows.py", run_name="__main__")
        except SystemExit as e:
            assert not e.code, e.code
        datasets.load_dataset = real  # RLHFDataset reads the parquet with it
        print("load", json.dumps(calls))
        config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name="ppo_trainer", overrides=json.load(open("overrides.json")))
        tok = tokenizer([r["question"] + r["answer"] for r in records] * 10, "qwen3")
        ds = RLHFDataset(cfg.data.train_files, tok, cfg.data, max_samples=6)
        row = ds[0]
        print("row", json.dumps({"data_source": row["data_source"], "raw_prompt": row["raw_prompt"],
                                 "truth": row["reward_model"]["ground_truth"]}))
        truth = row["reward_model"]["ground_truth"]
        print("score", default_compute_score(row["data_source"], "so #### " + truth, truth))
    """)
    done = subprocess.run([python, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = {ln.split(" ", 1)[0]: json.loads(ln.split(" ", 1)[1]) for ln in done.stdout.splitlines()
           if ln.split(" ", 1)[0] in ("load", "row", "score")}
    assert out["load"] == [[["openai/gsm8k", "main"], {"revision": gsm8k.REVISION}]]
    assert out["row"]["data_source"] == "openai/gsm8k"  # (a row of verl's shuffled sample)
    assert out["row"]["truth"] in ("72", "2400", "-5")
    assert out["row"]["raw_prompt"][0]["content"].endswith('after "####".')
    assert out["score"] == 1.0
