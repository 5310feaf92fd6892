"""reverse-text: reverse a short text character by character; scored by LCS ratio.

Self-contained (standard library only) so that a compiled TRL run directory can ship this
file beside its config and run where whileai is not installed: `trl grpo` imports the
reward by the dotted path `reverse_text.reverse_text_reward` from the working directory.

The reward follows prime-rl's reverse-text taskset: the text inside the first
<reversed_text>...</reversed_text> pair of the completion (stripped; empty when absent) is
compared with the answer by difflib's `SequenceMatcher(None, parsed, answer).ratio()`.
The data are generated locally (no hub): random phrases from a fixed word list.
"""

from __future__ import annotations

import random
import re
from difflib import SequenceMatcher
from typing import Any

SYSTEM_PROMPT = "Reverse the text character-by-character. Put your answer in <reversed_text> tags."
TRAIN_SIZE = 1000
HOLDOUT_SIZE = 256
DATA_SEED = 20250101  # fixed: every arm of a comparison trains and evaluates on the same rows

_TAG = re.compile(r"<reversed_text>\s*(.*?)\s*</reversed_text>", re.DOTALL)
_WORDS = (
    "apple river stone cloud green quick brown fox jumps over lazy dog light night table "
    "chair window garden music paper pencil ocean mountain forest silver golden happy small "
    "large bright dark winter summer spring autumn coffee bread water fire earth wind storm "
    "quiet loud north south east west city village road bridge tower castle king queen knight "
    "horse bird fish tree flower leaf root seed rain snow sun moon star planet rocket engine "
    "machine robot code data model token learn teach student teacher reverse order letter word "
    "simple honest clever gentle rapid slow early late open close first last red blue yellow"
).split()


def parse_reversed(text: str) -> str:
    """The text inside the first <reversed_text> pair, stripped; '' when there is none."""
    m = _TAG.search(text)
    return m.group(1).strip() if m else ""


def lcs_ratio(x: str, y: str) -> float:
    return SequenceMatcher(None, x, y).ratio()


def _text(completion: Any) -> str:
    """A completion as TRL passes it: a string, or a list of chat messages (last assistant)."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion)):
        if message.get("role") == "assistant":
            content = message.get("content", "")
            return content if isinstance(content, str) else str(content)
    return ""


def reverse_text_reward(completions: list[Any], answer: list[str], **kwargs: Any) -> list[float]:
    """TRL reward function: LCS ratio between the parsed reversal and the answer, per completion."""
    return [lcs_ratio(parse_reversed(_text(c)), a) for c, a in zip(completions, answer, strict=True)]


def phrases(n: int, *, seed: int = DATA_SEED, min_words: int = 3, max_words: int = 10) -> list[str]:
    """`n` distinct random phrases, the same for the same seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(min_words, max_words))]
        if rng.random() < 0.3:
            words[0] = words[0].capitalize()
        text = " ".join(words) + rng.choice(["", "", ".", "!", "?"])
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def example(text: str) -> dict[str, Any]:
    return {
        "prompt": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": text},
        ],
        "answer": text[::-1],
    }


def splits(
    train: int = TRAIN_SIZE, holdout: int = HOLDOUT_SIZE, *, seed: int = DATA_SEED
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Disjoint train and holdout examples: {'prompt': chat messages, 'answer': reversal}."""
    texts = phrases(train + holdout, seed=seed)
    return [example(t) for t in texts[:train]], [example(t) for t in texts[train:]]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function (written by whileai): reverse_text_reward on one completion."""
    return float(reverse_text_reward([solution_str], [ground_truth])[0])
