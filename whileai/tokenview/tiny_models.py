"""`whileai inspect SPEC --tiny`: tiny local student and teacher models for an offline look.

The models are whileai.vocab.tiny's (a random Qwen3 pair sharing a small BPE tokenizer built from the
spec's tasks, warmed up on its train split), built once and cached under
~/.cache/whileai/tiny/<key> (or $WHILEAI_CACHE): the same models, with the same warm-up, as the
TRL recipe's, so either reuses the other's. They check the pipeline (sampling, scoring, the page),
not the method: their numbers say nothing about the spec's real models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whileai.errors import SpecError, raw

WARMUP = {"teacher": 300, "student": 60}  # the TRL recipe's default (--warmup 300, the student a fifth)


def tiny_flags(spec: Path, flags: dict[str, Any], say: Any) -> dict[str, Any]:
    """`flags` with --local-student / --local-teacher set to the tiny models (built if needed)."""
    import time

    from whileai.spec.load import load_spec
    from whileai.tasksets.builtin import task_texts
    from whileai.vocab import tiny

    taken = [k for k in ("local_student", "student_endpoint", "local_teacher", "teacher_endpoint_text")
             if flags.get(k)]
    if taken:
        raise SpecError("--tiny", raw("given with another model flag"), "--tiny alone: it chooses "
                        "the student and teacher itself",
                        hint=f"drop --{taken[0].removesuffix('_text').replace('_', '-')}")
    import importlib.util

    missing = [m for m in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:
        raise SpecError("--tiny", raw(f"{', '.join(missing)} not installed"), "building the tiny "
                        "models needs torch, transformers and tokenizers: pip install -e '.[trl]' in "
                        "a clone of whileai (the torch CPU wheel: pip install torch==2.13.0 "
                        "--extra-index-url https://download.pytorch.org/whl/cpu first)")
    run = load_spec(spec)
    try:
        texts, pairs = task_texts(run)
    except (KeyError, SpecError) as e:
        raise SpecError("--tiny", raw(f"{run.taskset}'s tasks are not on this machine"), "a spec "
                        "whose tasks are (a built-in taskset such as reverse-text, or data = "
                        "'tasks.jsonl')", hint=str(e)) from None
    start = time.monotonic()
    paths, built = tiny.cached(texts, pairs, WARMUP)
    how = f"built in {time.monotonic() - start:.0f} s" if built else "cached"
    say(f"tiny models: {Path(paths['student']).parent} ({how}; a pipeline check, not the spec's models)")
    out = dict(flags, local_student=paths["student"])
    if run.method.frozen_teacher is not None:
        out["local_teacher"] = paths["teacher"]
    return out
