"""The bundled examples pass --strict on every target, alone and together: a warning that does
not apply is accepted in the spec with its reason (`accept`), and needs-grpo-arm is met by a GRPO
arm compiled alongside. A lone distillation spec still fails; a bad acceptance is one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.spec.load import load_spec

EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
EVERY = sorted((ROOT / "examples").rglob("*.toml"))  # the subfolders' too (scale, own-data, ...)
TARGETS = ["prime-rl", "trl"]
# what a target cannot compile, and the refusal that says so (each its own test elsewhere)
CANNOT = {("prime-rl", "own-data/grpo"): "error: data: ", ("prime-rl", "own-data/opsd"): "error: data: ",
          ("prime-rl", "recovery/opd"): "error: data: ", ("trl", "mixtures/grpo-opd"): "error: sources: ",
          ("trl", "tasksets/gsm8k-opd"): "error: taskset: 'gsm8k'"}


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def without_accept(spec: Path, tmp: Path, keep: tuple[str, ...] = ()) -> Path:
    """The spec file with its [accept] table cut down to `keep` (the others' lines dropped)."""
    out, table = [], False
    for line in spec.read_text().splitlines():
        if line.startswith("["):
            table = line.strip() == "[accept]"
        if table and "=" in line and line.split("=")[0].strip() not in keep:
            continue
        out.append(line)
    path = tmp / spec.name
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_passes_strict_alone(spec: Path, target: str) -> None:
    code, _, err = cli("compile", str(spec), "-b", target, "--strict", "--plain")
    assert code == 0, err


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("spec", EVERY, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_every_example_in_every_folder_passes_strict_where_its_target_compiles_it(
        spec: Path, target: str, tmp_path: Path) -> None:
    """Each example shows the right practice (a true holdout) or accepts a warning with its
    reason; a target that cannot compile one refuses it in one line, as CANNOT lists."""
    name = str(spec.relative_to(ROOT / "examples").with_suffix(""))
    code, _, err = cli("compile", str(spec), "-b", target, "--strict", "--plain",
                       "-o", str(tmp_path / ("run" if target == "trl" else "run.toml")))
    if (target, name) in CANNOT:
        assert code == 2 and err.startswith(CANNOT[target, name]) and "--strict" not in err, err
    else:
        assert code == 0, err


@pytest.mark.parametrize("target", TARGETS)
def test_the_examples_pass_strict_together(target: str) -> None:
    code, out, err = cli("compile", *map(str, EXAMPLES), "-b", target, "--strict", "--json")
    assert code == 0, err
    reports = json.loads(out)
    for r in reports:
        assert all(w["accepted"] for w in r["warnings"]), r["main"]
        fired = {w["rule"] for w in r["warnings"]}
        assert "needs-grpo-arm" not in fired  # examples/grpo.toml is compiled alongside
    assert sum("needs-grpo-arm is met: the GRPO arm 'grpo'" in line for r in reports
               for line in r["summary"]) == 3


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["opd", "opsd", "sft"])
def test_a_lone_distillation_spec_still_fails_strict_with_needs_grpo_arm(
        tmp_path: Path, name: str, target: str) -> None:
    """Without its acceptance and without a GRPO arm beside it, the rule fires; with a GRPO arm on
    the same student, taskset and holdout, it is met; with one on another holdout, it is not."""
    others = {"opd": ("teacher-ceiling",), "sft": ("teacher-ceiling",),
              "opsd": ("opsd-small-model", "opsd-unanchored")}[name]
    spec = without_accept(ROOT / "examples" / f"{name}.toml", tmp_path, keep=others)
    code, _, err = cli("compile", str(spec), "-b", target, "--strict")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--strict: warning [needs-grpo-arm] is an error" in err
    grpo = str(ROOT / "examples" / "grpo.toml")
    assert cli("compile", grpo, str(spec), "-b", target, "--strict")[0] == 0
    elsewhere = tmp_path / "other" / "grpo.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(Path(grpo).read_text().replace('"train[90%:]"', '"train[95%:]"'))
    code, _, err = cli("compile", str(elsewhere), str(spec), "-b", target, "--strict")
    assert code == 2 and f"{spec}: --strict: warning [needs-grpo-arm]" in err


def test_an_accepted_warning_is_printed_marked_in_every_report_form(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.report.render import print_report

    spec = ROOT / "examples" / "opd.toml"
    reason = load_spec(spec).accept["teacher-ceiling"]
    _, plain, _ = cli("compile", str(spec), "--plain")
    said = " ".join(plain.split())
    assert "warning [teacher-ceiling] accepted: teacher and student are the same size" in said
    assert f"accepted because: {' '.join(reason.split())}" in said
    print_report(wai.compile(load_spec(spec)))
    rich = " ".join(capsys.readouterr().out.split())
    assert "warning [teacher-ceiling] accepted:" in rich and " ".join(reason.split()) in rich
    _, out, _ = cli("compile", str(spec), "--json")
    warned = {w["rule"]: w for w in json.loads(out)["warnings"]}
    assert warned["teacher-ceiling"]["accepted"] == reason
    bare = without_accept(spec, tmp_path)
    unaccepted = {w["rule"]: w for w in json.loads(cli("compile", str(bare), "--json")[1])["warnings"]}
    assert unaccepted["teacher-ceiling"]["accepted"] is None
    assert "accepted" not in cli("compile", str(bare), "--plain")[1]


def test_the_api_passes_strict_with_acceptances_and_says_one_that_does_not_apply() -> None:
    run = load_spec(ROOT / "examples" / "opsd.toml")
    for target in TARGETS:
        c = wai.compile(run, target, strict=True)
        assert c.warnings and all(w.accepted == run.accept[w.rule] for w in c.warnings)
    # TRL honours anchor 'initial': opsd-unanchored does not fire there, and the report says so
    notes = [h for h in wai.compile(run, "trl").header() if h.startswith("accepted ")]
    assert notes == [f"accepted opsd-unanchored but it does not apply to this run (reason given: "
                     f"{run.accept['opsd-unanchored']})"]
    assert "opsd-unanchored" in {w.rule for w in wai.compile(run, "prime-rl").warnings}
    bare = run.model_copy(update={"accept": {}})
    with pytest.raises(SpecError, match=r"--strict: warning \[opsd-small-model\]"):
        wai.compile(bare, "trl", strict=True)


@pytest.mark.parametrize("table, words", [
    ('teacher-cieling = "demo"', ["accept.teacher-cieling: 'teacher-cieling' is not allowed; a rule id: "
                                  "one of ", "needs-grpo-arm", "did you mean 'teacher-ceiling'?"]),
    ('teacher-ceiling = ""', ["accept.teacher-ceiling: '' is not allowed; a reason"]),
    ('teacher-ceiling = "   "', ["accept.teacher-ceiling: '   ' is not allowed; a reason"]),
    ('"Teacher Ceiling" = "demo"', ["accept: 'Teacher Ceiling' is not allowed; a rule id"]),
    ('teacher-ceiling = 3', ["accept.teacher-ceiling: 3 is not allowed"]),
])
def test_a_bad_acceptance_is_exit_2_in_one_line(tmp_path: Path, table: str, words: list[str]) -> None:
    spec = tmp_path / "opd.toml"
    spec.write_text(re.sub(r"\[accept\]\n(.+\n)+", f"[accept]\n{table}\n",
                           (ROOT / "examples" / "opd.toml").read_text()))
    for target in TARGETS:
        code, _, err = cli("compile", str(spec), "-b", target)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert all(w in err for w in words), err


@pytest.mark.parametrize("recipe", ["prime-rl", "trl"])
def test_the_recipes_pass_strict_on_the_bundled_arms_and_fail_on_an_unaccepted_warning(
        tmp_path: Path, recipe: str) -> None:
    script = ROOT / "recipes" / "04-train" / recipe / "run.py"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), "--dry-run", "--strict", *args],
                              capture_output=True, text=True, timeout=300)

    p = run("--out", str(tmp_path / "all"))
    assert p.returncode == 0, p.stderr
    assert "needs-grpo-arm is met" in p.stdout and "warning [needs-grpo-arm]" not in p.stdout
    hot = without_accept(ROOT / "examples" / "opsd.toml", tmp_path,
                         keep=("opsd-small-model", "opsd-unanchored", "needs-grpo-arm"))
    hot.write_text(hot.read_text().replace('type = "opsd"', 'type = "opsd"\ntemperature = 0.7'))
    p = run("--arms", f"grpo,{hot}", "--out", str(tmp_path / "bare"))
    assert p.returncode == 2 and "--strict: warning [temperature-off-policy] is an error" in p.stderr
    assert not (tmp_path / "bare").exists() or not any((tmp_path / "bare").rglob("*.toml"))
