"""A taskset typo is an error (exit 2, with a did-you-mean), in a spec and in `whileai check`;
hub ids (owner/name@version) and a label beside `data` keep passing."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from whileai.cli.app import app

runner = CliRunner()
MODEL = 'model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'


def compile_spec(tmp_path: Path, head: str) -> tuple[int, str, str]:
    spec = tmp_path / "s.toml"
    spec.write_text(MODEL + head + '[method]\ntype = "grpo"\n')
    r = runner.invoke(app, ["compile", str(spec)])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("head,field,guess", [
    ('taskset = "gsm8kk"\n', "taskset", "gsm8k"),
    ('taskset = "revers-text"\n', "taskset", "reverse-text"),
    ('taskset = "gsm8k"\n[eval]\ntaskset = "wordel"\n', "eval.taskset", "wordle"),
])
def test_a_taskset_typo_is_refused_with_a_guess(tmp_path: Path, head: str, field: str, guess: str) -> None:
    code, out, err = compile_spec(tmp_path, head)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: {field}: ") and f"did you mean {guess!r}" in err


def test_a_mixture_source_typo_names_its_source(tmp_path: Path) -> None:
    code, _, err = compile_spec(tmp_path, 'taskset = "gsm8k"\n[[sources]]\ntaskset = "wordl"\n')
    assert code == 2 and err.startswith("error: sources[0].taskset: ") and "'wordle'" in err


@pytest.mark.parametrize("taskset", ["someone/my-env@0.1", "primeintellect/wordle@0.1.0", "aime25"])
def test_hub_ids_and_workspace_members_pass(tmp_path: Path, taskset: str) -> None:
    code, out, err = compile_spec(tmp_path, f'taskset = "{taskset}"\n')
    assert code == 0, err


def test_a_label_beside_own_data_is_no_typo() -> None:
    from whileai.spec.load import load_spec

    assert load_spec(Path(__file__).parents[2] / "examples" / "own-data" / "grpo.toml").taskset == "my-qa"


def test_check_refuses_a_taskset_typo_in_a_hand_written_toml(tmp_path: Path) -> None:
    out = tmp_path / "rl.toml"
    r = runner.invoke(app, ["compile", str(Path(__file__).parents[2] / "examples" / "grpo.toml"),
                            "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    out.write_text(out.read_text().replace('id = "reverse-text"', 'id = "revers-text"'))
    r = runner.invoke(app, ["check", str(out)])
    assert r.exit_code == 2
    assert "orchestrator.train.source[0].env.taskset.id: 'revers-text' is not allowed" in r.stderr
    assert "did you mean 'reverse-text'" in r.stderr
    out.write_text(out.read_text().replace('id = "revers-text"', 'id = "someone/my-env@0.1"'))
    r = runner.invoke(app, ["check", str(out)])
    assert r.exit_code == 0 and "not checked" in r.stdout
