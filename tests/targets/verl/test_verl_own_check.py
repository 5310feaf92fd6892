"""verl 0.9.1's own check, replayed offline from tests/fixtures/verl/lax.json.

lax.json is written by `scripts/gen_verl_fixture.py --verl-python PY` (PY: a Python with verl
0.9.1; docs/verl.md). It records what verl itself says about each mistake of battery.toml
applied to a valid run, so a reader (and whileai's own rules) can see which mistakes verl lets
through. The live test re-runs verl's check where verl can be imported (or WHILEAI_VERL_PYTHON
names a Python that has it); elsewhere it is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from whileai.errors import SpecError
from whileai.targets.verl import check as verl_check

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "verl"
LAX = json.loads((FIXTURES / "lax.json").read_text())
BATTERY = tomllib.loads((FIXTURES / "battery.toml").read_text())
REGENERATE = "regenerate: python scripts/gen_verl_fixture.py --verl-python PY (docs/verl.md)"
# the mistakes the issue (#31) says verl 0.9.1 lets through, as battery.toml names them
ISSUE_LAX = ["lr-not-a-number", "added-key-typo", "rollout-tp-3-of-8", "memory-utilization-1.7",
             "adv-estimator-typo", "rollout-name-typo", "temperature-0-with-n-8", "missing-data-file",
             "dynamic-bsz-skips-divisibility", "train-batch-not-a-number"]


def _generator():
    path = ROOT / "scripts" / "gen_verl_fixture.py"
    spec = importlib.util.spec_from_file_location("gen_verl_fixture", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fixture_is_current():
    """The overrides lax.json recorded are what the script would send for today's battery."""
    sent = _generator().cases(BATTERY)
    assert [v["name"] for v in LAX["variants"]] == [v["name"] for v in BATTERY["variant"]], REGENERATE
    for v in LAX["variants"]:
        assert (v["kind"], v["overrides"]) == (sent[v["name"]]["kind"], sent[v["name"]]["overrides"]), \
            f"{v['name']}: {REGENERATE}"
    assert LAX["meta"]["verl"] == verl_check.PIN


@pytest.mark.parametrize("variant", LAX["variants"], ids=lambda v: v["name"])
def test_verl_verdict_is_what_the_battery_says(variant):
    """`accepts`: verl 0.9.1 lets the mistake through (whileai's own rules must catch it);
    `refuses`: verl names it; `raw`: verl crashes with an error that names no key."""
    got = variant["verl"]
    assert got["accepted"] is (variant["expect"] == "accepts"), (variant["name"], got)
    if variant["expect"] == "raw":
        assert got["error"].startswith("TypeError") and "train_batch_size" not in got["error"]
    if not got["accepted"]:
        assert got["error"] and got["step"]


def test_every_mistake_the_issue_names_is_recorded_as_lax():
    by_name = {v["name"]: v for v in LAX["variants"]}
    assert set(ISSUE_LAX) <= set(LAX["meta"]["lax"])
    for name in ISSUE_LAX:
        assert by_name[name]["expect"] in ("accepts", "raw")
        base = {o for o in by_name[f"{by_name[name]['base']}-base"]["overrides"]}
        assert set(by_name[name]["overrides"]) != base  # the mistake is really in what was sent


def test_bases_are_accepted_and_each_mistake_changes_them():
    names = {v["name"] for v in LAX["variants"]}
    assert {f"{b}-base" for b in BATTERY["base"]} <= names
    assert LAX["meta"]["unexpected"] == []


def test_the_fixture_records_verl_passing_every_run_whileai_compiled():
    """Every run.sh whileai compiled for verl (lax.json's `compiled`) passed verl's own check, as
    recorded: this reads the fixture back (verl's check itself runs in the live tests above)."""
    for run in LAX["compiled"]:
        for verdict in run.get("verl", []):
            assert verdict["accepted"], (run.get("spec") or run.get("run"), verdict)


def test_claims_a_run_sh_with_a_verl_command(tmp_path):
    runs = FIXTURES / "runs"
    assert verl_check.claims(runs / "grpo" / "run.sh") and verl_check.claims(runs / "sft")
    other = tmp_path / "run.sh"
    other.write_text("#!/bin/sh\npython3 train.py\n")
    assert not verl_check.claims(other) and not verl_check.claims(tmp_path)
    assert not verl_check.claims(ROOT / "examples" / "grpo.toml")


def test_without_verl_nothing_is_reported_checked(monkeypatch):
    monkeypatch.setattr(verl_check, "available", lambda: False)
    lines = verl_check.check(FIXTURES / "runs" / "grpo", "auto")
    script = FIXTURES / "runs" / "grpo" / "run.sh"
    assert lines[0] == ("error", f"{script}: not checked by verl: {verl_check.NEEDS}")
    # whileai's own rules still run: the fixture's folder holds no data files
    assert [line.split(": ", 2)[1] for _, line in lines[1:]] == ["main_ppo", "main_ppo"]
    assert all("is not in the run folder" in line and "[data-file]" in line for _, line in lines[1:])
    with pytest.raises(SpecError, match="whileai\\[verl\\]"):
        verl_check.verify([])
    assert verl_check.check(FIXTURES / "runs" / "grpo", "rl")[0][0] == "error"


