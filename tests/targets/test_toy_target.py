"""A target is one module and a registry entry: the toy target (tests/targets/toy.py) compiles,
explains, reports, writes with -o and reports JSON through every face, with no change to whileai."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from toy import TARGET
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.cli.recipe import main as recipe
from whileai.launch import load_manifest
from whileai.spec.load import load_spec
from whileai.targets import registry
from whileai.targets.compiled import Compiled

SPEC = Path(__file__).parents[2] / "examples" / "grpo.toml"


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    undo = registry.register(TARGET)
    yield
    undo()


def cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args), env={"COLUMNS": "1000"})  # one line each, unwrapped
    return r.exit_code, r.output


def test_the_registry_lists_and_finds_it() -> None:
    assert "toy" in registry.names() and registry.get("toy") is TARGET
    undo = registry.register(TARGET)
    undo()
    assert registry.get("toy") is TARGET  # undoing a second registration keeps the first
    registry._LOADED.pop("toy")
    with pytest.raises(wai.SpecError, match="one of prime-rl, trl"):
        registry.get("toy")


def test_api_compile_reads_the_spec() -> None:
    run = load_spec(SPEC)
    c = wai.compile(run, "toy")
    assert isinstance(c, Compiled) and c.main == "grpo.json" and c.target == "toy"
    doc = json.loads(c.text)
    assert doc == {"model": run.model, "steps": run.steps, "method": "grpo",
                   "batch": {"prompts": run.prompts, "samples": run.method.samples}}
    assert {r.field for r in c.reads} == {"model", "steps", "prompts", "type", "samples"}
    assert c.ignores and all(i.reason == "the toy target writes five keys only" for i in c.ignores)


def test_its_refused_option_is_one_error() -> None:
    with pytest.raises(wai.SpecError, match=r"--cpu applies to trl only \(the toy target has no "):
        wai.compile(load_spec(SPEC), "toy", cpu=True)


def test_cli_compile_report_json_and_write(tmp_path: Path) -> None:
    code, out = cli("compile", str(SPEC), "-b", "toy", "--plain")
    assert code == 0, out
    assert out.startswith("toy config: grpo.json (not written)")
    assert "model -> model = " in out and "run (once written with -o):" in out
    code, out = cli("compile", str(SPEC), "-b", "toy", "--json")
    data = json.loads(out)
    assert code == 0 and data["target"] == "toy" and data["pin"] == "toy 0.0.1"
    assert json.loads(data["files"]["grpo.json"])["method"] == "grpo"
    dest = tmp_path / "run.json"
    code, out = cli("compile", str(SPEC), "-b", "toy", "-o", str(dest), "--plain", "--check")
    assert code == 0, out
    assert len(dest.read_text().splitlines()) == 1 and json.loads(dest.read_text())["steps"] > 0
    assert f"checked: {dest} is one line of JSON" in out
    code, out = cli("compile", str(SPEC), "-b", "toy", "-o", str(tmp_path / "run.toml"))
    assert code == 2 and "a .json file or a directory (the toy target writes JSON)" in out


def test_compile_check_refused_by_the_target_exits_2_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The target's own check refusing the compiled file (the toy's: 3 prompts x 2 samples split
    into no whole micro-batch of 8) ends `compile --check` with exit 2, one error line naming the
    refusal, after the report; nothing is written. The same spec with 4 prompts passes."""
    spec = tmp_path / "odd.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "m"\nsteps = 5\nprompts = 3\n\n'
                    '[method]\ntype = "grpo"\nsamples = 2\n')
    monkeypatch.chdir(tmp_path)
    code, out = cli("compile", str(spec), "-b", "toy", "--plain", "--check")
    assert code == 2, out
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert errors == ["error: odd.json (not written): batch.prompts x batch.samples = 6 rollouts "
                      "per step, not a multiple of the toy trainer's micro-batch of 8"], out
    assert "checked:" not in out and sorted(p.name for p in tmp_path.iterdir()) == ["odd.toml"]
    spec.write_text(spec.read_text().replace("prompts = 3", "prompts = 4"))
    code, out = cli("compile", str(spec), "-b", "toy", "--plain", "--check")
    assert code == 0 and "checked: odd.json (not written) is one line of JSON" in out, out
    bad = tmp_path / "b.json"
    bad.write_text('{"batch": {"prompts": 3, "samples": 2}}\n')
    code, out = cli("check", str(bad))
    assert code == 2 and f"error: {bad}: batch.prompts x batch.samples = 6 rollouts" in out, out


