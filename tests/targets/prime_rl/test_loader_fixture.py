"""whileai accepts exactly what prime-rl's own loader at the pin accepted, on every battery variant.

tests/fixtures/prime-rl/loader-verdicts.json is a golden file: scripts/gen_loader_fixture.py
compiled (or checked) each variant of tests/fixtures/prime-rl/battery.toml and recorded prime-rl's
loader verdict on the result. Here each variant is compiled (or checked) again, offline, and held
to that verdict. A variant marked `by_design` is one where whileai means to differ (a file that
loads but cannot run, a renderer the package's docs call wrong, a hub taskset this loader cannot
import); `pending` marks one another branch settles (the multi-node rules).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import tomllib
from helpers import ROOT

import whileai as wai
from whileai.errors import SpecError
from whileai.spec.load import load_spec, parse_sets
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.check import check_document, detect
from whileai.targets.prime_rl.loader import rule_sets
from whileai.targets.prime_rl.loader.view import FIRED

FIXTURES = ROOT / "tests" / "fixtures" / "prime-rl"
BATTERY = tomllib.loads((FIXTURES / "battery.toml").read_text())
FIXTURE = json.loads((FIXTURES / "loader-verdicts.json").read_text())
VARIANTS = FIXTURE["variants"]
ENTRY = {v["name"]: v.get("entry", "rl") for v in BATTERY["variant"]}
STAGE = {v["name"]: v.get("stage", 1) for v in BATTERY["variant"]}
REGENERATE = ("the fixture is stale: regenerate it with `PYTHONPATH=$PWD python "
              "scripts/gen_loader_fixture.py --loader-python $LOADER` and review its diff")


class Now(NamedTuple):
    accepted: bool
    text: str | None  # the compiled TOML (compile variants)
    error: str
    entry: str | None  # the entry point `check` chose (check variants)


def run_now(v: dict[str, Any], tmp_path: Path) -> Now:
    if v["kind"] == "compile":
        spec = tmp_path / f"{v['name']}.spec.toml"
        spec.write_text(v["input"]["spec"])
        try:
            run = load_spec(spec, parse_sets(v["input"]["set"]))
            if run.then is not None:  # a two-stage spec: the variant loads stage `stage`'s TOML
                from whileai.targets.prime_rl.stages import compile_stages

                chain = compile_stages(run, v["name"])
                c = chain.stages[STAGE[v["name"]] - 1]
            else:
                c = prime_rl.compile(run, name=f"{v['name']}.toml")
        except SpecError as e:
            return Now(False, None, str(e), None)
        return Now(True, c.text, "", "rl")
    doc = tomllib.loads(v["compiled_toml_or_doc"])
    entry = ENTRY[v["name"]]
    if entry == "auto":
        entry, problems = detect(doc)
    else:
        problems = check_document(doc, entry=entry)
    return Now(not problems, None, "; ".join(map(str, problems)), entry)


def test_the_fixture_is_the_battery_at_the_pin() -> None:
    assert [v["name"] for v in VARIANTS] == [v["name"] for v in BATTERY["variant"]], REGENERATE
    assert FIXTURE["meta"]["prime_rl"] == prime_rl.COMMIT
    assert len(VARIANTS) >= 300
    kinds = {v["kind"] for v in VARIANTS}
    assert kinds == {"compile", "check"}


@pytest.mark.parametrize("v", VARIANTS, ids=[v["name"] for v in VARIANTS])
def test_whileai_accepts_what_the_loader_accepts(v: dict[str, Any], tmp_path: Path) -> None:
    now = run_now(v, tmp_path)
    name, loader = v["name"], v["loader_accepted"]
    assert now.accepted == v["whileai_verdict"]["accepted"], (
        f"{name}: whileai now {'accepts' if now.accepted else 'refuses (' + now.error + ')'}; "
        f"{REGENERATE}")
    if now.text is not None:
        assert now.text == v["compiled_toml_or_doc"], f"{name}: the compiled text changed; {REGENERATE}"
    if loader is None:  # whileai refused the spec itself: there is no document to load
        assert not now.accepted and now.error
        return
    if v["by_design"]:
        assert now.accepted != loader, f"{name}: no longer differs from the loader ({v['by_design']})"
        return
    if v["pending"] and now.accepted != loader:
        pytest.xfail(f"{name}: {v['pending']}")
    assert now.accepted == loader, (
        f"{name}: the loader {'accepts' if loader else 'refuses: ' + v['loader_error']}, whileai "
        f"{'accepts' if now.accepted else 'refuses: ' + now.error}")
    if ENTRY[name] == "auto" and loader:
        assert now.entry == v["loader_entry"], f"{name}: the loader reads it as {v['loader_entry']}"


def test_by_design_and_spec_refusals_say_why() -> None:
    """Every deliberate difference names its reason, and every spec refusal names the field."""
    for v in VARIANTS:
        if v["by_design"]:
            assert len(v["by_design"]) > 40, v["name"]
        if v["loader_accepted"] is None:
            assert v["whileai_verdict"]["error"].startswith("error: "), v["name"]


def test_the_battery_exercises_every_loader_rule(tmp_path: Path) -> None:
    """Each of whileai's loader rules refuses at least one battery variant."""
    fired: set[str] = set()
    token = FIRED.set(fired)
    try:
        for v in VARIANTS:
            run_now(v, tmp_path)
    finally:
        FIRED.reset(token)
    rules = {f"{s.name}: {r.id}" for s in rule_sets() for r in s.rules}
    assert rules - fired == set()