def test_check_lines_name_the_command_and_verls_words(monkeypatch, tmp_path):
    """check() as the CLI prints it, with verl's verdicts stood in by recorded ones."""
    recorded = {v["name"]: v["verl"] for v in LAX["variants"]}
    verdicts = iter([recorded["generation-greedy-n-4"], recorded["sft-base"]])

    def fake(cmd):
        v = next(verdicts)
        return verl_check.CommandVerdict(cmd.kind, v["accepted"], v["step"], v["error"], 0.3, cmd.line)

    monkeypatch.setattr(verl_check, "available", lambda: True)
    monkeypatch.setattr(verl_check, "installed_version", lambda: verl_check.PIN)
    monkeypatch.setattr(verl_check, "check_command", fake)
    run = tmp_path / "run.sh"
    run.write_text((FIXTURES / "runs" / "sft" / "run.sh").read_text().replace("Qwen/Qwen3-8B", "$TEACHER"))
    lines = verl_check.check(run, "auto")
    assert lines[0] == ("warning", f"{run}:7: main_generation_server: $TEACHER is not set in the script "
                                   "or the environment: kept as written")
    assert lines[1] == ("error", f"{run}:7: main_generation_server: verl 0.9.1 refuses it at sampling: "
                                 "AssertionError: When temperature=0, n_samples must be 1.")
    assert lines[2][0] == "ok" and lines[2][1].startswith(f"{run}:22: sft_trainer: verl 0.9.1 accepts it")


def _live_python() -> str | None:
    if verl_check.available():
        return sys.executable
    return os.environ.get("WHILEAI_VERL_PYTHON")


@pytest.mark.slow
def test_live_verl_agrees_with_the_fixture(tmp_path):
    python = _live_python()
    if python is None:
        pytest.skip("verl is not importable here and WHILEAI_VERL_PYTHON is not set "
                    "(pip install 'whileai[verl]')")
    if os.environ.get("CI") and not os.environ.get("WHILEAI_VERL_FULL"):
        pytest.skip("CI keeps to about 15 min: this battery of every mistake against live verl "
                    "(220 s on 2 cores) runs outside CI or with WHILEAI_VERL_FULL=1; CI replays its "
                    "recorded verdicts (this file's fixture tests) and runs verl's check live elsewhere")
    cases = {v["name"]: {"kind": v["kind"], "overrides": v["overrides"]} for v in LAX["variants"]}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = ROOT / "scripts" / "verl_check.py"
    done = subprocess.run([python, str(script), "--cases", str(tmp_path / "cases.json")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    live = {d["name"]: d for d in map(json.loads, done.stdout.splitlines()) if "name" in d}
    for v in LAX["variants"]:
        got = {k: live[v["name"]][k] for k in ("accepted", "step", "error")}
        assert got == v["verl"], (v["name"], REGENERATE)


def test_docs_table_names_every_variant():
    """docs/verl.md's tables ("What whileai refuses that verl lets through") are the ones
    scripts/verl_lax_table.py writes from lax.json: each variant in the table of its verdict."""
    path = ROOT / "scripts" / "verl_lax_table.py"
    spec = importlib.util.spec_from_file_location("verl_lax_table", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    docs = (ROOT / "docs" / "verl.md").read_text()
    assert module.tables(LAX) in docs, "run: python scripts/verl_lax_table.py"
    text = docs.split("## What whileai refuses that verl lets through", 1)[1]
    lax_table, refused_table = text.split("And what verl refuses", 1)
    for v in LAX["variants"]:
        if not v["name"].endswith("-base"):
            table = lax_table if v["verl"]["accepted"] or v["expect"] == "raw" else refused_table
            assert f"| `{v['name']}` |" in table, v["name"]


def test_verify_checks_each_compiled_run_sh_and_stops_at_the_first_refusal(monkeypatch):
    """compile --check: one line per command; a refusal ends the list (verdicts stood in)."""
    from types import SimpleNamespace

    recorded = {v["name"]: v["verl"] for v in LAX["variants"]}
    verdicts = iter([recorded["grpo-base"], recorded["mini-larger-than-train"], recorded["grpo-base"]])

    def fake(cmd):
        v = next(verdicts)
        return verl_check.CommandVerdict(cmd.kind, v["accepted"], v["step"], v["error"], 0.3, cmd.line)

    monkeypatch.setattr(verl_check, "available", lambda: True)
    monkeypatch.setattr(verl_check, "installed_version", lambda: verl_check.PIN)
    monkeypatch.setattr(verl_check, "check_command", fake)
    text = (FIXTURES / "runs" / "grpo" / "run.sh").read_text()
    runs = [SimpleNamespace(files={"run.sh": text, "README.md": ""}, out=f"/out/{n}/run.sh", stages=())
            for n in ("a", "b", "c")]
    got = verl_check.verify(runs)  # type: ignore[arg-type]
    assert got[0] == (True, "checked: /out/a/run.sh:6: main_ppo: verl 0.9.1 accepts it (Hydra compose, "
                            "validate_config, the worker configs; 0.3 s)")
    assert got[1] == (False, "/out/b/run.sh:6: main_ppo: verl 0.9.1 refuses it at validate_config: "
                             "ValueError: train_batch_size (16) must be >= actor.ppo_mini_batch_size (32)")
    assert len(got) == 2
    with pytest.raises(SpecError, match="no run.sh"):
        verl_check.verify([SimpleNamespace(files={"a.toml": ""}, out=None, stages=())])  # type: ignore[list-item]
    assert verl_check.verify([]) == []  # compile --check asking before it writes: verl can check here