def test_compile_check_refused_with_out_takes_the_write_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o` writes the files so the target can check them in place; a refusal takes the whole
    write back: no new file stays, and a file an earlier compile wrote there is as it was."""
    spec = tmp_path / "odd.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "m"\nsteps = 5\nprompts = 4\n\n'
                    '[method]\ntype = "grpo"\nsamples = 2\n')
    monkeypatch.chdir(tmp_path)
    out_dir = tmp_path / "out"
    code, out = cli("compile", str(spec), "-b", "toy", "--plain", "--check", "-o", str(out_dir))
    assert code == 0 and (out_dir / "odd.json").is_file(), out
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    spec.write_text(spec.read_text().replace("prompts = 4", "prompts = 3"))
    code, out = cli("compile", str(spec), "-b", "toy", "--plain", "--check", "-o", str(out_dir))
    assert code == 2 and "nothing was written: the target's own check refused it" in out, out
    assert [line for line in out.splitlines() if line.startswith("error:")] == [
        f"error: {out_dir / 'odd.json'}: batch.prompts x batch.samples = 6 rollouts per step, not a "
        "multiple of the toy trainer's micro-batch of 8"], out
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before
    fresh = tmp_path / "fresh"
    code, out = cli("compile", str(spec), "-b", "toy", "--plain", "--check", "-o", str(fresh))
    assert code == 2 and not fresh.exists(), out


def test_cli_explain_names_each_key() -> None:
    code, out = cli("explain", str(SPEC), "-b", "toy")
    assert code == 0, out
    for key in ("model", "steps", "method", "batch.prompts", "batch.samples"):
        assert key in out
    assert "(not emitted)" in out


def test_cli_check_sends_a_file_to_the_target_that_claims_it(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_text('{"a": 1}\n')
    bad.write_text("{}\n{}\n")
    code, out = cli("check", str(good))
    assert code == 0 and f"ok: {good} is one line of JSON" in out, out
    code, out = cli("check", str(good), str(bad))
    assert code == 2 and f"error: {bad}: not one line of JSON" in out, out
    toml = tmp_path / "c.toml"
    toml.write_text("max_steps = 1\n")
    code, out = cli("check", str(toml))  # still prime-rl's
    assert "prime-rl" in out, out


def test_preflight_has_nothing_to_probe_and_is_ready() -> None:
    """The toy's `probes` is []: no server line, one line saying so, the machine, and ready."""
    code, out = cli("preflight", str(SPEC), "-b", "toy", "--student-endpoint", "http://127.0.0.1:9/v1")
    lines = out.splitlines()
    assert code == 0, out
    assert "skip servers: nothing to probe: the run calls no server it does not start itself" in lines
    assert "skip machine: GPUs: the run needs no GPU (the toy trains nothing)" in lines
    assert not any("endpoint" in line or "checkout" in line for line in lines), out
    assert lines[-1].startswith("preflight ") and "(toy): " in lines[-1] and lines[-1].endswith(": ready")


def test_rehearse_and_migrate_say_so_in_one_line_each(tmp_path: Path) -> None:
    """rehearsal = None and migration = None: one line each, nothing run, read or written."""
    code, out = cli("rehearse", str(SPEC), "-b", "toy")
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith("error: --target: toy is not rehearsable;") and "rehearsable: prime-rl" in out
    old, new = tmp_path / "old.json", tmp_path / "new"
    old.write_text("{}\n")
    code, out = cli("migrate", str(old), "-b", "toy", "-o", str(new))
    assert code == 0 and out.count("\n") == 1, out
    assert out.startswith("nothing to migrate for toy: ") and "older files of prime-rl" in out
    assert not new.exists() and old.read_text() == "{}\n"
def test_its_own_rule_is_listed_after_the_shared_ones_while_registered() -> None:
    from whileai.rules.research import RULES

    listed = [r.id for r in registry.rules()]
    assert listed[:len(RULES)] == [r.id for r in RULES] and listed[-1] == "toy-long-run"
    code, out = cli("rules")
    assert code == 0 and "toy-long-run" in out
    registry._LOADED.pop("toy")
    assert "toy-long-run" not in [r.id for r in registry.rules()]
    registry.register(TARGET)


def test_the_paired_arms_recipe_plans_dry_runs_and_validates_it(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The one recipe (recipes/04-train/<target>/run.py is `main(target)`) over the toy's launcher."""
    code = recipe("toy", "Paired toy arms.", ["--dry-run", "--out", str(tmp_path), "--repeats", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    m = load_manifest(tmp_path / "toy")
    assert sorted(m.arms) == ["grpo", "grpo@2", "opd", "opd@2", "opsd", "opsd@2", "sft", "sft@2"]
    assert m.meta["baseline"] == "grpo" and m.meta["metric"] == "none: a toy"
    assert m.arms["opd"].spec.argv == ["toy-train", "opd.json"] and m.arms["opd"].spec.target == "toy"
    assert json.loads((tmp_path / "toy" / "opd@2" / "opd.json").read_text())["method"] == "opd"
    assert f"opd: {tmp_path / 'toy' / 'opd' / 'opd.json'} [planned]" in out
    assert "compared: opd vs grpo, opsd vs grpo, sft vs grpo, opd vs sft" in out
    assert f"toy config: {tmp_path / 'toy' / 'grpo' / 'grpo.json'}" in out  # the reports
    code = recipe("toy", None, ["--validate", "--out", str(tmp_path), "--arms", "grpo,opd"])
    out = capsys.readouterr().out
    assert code == 0 and f"opd: ok: {tmp_path / 'toy' / 'opd' / 'opd.json'} is one line of JSON" in out
    (tmp_path / "toy" / "grpo" / "grpo.json").write_text("{}\n{}\n")  # the check reads the folder
    assert TARGET.launcher.validate({"grpo": tmp_path / "toy" / "grpo"},
                                    {"grpo": wai.compile(load_spec(SPEC), "toy")}, None) == 1  # type: ignore[arg-type]
    code = recipe("toy", None, ["--collect", "--out", str(tmp_path), "--tag", "none"])
    assert code == 2 and "error: --tag: 'none' is not allowed" in capsys.readouterr().err


def test_a_target_without_a_launcher_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    class NoRun(type(TARGET)):  # type: ignore[misc]
        name = "toy-norun"
        launcher = None

    undo = registry.register(NoRun())
    try:
        assert recipe("toy-norun", None, ["--dry-run"]) == 2
    finally:
        undo()
    assert capsys.readouterr().err == "error: toy-norun has no paired-arms run (its target has no launcher)\n"
