"""Shared test helpers: the seed arms, the reference folder beside the checkout, golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import whileai as wai

ROOT = Path(__file__).resolve().parents[1]
# prime-rl's pinned reference: ../shared/reference beside the checkout, else the copy the
# repository keeps (tests/fixtures/reference/README.md), so a fresh clone skips none of it
SHARED_REFERENCE = ROOT.parent / "shared" / "reference"
FIXTURE_REFERENCE = ROOT / "tests" / "fixtures" / "reference"
REFERENCE = Path(os.environ.get("WHILEAI_REFERENCE") or (
    SHARED_REFERENCE if SHARED_REFERENCE.is_dir() else FIXTURE_REFERENCE))
EXAMPLES = ROOT / "examples"
STUDENT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
TEACHER = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"
UPDATE_GOLDEN = os.environ.get("WHILEAI_UPDATE_GOLDEN") == "1"


def seed_methods() -> dict[str, object]:
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model=TEACHER)
    return {"grpo": wai.GRPO(), "opsd": wai.OPSD(privileged="answer"), "opd": wai.OPD(teacher),
            "sft": wai.SFT(teacher)}


def seed_run(kind: str, **fields: object) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=STUDENT, method=seed_methods()[kind], **fields)


def needs_reference() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"no prime-rl reference at {REFERENCE}: restore tests/fixtures/reference "
                    "(git checkout -- tests/fixtures/reference)")
    return REFERENCE


def golden(path: Path, text: str) -> None:
    """Compare with a golden file; WHILEAI_UPDATE_GOLDEN=1 rewrites it (the explicit update step)."""
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"missing golden {path}: run WHILEAI_UPDATE_GOLDEN=1 pytest {path.parent}"
    assert text == path.read_text(), f"{path} differs; review, then WHILEAI_UPDATE_GOLDEN=1 to update"
