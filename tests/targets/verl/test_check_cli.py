"""`whileai check run.sh` on verl scripts: verl's own check (its verdicts stood in by the ones
tests/fixtures/verl/lax.json recorded, or verl absent), then whileai's own rules, one error line
each, through the CLI as a user runs it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import verl_python
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.targets import registry
from whileai.targets.verl import check as verl_check

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "verl"
LAX = json.loads((FIXTURES / "lax.json").read_text())
BY_NAME = {v["name"]: v for v in LAX["variants"]}
LAUNCH = {"main_ppo": "python3 -m verl.trainer.main_ppo",
          "main_generation_server": "python3 -m verl.trainer.main_generation_server",
          "sft_trainer": "torchrun --standalone --nnodes=1 --nproc_per_node=8 -m verl.trainer.sft_trainer"}


@pytest.fixture(autouse=True)
def verl_target(monkeypatch):
    """The verl target's `whileai check` faces (its own where the registry has it)."""
    if "verl" not in registry.names():
        undo = registry.register(SimpleNamespace(name="verl", claims=verl_check.claims,  # type: ignore[arg-type]
                                                 check=verl_check.check))
        yield
        undo()
    else:
        yield


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def run_dir(tmp_path: Path, variant: dict) -> Path:
    """A run folder: the variant's command as a run.sh, and the data files its valid base names."""
    for f in ("data/train.parquet", "data/test.parquet", "data/prompts.parquet", "data/sft.parquet"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"")
    lines = [LAUNCH[variant["kind"]], *(shlex.quote(o) for o in variant["overrides"])]
    text = "#!/usr/bin/env bash\nset -euo pipefail\n\n" + " \\\n  ".join(lines) + "\n"
    (tmp_path / "run.sh").write_text(text)
    return tmp_path / "run.sh"


def stand_in(monkeypatch, verdict: dict) -> None:
    """verl 0.9.1 'installed', answering with a verdict lax.json recorded."""
    monkeypatch.setattr(verl_check, "available", lambda: True)
    monkeypatch.setattr(verl_check, "installed_version", lambda: verl_check.PIN)
    monkeypatch.setattr(verl_check, "check_command", lambda cmd: verl_check.CommandVerdict(
        cmd.kind, verdict["accepted"], verdict["step"], verdict["error"], 0.3, cmd.line))


@pytest.mark.parametrize("name", LAX["meta"]["lax"])
def test_each_mistake_verl_accepts_is_one_error_line(name, tmp_path, monkeypatch):
    """verl's recorded verdict (accepts, or a crash naming no key) then whileai's one line: exit 2."""
    variant = BY_NAME[name]
    stand_in(monkeypatch, variant["verl"])
    code, out, err = cli("check", str(run_dir(tmp_path, variant)))
    assert code == 2, (out, err)
    mine = [ln for ln in err.splitlines() if "verl 0.9.1 lets it through" in ln or
            "verl 0.9.1 crashes" in ln]
    assert len(mine) == 1, err
    line = mine[0]
    assert line.startswith(f"error: {tmp_path / 'run.sh'}:4: {variant['kind']}: ")
    assert "allowed: " in line and line.rstrip().endswith("]")  # the rule's id
    if variant["verl"]["accepted"]:
        assert f"ok: {tmp_path / 'run.sh'}:4: {variant['kind']}: verl 0.9.1 accepts it" in out
        assert len(err.splitlines()) == 1


def test_a_valid_run_passes_both_checks(tmp_path, monkeypatch):
    stand_in(monkeypatch, BY_NAME["grpo-base"]["verl"])
    code, out, err = cli("check", str(run_dir(tmp_path, BY_NAME["grpo-base"])))
    assert (code, err) == (0, "")
    assert out.startswith(f"ok: {tmp_path / 'run.sh'}:4: main_ppo: verl 0.9.1 accepts")


