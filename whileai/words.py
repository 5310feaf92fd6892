"""Counted nouns for messages and reports: `1 node`, `2 nodes`, `~1 prompt` (one rule, used by
every room: a count is never followed by the wrong number of its noun)."""

from __future__ import annotations

from typing import Any


def counted(n: Any, words: str) -> str:
    """`1 prompt`, `~1 prompt`, `64 prompts`: `words` is the plural, ending in s."""
    return f"{n} {plural(n, words)}"


def plural(n: Any, words: str) -> str:
    """The noun alone, singular for a count of one: `plural(1, "GPUs")` is `GPU`."""
    return words[:-1] if str(n).lstrip("~") == "1" else words


__all__ = ["counted", "plural"]
