"""`check` agrees with prime-rl's loader both ways: booleans the loader reads leniently are
accepted with a note, and a likely typo among [inference.vllm]'s free-form keys is accepted
with a did-you-mean warning (in `check` and in a `--set` row of a report)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT
from typer.testing import CliRunner

from whileai.cli.app import app

runner = CliRunner()


def written(tmp_path: Path, edit: tuple[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "rl.toml"
    r = runner.invoke(app, ["compile", str(EXAMPLES / "opd.toml"), "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    text = out.read_text()
    assert edit[0] in text
    bad = tmp_path / "edited.toml"
    bad.write_text(text.replace(*edit))
    return bad


@pytest.mark.parametrize("value,shown,read", [('"yes"', "'yes'", "True"), ('"off"', "'off'", "False"),
                                              ("1", "1", "True"), ('"T"', "'T'", "True")])
def test_a_lax_boolean_is_accepted_with_a_note(tmp_path: Path, value: str, shown: str, read: str) -> None:
    f = written(tmp_path, ("enable_lora = true", f"enable_lora = {value}"))
    r = runner.invoke(app, ["check", str(f)])
    assert r.exit_code == 0, r.stderr
    assert f"inference.vllm.enable_lora: {shown} is read as {read}" in r.stdout


def test_a_value_the_loader_refuses_is_still_refused(tmp_path: Path) -> None:
    f = written(tmp_path, ("enable_lora = true", 'enable_lora = "maybe"'))
    r = runner.invoke(app, ["check", str(f)])
    assert r.exit_code == 2 and "inference.vllm.enable_lora: 'maybe' is not of type boolean" in r.stderr


def test_a_vllm_key_typo_is_warned_with_a_guess(tmp_path: Path) -> None:
    f = written(tmp_path, ("enable_lora = true", "enable_lora = true\ngpu_memory_utilisation = 0.5"))
    r = runner.invoke(app, ["check", str(f)])
    assert r.exit_code == 0, r.stderr
    out = " ".join(r.stdout.split())  # wrapped to the terminal: the words, whole
    assert "warning: " in out and "inference.vllm.gpu_memory_utilisation: not a field prime-rl " \
        "knows" in out and "did you mean 'gpu_memory_utilization'?" in out
    f = written(tmp_path, ("enable_lora = true", "enable_lora = true\nmy_own_engine_flag = 1"))
    r = runner.invoke(app, ["check", str(f)])
    assert r.exit_code == 0 and "my_own_engine_flag" not in r.stdout  # an extra key, no guess


def test_set_of_a_vllm_typo_says_so_in_the_report() -> None:
    r = runner.invoke(app, ["compile", str(EXAMPLES / "opd.toml"), "--json",
                            "--set", "inference.vllm.gpu_memory_utilisation=0.5"])
    assert r.exit_code == 0, r.stderr
    row = next(x for x in json.loads(r.stdout)["reads"]
               if x["field"] == "overrides.inference.vllm.gpu_memory_utilisation")
    assert "did you mean 'gpu_memory_utilization'?" in row["note"]
    r = runner.invoke(app, ["compile", str(EXAMPLES / "opd.toml"), "--json",
                            "--set", "inference.vllm.gpu_memory_utilization=0.5"])
    row = next(x for x in json.loads(r.stdout)["reads"]
               if x["field"] == "overrides.inference.vllm.gpu_memory_utilization")
    assert "did you mean" not in row["note"]


def test_the_real_loader_reads_the_same_values(tmp_path: Path) -> None:
    python = os.environ.get("WHILEAI_PRIME_RL_PYTHON")
    if not python:
        pytest.skip("needs prime-rl's own loader: set WHILEAI_PRIME_RL_PYTHON to a Python 3.12 with "
                    "a prime-rl checkout's packages/prime-rl-configs at 559b447 installed")
    files = {v: written(tmp_path / v.strip('"'), ("enable_lora = true",
                                                  f"enable_lora = {v}\ngpu_memory_utilisation = 0.5"))
             for v in ('"yes"', "1", '"maybe"')}
    done = subprocess.run([python, str(ROOT / "scripts" / "prime_rl_loader.py"), "--entry", "rl",
                           *map(str, files.values())], capture_output=True, text=True, timeout=300)
    verdicts = json.loads(done.stdout)
    for v, f in files.items():
        ours = runner.invoke(app, ["check", str(f)]).exit_code == 0
        assert verdicts[str(f)]["accepted"] == ours, (v, verdicts[str(f)])
