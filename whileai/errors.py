"""The one exception type whileai raises for bad input, and how any value is shown in a message.

Every message is one line: values are escaped (control characters, lone surrogates), bounded
in length, and the whole line passes the secret scanner last, so no part of it can show
again what an earlier part masked.
"""

from __future__ import annotations

import re
from typing import Any

from whileai.secretscan import find, mask

VALUE_LIMIT = 100  # characters of a value shown in a message
FIELD_LIMIT = 160
LINE_LIMIT = 1200
_UNPRINTABLE = r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]"  # compiled on first use (re's cache)


class SpecError(ValueError):
    """Bad input: names the field, the bad value and what is allowed.

    The CLI turns it into one line on stderr and exit code 2; the Python API raises it.
    """

    def __init__(self, field: str, value: object, allowed: str, *, hint: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.hint = hint
        name = bound(str(field), FIELD_LIMIT)
        if isinstance(value, _Raw):
            msg = f"{name}: {value}; {allowed}"
        elif value is None:  # nothing was given: say what is required, never "None is not allowed"
            msg = f"{name}: missing; {allowed}"
        else:
            msg = f"{name}: {show(value)} is not allowed; {allowed}"
        if hint:
            msg += f" ({hint})"
        super().__init__(clean(msg))


def missing_argument(name: str, allowed: str) -> SpecError:
    """A command run without its argument: `missing argument SPEC; <what it takes>`."""
    err = SpecError(name, raw("missing argument"), allowed)
    err.args = (clean(f"missing argument {name}; {allowed}"),)
    return err


class _Raw(str):
    """A value already rendered for a message (no repr quoting)."""


def raw(text: str) -> _Raw:
    return _Raw(text)


def escape(text: str) -> str:
    """Control characters, line separators and lone surrogates as escapes: one printable line."""
    if text.isascii() and text.isprintable():  # nothing to escape (most text): no pattern needed
        return text
    return re.sub(_UNPRINTABLE, lambda m: m.group(0).encode("unicode_escape", "backslashreplace")
                  .decode("ascii"), text)


def bound(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean(text: str) -> str:
    """Mask secrets in the raw text, then escape it and bound its length."""
    return bound(escape(mask(text)), LINE_LIMIT)


def show(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value for a message: its repr, secrets masked, escaped, at most `limit` characters."""
    if isinstance(value, str) and find(value):
        return "[redacted]"
    if isinstance(value, bool):  # a spec is TOML (and --set takes TOML values): true, not True
        return "true" if value else "false"
    if isinstance(value, (str, bytes)) and len(value) > 4 * limit:
        value = value[: 4 * limit]  # repr of the part that can be shown, not of megabytes
    return bound(escape(mask(repr(value))), limit)


def looks_secret(text: str) -> bool:
    return find(text) is not None


def close_matches(word: str, options: list[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """difflib's near misses, imported only when a message needs a suggestion."""
    import difflib

    return difflib.get_close_matches(word, options, n=n, cutoff=cutoff)


__all__ = ["SpecError", "bound", "clean", "close_matches", "escape", "looks_secret", "mask", "raw",
           "show"]