def test_the_battery_sets_every_issue_8_spec_field() -> None:
    fields = set()
    for v in VARIANTS:
        if v["kind"] != "compile":
            continue
        spec = tomllib.loads(v["input"]["spec"])
        fields |= {k for k in spec if k != "method"}
        fields |= {f"{t}.{k}" for t in ("eval", "checkpoint") for k in spec.get(t, {})}
    assert {"taskset_args", "roles", "eval.enabled", "eval.taskset", "eval.taskset_args",
            "checkpoint.enabled", "checkpoint.interval", "checkpoint.keep_last"} <= fields


def test_done_when_tasksets_load() -> None:
    """Issue 8's bar: compiled GRPO on wordle, alphabet-sort (with taskset arguments) and
    wiki-search, and OPD/OPSD on gsm8k, are accepted by prime-rl's own loader."""
    by_name = {v["name"]: v for v in VARIANTS}
    for name in ("grpo-wordle", "spec-alphabet-sort-taskset-args", "grpo-wiki-search",
                 "opd-gsm8k", "opsd-gsm8k", "spec-gsm8k-default-splits"):
        v = by_name[name]
        assert v["whileai_verdict"]["accepted"] and v["loader_accepted"], name
    splits = tomllib.loads(by_name["opd-gsm8k"]["compiled_toml_or_doc"])["orchestrator"]
    assert splits["train"]["source"][0]["env"]["taskset"]["split"] == "train"
    assert splits["eval"]["source"][0]["env"]["taskset"]["split"] == "test"


def test_done_when_sft_and_both_stages_load() -> None:
    """Issue 9's bar: the compiled SFT specs and both stages of an SFT cold start followed by
    OPD are accepted by the loader, with no launch error."""
    by_name = {v["name"]: v for v in VARIANTS}
    for name in ("sft-reverse-text", "sft-full-weights-gpus-4", "sft-lora-rank-8",
                 "sft-remote-teacher", "sft-gsm8k", "two-stage-sft-then-opd-stage1",
                 "two-stage-sft-then-opd-stage2", "two-stage-sft-then-opsd-lora-stage2"):
        v = by_name[name]
        assert v["whileai_verdict"]["accepted"] and v["loader_accepted"], (name, v["loader_error"])
        assert v["launch_error"] == "", (name, v["launch_error"])
    sft = tomllib.loads(by_name["sft-reverse-text"]["compiled_toml_or_doc"])["orchestrator"]["algo"]
    assert sft["type"] == "sft" and sft["sampling"]["source"]["base_url"] == "http://localhost:8001/v1"


def test_who_samples_is_checked_before_the_loader() -> None:
    """sft needs a frozen sampling.source; every other algorithm samples from the policy."""
    sft = load_spec(ROOT / "examples" / "sft.toml")
    with pytest.raises(SpecError, match="algorithm 'sft' needs a frozen model to sample from"):
        wai.compile(sft.model_copy(update={"overrides": {"orchestrator.algo.sampling.source": "policy"}}))
    opd = load_spec(ROOT / "examples" / "opd.toml")
    frozen = {"orchestrator.algo.sampling.source.name": "x/y",
              "orchestrator.algo.sampling.source.base_url": "http://localhost:8002/v1"}
    with pytest.raises(SpecError, match="only 'sft' may sample from a frozen model"):
        wai.compile(opd.model_copy(update={"overrides": frozen}))
