"""What the `inference` stand-in answers with: a request's recorded shape, and made-up completions
that vary (rewards then vary) and play a game's bracketed moves, and the tiny model's tokenizer
that decodes the prompts. Standard library only (and `tokenizers`, when a tokenizer is named)."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any


def shape(value: Any, depth: int = 0) -> Any:
    """A request's shape: keys and types, lists by length and first item."""
    if isinstance(value, dict) and depth < 4:
        return {k: shape(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [f"len={len(value)}", *([shape(value[0], depth + 1)] if value and depth < 4 else [])]
    return type(value).__name__ if not isinstance(value, (str, bool)) or depth == 0 else value


def trim(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: trim(v) for k, v in value.items()}
    if isinstance(value, list):
        return [trim(v) for v in value[:16]]
    return value


def completion_text(prompt: str, rng: random.Random) -> str:
    """A plausible answer: the last user turn reversed, sometimes cut (rewards then vary), led by
    one of the bracketed moves the turn offers, if any (a game's `[check] or [bet]`: a reply
    without a legal move forfeits the episode, and kuhn-poker's other seat then has no turn)."""
    # the last user turn, in Llama-3's, the generic stand-in's or ChatML's chat format
    for head in ("<|start_header_id|>user<|end_header_id|>", "<|user|>", "user\n"):
        prompt = prompt.rsplit(head, 1)[-1]
    user = re.split(r"<\|im_end\|>|<\|eot_id\|>|<\|end\|>", prompt, maxsplit=1)[0].strip() or "rehearsal"
    rev = user[::-1]
    if rng.random() < 0.5:
        rev = rev[: rng.randint(1, max(1, len(rev)))]
    moves = sorted(set(re.findall(r"\[(\w+)\]", user)))
    lead = f"[{rng.choice(moves)}]\n" if moves else ""
    return f"{lead}<reversed_text>\n{rev}\n</reversed_text>"


def tokenizer(vocab_default: int) -> tuple[Any, Any, int, int, int | None]:
    """decode, encode, vocabulary size, eos id and the model's max_position_embeddings (vLLM's
    max_model_len when the server config leaves it unset: the tiny model's config here)."""
    path = os.environ.get("WHILEAI_REHEARSE_TOKENIZER")
    if not path:
        return (
            (lambda ids: ""),
            (lambda text: [1 + (ord(c) % (vocab_default - 2)) for c in text]),
            vocab_default,
            0,
            None,
        )
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    facts = json.loads((Path(path) / "config.json").read_text())
    return (
        (lambda ids: tok.decode(ids, skip_special_tokens=False)),
        (lambda text: tok.encode(text).ids),
        int(facts["vocab_size"]),
        int(facts["eos_token_id"]),
        facts.get("max_position_embeddings"),
    )


__all__ = ["completion_text", "shape", "tokenizer", "trim"]
