"""The three seed arms, pinned as golden TOML and golden reports (update: WHILEAI_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import pytest
from helpers import ROOT, golden, seed_run

from whileai.backends import prime_rl

GOLDEN = ROOT / "tests" / "golden" / "prime-rl"


@pytest.mark.parametrize("kind", ["grpo", "opsd", "opd"])
def test_seed_arm_toml_and_report(kind: str) -> None:
    c = prime_rl.compile(seed_run(kind), name=f"{kind}.toml")
    golden(GOLDEN / f"{kind}.toml", c.text)
    golden(GOLDEN / f"{kind}.report.txt", str(c) + "\n")


TASKSET_EXAMPLES = sorted((ROOT / "examples" / "tasksets").glob("*.toml"))


@pytest.mark.parametrize("spec", TASKSET_EXAMPLES, ids=lambda p: p.stem)
def test_taskset_examples_toml_and_report(spec) -> None:  # type: ignore[no-untyped-def]
    """Examples beyond reverse-text (examples/tasksets/, out of the recipes' examples/*.toml)."""
    from whileai.load import load_spec

    c = prime_rl.compile(load_spec(spec), name=f"{spec.stem}.toml")
    golden(GOLDEN / "tasksets" / f"{spec.stem}.toml", c.text)
    golden(GOLDEN / "tasksets" / f"{spec.stem}.report.txt", str(c) + "\n")
