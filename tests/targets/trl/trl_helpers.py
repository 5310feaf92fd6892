"""Helpers for the TRL backend tests (a module of its own: `conftest` is taken by tests/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import golden  # noqa: F401  (tests/helpers.py: one golden-file rule)

from whileai.spec.run import GRPO, OPD, OPSD, SFT, Endpoint, RunSpec
from whileai.targets.compiled import Compiled

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden" / "trl"
STUDENT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
TEACHER = Endpoint(url="http://localhost:8001/v1", model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
OFFLINE = {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
    "TRL_EXPERIMENTAL_SILENCE": "1",
}
ARMS = ("grpo", "opsd", "opd", "sft")


def seed_run(arm: str, **kw: Any) -> RunSpec:
    """The article's four arms on reverse-text, with their defaults."""
    method = kw.pop("method", None) or {
        "opd": OPD(TEACHER), "opsd": OPSD(privileged="answer"), "grpo": GRPO(), "sft": SFT(TEACHER)}[arm]
    return RunSpec(taskset="reverse-text", model=kw.pop("model", STUDENT), method=method, **kw)


def write(compiled: Compiled, out: Path) -> Path:
    for name, text in compiled.files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return out


def tiny_run(arm: str, student: str, teacher: str, output_dir: Path) -> RunSpec:
    """A 2-step CPU run of an arm on the tiny models (full weights, 16 new tokens, one eval)."""
    method = {
        "opd": OPD(Endpoint(url="http://localhost:8001/v1", model=teacher), max_tokens=16),
        "opsd": OPSD(max_tokens=16),
        "grpo": GRPO(samples=2, max_tokens=16),
        "sft": SFT(Endpoint(url="http://localhost:8001/v1", model=teacher), samples=2, max_tokens=16),
    }[arm]
    return RunSpec(
        taskset="reverse-text", model=student, method=method, steps=2,
        prompts=2 if arm == "grpo" else 4, lora=False, output_dir=str(output_dir),
        eval={"interval": 2, "examples": 4},
        overrides={"gradient_checkpointing": False, "logging_steps": 1, "save_strategy": "no",
                   "report_to": "none"},
    )