def test_without_verl_whileais_rules_still_run(tmp_path, monkeypatch):
    monkeypatch.setattr(verl_check, "available", lambda: False)
    script = run_dir(tmp_path, BY_NAME["lr-not-a-number"])
    code, out, err = cli("check", str(script))
    lines = err.splitlines()
    assert code == 2 and out == ""
    assert lines[0] == f"error: {script}: not checked by verl: {verl_check.NEEDS}"
    assert lines[1] == (f"error: {script}:4: main_ppo: actor_rollout_ref.actor.optim.lr=abc: 'abc' is not a "
                        "number; allowed: a number (verl's default 1e-06) (verl 0.9.1 lets it through: no "
                        "config check reads the learning rate; the optimizer fails at start-up) [type]")
    assert len(lines) == 2


def test_data_files_are_read_beside_the_script_or_from_an_earlier_step(tmp_path, monkeypatch):
    """The SFT run: convert.py writes data/sft.parquet before the trainer reads it; the prompts
    file must be in the folder."""
    monkeypatch.setattr(verl_check, "available", lambda: False)
    script = tmp_path / "run.sh"
    script.write_text((FIXTURES / "runs" / "sft" / "run.sh").read_text())
    code, _, err = cli("check", str(script))
    assert code == 2 and err.splitlines()[1:] == [
        f"error: {script}:7: main_generation_server: data.train_files=data/prompts.parquet: "
        "data/prompts.parquet is not in the run folder and no earlier step of the run.sh writes it; "
        "allowed: a file of the run folder, or one an earlier step of run.sh writes (verl 0.9.1 lets it "
        "through: the file is first opened when the trainer starts) [data-file]"]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "prompts.parquet").write_bytes(b"")
    code, _, err = cli("check", str(script))
    assert code == 2 and err.splitlines() == [f"error: {script}: not checked by verl: {verl_check.NEEDS}"]


def test_pwd_paths_are_the_run_folder(tmp_path, monkeypatch):
    """whileai's own run.sh names its files as $PWD/data/... (it cds to its folder first)."""
    monkeypatch.setattr(verl_check, "available", lambda: False)
    variant = {**BY_NAME["grpo-base"], "overrides": [
        o.replace("=data/", "=$PWD/data/") for o in BY_NAME["grpo-base"]["overrides"]]}
    script = run_dir(tmp_path, variant)
    script.write_text(script.read_text().replace("'", ""))  # $PWD expands, as bash expands it
    assert "$PWD/data/train.parquet" in script.read_text()
    code, _, err = cli("check", str(script))
    assert err.splitlines() == [f"error: {script}: not checked by verl: {verl_check.NEEDS}"]
    (tmp_path / "data" / "test.parquet").unlink()
    code, _, err = cli("check", str(script))
    assert code == 2 and err.splitlines()[1].startswith(
        f"error: {script}:4: main_ppo: data.val_files={tmp_path.resolve()}/data/test.parquet: "
        "data/test.parquet is not in the run folder")


def test_another_config_is_named_not_checked(tmp_path, monkeypatch):
    monkeypatch.setattr(verl_check, "available", lambda: False)
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo --config-name='ppo_megatron_trainer.yaml' \\\n"
                      "  actor_rollout_ref.actor.megatron.tensor_model_parallel_size=8\n")
    code, out, err = cli("check", str(script))
    assert out.splitlines() == [f"warning: {script}:1: main_ppo: whileai's own rules know verl's "
                                "ppo_trainer; --config-name=ppo_megatron_trainer is not checked by them"]
    assert err.splitlines() == [f"error: {script}: not checked by verl: {verl_check.NEEDS}"]


@pytest.mark.slow
def test_live_verl_accepts_and_whileai_refuses(tmp_path):
    """With verl 0.9.1 itself (WHILEAI_VERL_PYTHON): verl's check passes lr=abc, whileai's refuses it."""
    import os
    import subprocess

    python = verl_python()
    script = run_dir(tmp_path, BY_NAME["lr-not-a-number"])
    code = ("import sys; from pathlib import Path; from whileai.targets.verl import check as verl_check; "
            f"[print(level, line) for level, line in verl_check.check(Path({str(script)!r}), 'auto')]")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 2, done.stderr[-2000:]
    assert lines[0].startswith(f"ok {script}:4: main_ppo: verl 0.9.1 accepts it")
    assert lines[1].startswith(f"error {script}:4: main_ppo: actor_rollout_ref.actor.optim.lr=abc: ")
