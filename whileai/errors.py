"""The one exception type whileai raises for bad input, and secret masking."""

from __future__ import annotations

import re

_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{6,}|hf_[A-Za-z0-9]{6,}|ghp_[A-Za-z0-9]{6,}|"
    r"ak-[A-Za-z0-9]{6,}|Bearer\s+\S+|eyJ[A-Za-z0-9_-]{10,})"
)


class SpecError(ValueError):
    """Bad input: names the field, the bad value and what is allowed.

    The CLI turns it into one line on stderr and exit code 2; the Python API raises it.
    """

    def __init__(self, field: str, value: object, allowed: str, *, hint: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.hint = hint
        if isinstance(value, _Raw):
            msg = f"{field}: {value}; {allowed}"
        else:
            msg = f"{field}: {mask(repr(value))} is not allowed; {allowed}"
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)


class _Raw(str):
    """A value already rendered for a message (no repr quoting)."""


def raw(text: str) -> _Raw:
    return _Raw(text)


def looks_secret(text: str) -> bool:
    return bool(_SECRET.search(text))


def mask(text: str) -> str:
    """Replace anything that looks like a credential with a fixed marker."""
    return _SECRET.sub(lambda m: m.group(0)[:3] + "…(redacted)", text)


def close_matches(word: str, options: list[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """difflib's near misses, imported only when a message needs a suggestion."""
    import difflib

    return difflib.get_close_matches(word, options, n=n, cutoff=cutoff)
