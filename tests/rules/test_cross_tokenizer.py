"""A Qwen3 student with a Llama teacher (issue 41): with both tokenizers' files at hand (a local
Hugging Face cache, built here; nothing from a hub) TRL compiles a GOLD run and prime-rl and verl
refuse (exit 2, naming -b trl); with no files the mismatch is a guess from the model families: a
warning on prime-rl and verl, an error under --strict, and still GOLD on TRL."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import needs
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.rules.tokenizers import judge

STUDENT, TEACHER = "Qwen/Qwen3-0.6B", "meta-llama/Llama-3.2-1B-Instruct"
runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A hub cache holding both models' tokenizer files (tiny stand-ins of each family)."""
    needs("tokenizers", "transformers")
    from whileai.tasksets.builtin import default_texts
    from whileai.vocab.tiny import stand_in

    cache = tmp_path / "hub"
    for name, family in ((STUDENT, "qwen3"), (TEACHER, "llama")):
        repo = cache / ("models--" + name.replace("/", "--"))
        stand_in(repo / "snapshots" / "c0ffee", family, default_texts(), family)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text("c0ffee")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture
def no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))


def opd(url: str = "http://localhost:8001/v1") -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=STUDENT,
                       method=wai.OPD(wai.Endpoint(url=url, model=TEACHER)))


def spec(tmp_path: Path) -> Path:
    path = tmp_path / "opd.toml"
    path.write_text(f'taskset = "reverse-text"\nmodel = "{STUDENT}"\n\n[method]\ntype = "opd"\n'
                    f'teacher = {{ url = "http://localhost:8001/v1", model = "{TEACHER}" }}\n')
    return path


@pytest.mark.parametrize("target", ["prime-rl", "verl"])
def test_measured_mismatch_is_an_error_naming_trl(hub: Path, tmp_path: Path, target: str) -> None:
    assert judge(opd()).basis == "measured"
    out = tmp_path / "out"
    r = runner.invoke(app, ["compile", str(spec(tmp_path)), "-t", target, "-o", str(out)])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert line.count("\n") == 0 and "method.teacher.model" in line and "-b trl" in line, line
    assert "Traceback" not in r.output and not out.exists()


def test_a_sources_teacher_measured_to_differ_is_an_error_too(hub: Path, tmp_path: Path) -> None:
    """A mixture's source teacher is scored on the student's ids like the run's own: a GRPO run
    with an OPD source whose teacher's tokenizer files differ is refused, naming that source."""
    path = tmp_path / "mix.toml"
    path.write_text(f'taskset = "reverse-text"\nmodel = "{STUDENT}"\n\n[method]\ntype = "grpo"\n\n'
                    f'[[sources]]\ntaskset = "reverse-text"\nratio = 1.0\n[sources.method]\n'
                    f'type = "opd"\nteacher = {{ url = "http://localhost:8001/v1", model = "{TEACHER}" }}\n')
    r = runner.invoke(app, ["compile", str(path), "-t", "prime-rl", "-o", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert line.startswith("error: sources[0].method.teacher.model") and "-b trl" in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("target", ["prime-rl", "verl"])
def test_guessed_mismatch_warns_and_strict_refuses(no_files: None, tmp_path: Path, target: str) -> None:
    assert judge(opd()).basis == "guessed"
    c = wai.compile(opd(), target=target)
    found = {w.rule: w.message for w in c.warnings}
    assert "-b trl" in found["tokenizer-mismatch"]
    r = runner.invoke(app, ["compile", str(spec(tmp_path)), "-t", target, "--strict",
                            "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "tokenizer-mismatch" in r.stderr, r.output


@pytest.mark.parametrize("files", ["hub", "no_files"])
def test_trl_compiles_gold(files: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Measured or guessed, TRL writes a GOLD run (train.py with GOLDConfig, ULD on) and no
    tokenizer warning; TRL's own parser with GOLDConfig accepts it where trl is installed."""
    request.getfixturevalue(files)
    out = tmp_path / "out"
    r = runner.invoke(app, ["compile", str(spec(tmp_path)), "-b", "trl", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "GOLDConfig" in (out / "train.py").read_text()
    config = (out / "config.yaml").read_text()
    assert "use_uld_loss: true" in config and f"teacher_tokenizer_name_or_path: {TEACHER}" in config
    assert "tokenizer-mismatch" not in r.output
    pytest.importorskip("trl")
    from whileai.targets.trl.check import check_dir

    assert check_dir(out) == []


def test_gold_says_what_it_samples_per_prompt(no_files: None) -> None:
    """The report names the trainer that ignores method.samples: GOLD is written with
    num_generations 1 (GOLDConfig has the key, gold_config.py:257), not 'no num_generations'."""
    c = wai.compile(opd(), target="trl")
    said = [i for i in c.to_dict()["ignores"] if i["field"] in ("samples", "method.samples")]
    assert len(said) == 1 and "GOLDTrainer is written with num_generations 1" in said[0]["reason"], said


def test_served_teacher_with_another_tokenizer_is_refused_on_trl(no_files: None) -> None:
    with pytest.raises(SpecError, match="method.teacher.url.*GOLD"):
        wai.compile(opd("http://10.0.0.5:8000/v1"), target="trl")
