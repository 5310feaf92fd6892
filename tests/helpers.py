"""Shared test helpers: the seed arms, the reference folder beside the checkout, golden files, small
local tokenizers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

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
# a small tokenizer's ChatML template, texts and special tokens (PAD, start, end)
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TEXTS = ["reverse the text character by character", "hello world", "def f(x): return x ** 2", "42 3.14"]
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def seed_methods() -> dict[str, object]:
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model=TEACHER)
    return {"grpo": wai.GRPO(), "opsd": wai.OPSD(privileged="answer"), "opd": wai.OPD(teacher),
            "sft": wai.SFT(teacher)}


def seed_run(kind: str, **fields: object) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=STUDENT, method=seed_methods()[kind], **fields)


def missing(extra: str, *modules: str) -> str | None:
    """Why a test cannot run: the modules not installed and the extra that installs them; None
    when all are. By find_spec, not an import (nothing heavy loads at collection), and a namespace
    package does not count: under pytest tests/targets/ is on sys.path, so tests/targets/trl/ imports as
    `trl`."""
    from importlib.util import find_spec

    gone = [m for m in modules if (spec := find_spec(m)) is None or spec.origin is None]
    return f"the {extra} extra (pip install -e '.[{extra}]'): {', '.join(gone)}" if gone else None


def needs(extra: str, *modules: str) -> None:
    """Skip the test (called at module level, the module) unless `modules` are installed,
    naming the extra that installs them."""
    __tracebackhide__ = True  # the skip is reported at the test's line, not here
    why = missing(extra, *modules)
    if why:
        pytest.skip(why, allow_module_level=True)


def verl_python() -> str:
    """A Python with verl 0.9.1: this one where verl imports, else $WHILEAI_VERL_PYTHON; else the
    test is skipped, naming how to make one."""
    import sys

    from whileai.targets.verl import check as verl_check

    python = sys.executable if verl_check.available() else os.environ.get("WHILEAI_VERL_PYTHON")
    if python is None:
        pytest.skip("verl is not importable here and WHILEAI_VERL_PYTHON is not set (a Python with "
                    "verl 0.9.1: `whileai rehearse --setup DIR -t verl` prints the commands)")
    return python


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


def train_bpe(folder: Path, texts: Iterable[str], *, vocab: int, specials: Sequence[str] = SPECIALS) -> Any:
    """A byte-level BPE (the `tokenizers` package) trained on `texts`, its special tokens first,
    saved as folder/tokenizer.json; returned as a `tokenizers.Tokenizer`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return tok


def save_tokenizer(folder: Path, *, texts: list[str] = TEXTS, vocab: int = 300, template: str = TEMPLATE,
                   eos: str = "<|im_end|>", rows: int | None = None) -> Path:
    """A model's tokenizer files in `folder`: train_bpe's tokenizer.json, a tokenizer_config.json
    (EOS, PAD, chat template) and, with `rows`, a config.json of that many embedding rows."""
    train_bpe(folder, texts, vocab=vocab)
    config: dict[str, Any] = {"eos_token": eos, "pad_token": SPECIALS[0], "chat_template": template}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    if rows is not None:
        (folder / "config.json").write_text(json.dumps({"vocab_size": rows}))
    return folder
