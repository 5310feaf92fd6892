"""prime-rl's own loader at the pin, as recorded in tests/fixtures/prime-rl/loader-verdicts.json
(scripts/gen_loader_fixture.py): the SFT and two-stage outputs are accepted, whileai refuses
what the loader refuses about who samples, and the recorded documents are what whileai
compiles today (a stale fixture fails here: regenerate it with the loader's Python)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

import whileai as wai
from whileai.errors import SpecError
from whileai.load import load_spec, parse_sets

FIXTURE = ROOT / "tests" / "fixtures" / "prime-rl" / "loader-verdicts.json"
MINE = ("sft-", "two-stage-", "opd-frozen-sampling-source", "algo-sft-from-policy")


def variants() -> list[dict[str, Any]]:
    return [v for v in json.loads(FIXTURE.read_text())["variants"] if v["name"].startswith(MINE)]


def test_fixture_covers_sft_and_both_stages() -> None:
    names = {v["name"] for v in variants()}
    assert {"sft-reverse-text", "sft-full-weights-gpus-4", "sft-remote-teacher",
            "two-stage-sft-then-opd-stage1", "two-stage-sft-then-opd-stage2"} <= names


@pytest.mark.parametrize("v", variants(), ids=lambda v: v["name"])
def test_loader_and_whileai_agree(v: dict[str, Any]) -> None:
    assert v["loader_accepted"] is not None, v["loader_error"]
    assert v["agree"] is True, (v["whileai_verdict"], v["loader_error"])
    if v["name"].startswith(("sft-", "two-stage-")) and not v["input"].get("set"):
        assert v["loader_accepted"] is True and v["launch_error"] == "", v["loader_error"]


@pytest.mark.parametrize("v", [v for v in variants() if v["whileai_verdict"]["accepted"]],
                         ids=lambda v: v["name"])
def test_recorded_documents_are_what_whileai_compiles_now(v: dict[str, Any], tmp_path: Path) -> None:
    spec = tmp_path / f"{v['name']}.spec.toml"
    spec.write_text(v["input"]["spec"])
    out = tmp_path / f"{v['name']}.toml"
    wai.compile(load_spec(spec, parse_sets(v["input"]["set"])), "prime-rl", out=out)
    if "stage" in v["name"]:
        stage = v["name"].rsplit("stage", 1)[1]
        out = next(tmp_path.glob(f"{v['name']}-{stage}-*.toml"))
    assert out.read_text() == v["compiled_toml_or_doc"], (
        f"{FIXTURE.name} is stale for {v['name']}: python scripts/gen_loader_fixture.py "
        "--loader-python <the prime-rl loader's python>")


def test_who_samples_is_checked_before_the_loader() -> None:
    """sft needs a frozen sampling.source; every other algorithm samples from the policy."""
    sft = load_spec(ROOT / "examples" / "sft.toml")
    with pytest.raises(SpecError, match="needs a teacher to sample from"):
        wai.compile(sft.model_copy(update={"overrides": {"orchestrator.algo.sampling.source": "policy"}}))
    opd = load_spec(ROOT / "examples" / "opd.toml")
    frozen = {"orchestrator.algo.sampling.source.name": "x/y",
              "orchestrator.algo.sampling.source.base_url": "http://localhost:8002/v1"}
    with pytest.raises(SpecError, match="a frozen sampling.source is only for 'sft'"):
        wai.compile(opd.model_copy(update={"overrides": frozen}))
