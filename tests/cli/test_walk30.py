"""Issue 30's last fresh walk: the lines a newcomer read that said too little, each now says what
is wrong and what to write instead (one line, exit 2)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.app import app


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_grpo_on_own_data_without_a_reward_says_it_is_required(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "own-data" / "tasks.jsonl", tmp_path / "tasks.jsonl")
    spec = tmp_path / "s.toml"
    spec.write_text('taskset = "my-qa"\nmodel = "Qwen/Qwen3-0.6B"\ndata = "tasks.jsonl"\n'
                    '[method]\ntype = "grpo"\n')
    code, _, err = cli("compile", str(spec), "-b", "trl", "-o", str(tmp_path / "run"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "None" not in err and err.startswith("error: reward: missing; GRPO learns from a reward")
    assert 'reward = "rewards.contains_answer"' in err
    assert not (tmp_path / "run").exists()


def test_an_unknown_field_reads_as_one_sentence_with_quoted_names(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "Qwen/Qwen3-0.6B"\nstep = 3\n'
                    '[method]\ntype = "grpo"\n')
    code, _, err = cli("compile", str(spec))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "error: step: unknown field (did you mean 'steps'?); the fields here are 'taskset', " in err
    assert err.rstrip().endswith("'accept' and 'then'") and "then (did you mean" not in err


def test_check_on_a_file_no_entry_point_accepts_says_so_plainly(tmp_path: Path) -> None:
    cfg = tmp_path / "h.toml"
    cfg.write_text('[model]\nname = "Qwen/Qwen3-0.6B"\nmax_stepz = 3\n')
    code, _, err = cli("check", str(cfg))
    last = err.strip().splitlines()[-1]
    assert code == 2 and "none accepts it" not in err
    assert f"{cfg} is not a valid prime-rl rl config: the 3 problems above" in last
    assert "No prime-rl entry point accepts it; it was checked as rl (`uv run rl`)" in last
    assert "--entry (sft, " in last


def test_check_that_cannot_run_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile --check -t trl` without TRL: one line, exit 2, and no run folder left behind (it
    wrote the run, then said it could not check it)."""
    monkeypatch.setitem(sys.modules, "trl", None)  # import trl raises ImportError, as uninstalled
    out = tmp_path / "run"
    code, stdout, err = cli("compile", str(EXAMPLES / "grpo.toml"), "-b", "trl", "--check", "-o", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1 and stdout == ""
    assert "TRL is not installed" in err and "nothing was written" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_target_name_in_capitals_gets_a_did_you_mean() -> None:
    code, _, err = cli("compile", str(EXAMPLES / "opd.toml"), "-b", "TRL")
    assert code == 2 and "(did you mean 'trl'? target names are lower case)" in err


def test_check_on_a_folder_that_is_no_trl_run_says_so(tmp_path: Path) -> None:
    """It said '--check: TRL is not installed' (a flag check has not) for a folder of specs."""
    (tmp_path / "specs").mkdir()
    code, _, err = cli("check", str(tmp_path / "specs"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--check" not in err
    assert f"config: {tmp_path / 'specs'} is a folder without config.yaml" in err


def test_migrate_on_a_file_already_at_the_pin_says_there_is_nothing_to_migrate(tmp_path: Path) -> None:
    """It printed 'looks written for prime-rl 559b447; migrating to 559b447' and a list of every
    key as 'kept'."""
    cur = tmp_path / "cur.toml"
    assert cli("compile", str(EXAMPLES / "opd.toml"), "-o", str(cur))[0] == 0
    code, out, _ = cli("migrate", str(cur), "-o", str(tmp_path / "new.toml"))
    assert code == 0 and "nothing to migrate" in out and "kept:" not in out
    assert "migrating to" not in out and (tmp_path / "new.toml").read_text() == cur.read_text()


def test_inspect_out_named_like_a_file_is_refused(tmp_path: Path) -> None:
    """`inspect ... -o page.html` made a folder called page.html (as -t trl -o run.toml did)."""
    (tmp_path / "run").mkdir()
    code, _, err = cli("inspect", "--run", str(tmp_path / "run"), "-o", str(tmp_path / "page.html"))
    assert code == 2 and "a folder (inspect writes inspect.html and inspect.json into it)" in err
    assert f"e.g. --out {tmp_path / 'page'}" in err and not (tmp_path / "page.html").exists()


def test_tiny_refuses_a_file_named_output_before_building_models(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output name is refused before the tiny models are built (a cold build takes minutes)."""
    from whileai.tokenview import tiny_models

    def build(*a: object, **k: object) -> dict[str, object]:
        raise AssertionError("the tiny models were built before the output name was checked")

    monkeypatch.setattr(tiny_models, "tiny_flags", build)
    code, _, err = cli("inspect", str(EXAMPLES / "opd.toml"), "--tiny", "-o", str(tmp_path / "p.html"))
    assert code == 2 and "not a .html file" in err



def test_grpo_with_one_sample_says_why_two_are_needed(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "Qwen/Qwen3-0.6B"\n[method]\ntype = "grpo"\n'
                    'samples = 1\n')
    code, _, err = cli("compile", str(spec))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "greater than or equal to 2: GRPO's advantage compares each completion" in err
