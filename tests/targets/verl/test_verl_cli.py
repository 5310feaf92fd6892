"""`whileai compile -t verl`, `explain`, `--json`, `--check` and `whileai check` through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.targets.verl import check as verl_check


def cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.output


def test_compile_writes_the_run_directory(tmp_path: Path):
    code, out = cli("compile", str(EXAMPLES / "opd.toml"), "-b", "verl", "-o", str(tmp_path / "opd"))
    assert code == 0, out
    folder = tmp_path / "opd"
    written = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert written - {".whileai-files"} == {"run.sh", "README.md", "reward.py", "data/train.jsonl",
                                            "data/test.jsonl"}
    assert "verl.trainer.main_ppo" in (tmp_path / "opd" / "run.sh").read_text()
    assert f"cd {tmp_path / 'opd'} && bash run.sh" in out


def test_json_names_the_target_and_its_pin():
    code, out = cli("compile", str(EXAMPLES / "grpo.toml"), "-b", "verl", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert (doc["target"], doc["pin"], doc["main"]) == ("verl", "verl==0.9.1", "run.sh")
    assert any(r["path"] == "algorithm.adv_estimator" for r in doc["reads"])


def test_explain_lists_verls_keys():
    code, out = cli("explain", str(EXAMPLES / "grpo.toml"), "-b", "verl")
    assert code == 0 and "actor_rollout_ref.rollout.n" in out


def test_opsd_and_cpu_are_one_line_each():
    code, out = cli("compile", str(EXAMPLES / "opsd.toml"), "-b", "verl")
    assert code == 2 and "#6827" in out and "Traceback" not in out
    code, out = cli("compile", str(EXAMPLES / "grpo.toml"), "-b", "verl", "--cpu")
    assert code == 2 and "Traceback" not in out


@pytest.mark.skipif(verl_check.available(), reason="verl is installed: the check runs")
def test_check_without_verl_says_how_to_get_it(tmp_path: Path):
    code, out = cli("compile", str(EXAMPLES / "grpo.toml"), "-b", "verl", "-o", str(tmp_path / "g"),
                    "--check")
    assert code == 2 and "pip install 'whileai[verl]'" in out
    assert not (tmp_path / "g").exists()  # a check that cannot run writes nothing
    code, out = cli("compile", str(EXAMPLES / "grpo.toml"), "-b", "verl", "-o", str(tmp_path / "g"))
    assert code == 0 and (tmp_path / "g" / "run.sh").is_file()
    code, out = cli("check", str(tmp_path / "g"))
    assert code == 2 and "run.sh: not checked" in out  # claimed by verl, not by TRL


VERL_PYTHON = os.environ.get("WHILEAI_VERL_PYTHON")


@pytest.mark.skipif(not VERL_PYTHON, reason="WHILEAI_VERL_PYTHON names no Python with verl 0.9.1")
def test_compile_check_runs_verls_own_check(tmp_path: Path):
    """Live: `whileai compile --check` in a Python with verl (`whileai rehearse --setup DIR -t verl`
    prints the commands that make one)."""
    done = subprocess.run([str(VERL_PYTHON), "-m", "whileai", "compile", str(EXAMPLES / "sft.toml"),
                           "-b", "verl", "-o", str(tmp_path / "sft"), "--check", "--plain"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("verl 0.9.1 accepts it") == 2  # main_generation_server, sft_trainer
