"""Prompt lengths measured on task rows that are on this machine, for the cost estimate.

    measure(rows, "reverse-text")   # Lengths(rows=512, of=1000, median=27.0, mean=27.4, ...)
    tokens({"prompt": "Hello"})     # 2: ceil(5 / 4)

No tokenizer is loaded (nothing from the hub, no transformers): a prompt's tokens are counted by
RULE, a documented rule of thumb, so the count is the same on every machine and `whileai compile`
stays fast. At most LIMIT rows are measured (the first ones), so a large `data` file costs
little. Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

CHARS_PER_TOKEN = 4  # OpenAI: "one token generally corresponds to ~4 characters of common English text"
PER_MESSAGE = 3  # OpenAI cookbook (How to count tokens with tiktoken): 3 tokens wrap each chat message
REPLY = 3  # ... and 3 prime the assistant's reply
RULE = (f"{CHARS_PER_TOKEN} characters per token (OpenAI's rule of thumb for English text), "
        f"+{PER_MESSAGE} per chat message and +{REPLY} for the reply (OpenAI cookbook, How to count "
        "tokens with tiktoken); no tokenizer loaded")
LIMIT = 512  # rows measured at most: the first ones


class Lengths(NamedTuple):
    rows: int  # rows measured
    of: int  # rows there are
    source: str  # where they come from (a taskset's name or the data file)
    median: float
    mean: float

    def text(self) -> str:
        """What the cost line says: 'measured on 512 of 1,000 rows of reverse-text, ...'."""
        some = f"{self.rows:,} of {self.of:,}" if self.rows < self.of else f"{self.rows:,}"
        return (f"prompt lengths: measured on {some} rows of {self.source}, median {self.median:g}, "
                f"mean {self.mean:.1f} tokens ({CHARS_PER_TOKEN} characters per token, +{PER_MESSAGE} "
                "per message and reply)")


def _chars(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def tokens(row: dict[str, Any], extra: str = "") -> int:
    """The prompt's tokens by RULE: text as it is; chat messages each wrapped, plus the reply's
    opening. `extra` is text the model also reads (OPSD's privileged context in its template)."""
    prompt = row.get("prompt", "")
    if isinstance(prompt, str):
        return _chars(prompt + extra)
    n = sum(PER_MESSAGE + _chars(str(m.get("content", ""))) for m in prompt if isinstance(m, dict))
    return n + REPLY + (_chars(extra) if extra else 0)


def measure(rows: Sequence[dict[str, Any]], source: str, *, cap: int | None = None,
            extra: Callable[[dict[str, Any]], str] | None = None) -> Lengths | None:
    """The median and mean prompt tokens of the first LIMIT rows, each at most `cap` (where the
    target truncates prompts); None without rows."""
    counts = sorted(min(tokens(r, extra(r) if extra else ""), cap or math.inf)
                    for r in rows[:LIMIT])
    if not counts:
        return None
    mid = len(counts) // 2
    median = counts[mid] if len(counts) % 2 else (counts[mid - 1] + counts[mid]) / 2
    return Lengths(len(counts), len(rows), source, float(median), sum(counts) / len(counts))


__all__ = ["CHARS_PER_TOKEN", "LIMIT", "PER_MESSAGE", "REPLY", "RULE", "Lengths", "measure", "tokens"]
