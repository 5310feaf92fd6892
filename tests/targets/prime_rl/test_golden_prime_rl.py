"""The article's four arms and a two-stage run, pinned as golden TOML, scripts and reports
(update: WHILEAI_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import pytest
from helpers import ROOT, golden, seed_run

from whileai.report.text import render_text
from whileai.targets.prime_rl import compile as prime_rl

GOLDEN = ROOT / "tests" / "golden" / "prime-rl"


@pytest.mark.parametrize("kind", ["grpo", "opsd", "opd", "sft"])
def test_seed_arm_toml_and_report(kind: str) -> None:
    c = prime_rl.compile(seed_run(kind), name=f"{kind}.toml")
    golden(GOLDEN / f"{kind}.toml", c.text)
    golden(GOLDEN / f"{kind}.report.txt", render_text(c, 100) + "\n")


TASKSET_EXAMPLES = sorted((ROOT / "examples" / "tasksets").glob("*.toml"))


@pytest.mark.parametrize("spec", TASKSET_EXAMPLES, ids=lambda p: p.stem)
def test_taskset_examples_toml_and_report(spec) -> None:  # type: ignore[no-untyped-def]
    """Examples beyond reverse-text (examples/tasksets/, out of the recipes' examples/*.toml)."""
    from whileai.spec.load import load_spec

    c = prime_rl.compile(load_spec(spec), name=f"{spec.stem}.toml")
    golden(GOLDEN / "tasksets" / f"{spec.stem}.toml", c.text)
    golden(GOLDEN / "tasksets" / f"{spec.stem}.report.txt", render_text(c, 100) + "\n")


def test_two_stage_sft_then_opd_files_and_report() -> None:
    """An SFT cold start on a base model, then OPD from its final weights: both TOMLs, the script
    that runs them in order (with the hand-off), and the report."""
    from helpers import TEACHER

    import whileai as wai

    teacher = wai.Endpoint(url="http://localhost:8001/v1", model=TEACHER)
    run = wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-0.6B-Base", lora=False, steps=50,
                      method=wai.SFT(teacher, max_tokens=1024),
                      then=wai.Stage(method=wai.OPD(teacher), steps=100))
    c = wai.compile(run, "prime-rl")
    assert sorted(c.files) == ["sft-1-sft.toml", "sft-2-opd.toml", "sft.sh"]  # unnamed: the first method
    for name, text in c.files.items():
        golden(GOLDEN / "two-stage" / name, text)
    golden(GOLDEN / "two-stage" / "report.txt", render_text(c, 100) + "\n")


MIXTURE_EXAMPLES = sorted((ROOT / "examples" / "mixtures").glob("*.toml"))


@pytest.mark.parametrize("spec", MIXTURE_EXAMPLES, ids=lambda p: p.stem)
def test_mixture_examples_toml_and_report(spec) -> None:  # type: ignore[no-untyped-def]
    """Mixtures (examples/mixtures/, out of the recipes' examples/*.toml): the TOML and the
    report, which accounts for every source."""
    from whileai.spec.load import load_spec

    c = prime_rl.compile(load_spec(spec), name=f"{spec.stem}.toml")
    golden(GOLDEN / "mixtures" / f"{spec.stem}.toml", c.text)
    golden(GOLDEN / "mixtures" / f"{spec.stem}.report.txt", render_text(c, 100) + "\n")
