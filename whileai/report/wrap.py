"""Plain-text layout for a terminal, a pipe or a log: lines that fit a width.

Prose wraps at spaces with a hanging indent (`textwrap`); a word longer than the width (a URL, a
model id) stays whole rather than being cut. Shell commands break only between shell words,
with a trailing backslash, so a wrapped command still pastes and runs as printed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import textwrap
from collections.abc import Iterable

DEFAULT_WIDTH = 100  # a pipe or a log without COLUMNS


def width() -> int:
    """The terminal's width; COLUMNS, else 100, when stdout is no terminal (a pipe, a log)."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def para(text: str, width: int | None, indent: str = "  ", hang: str = "      ") -> list[str]:
    """`text` as lines of at most `width` (None: one line), the first at `indent`, the rest at
    `hang`. A key stays with its value (`glue`): `--set k=v`, `key = value`."""
    if width is None:
        return [indent + text]
    lines = textwrap.wrap(glue(text, width - len(hang)), width=width, initial_indent=indent,
                          subsequent_indent=hang, break_long_words=False, break_on_hyphens=False)
    return [line.replace(GLUE, " ") for line in lines] or [indent]


GLUE = "\x00"  # a space no wrap may break at (textwrap and rich see no whitespace in it)
_FLAG = re.compile(r"-{1,2}[A-Za-z][\w.-]*")


def glue(text: str, limit: int) -> str:
    """`text` with the spaces that bind a key to its value made unbreakable (GLUE): after a
    command-line flag (`--set inference.vllm.seed=N`) and around `=` (`key = value`); never where
    the bound words would outgrow `limit` columns."""
    out: list[str] = []
    for word in text.split(" "):
        last = out[-1].rsplit(GLUE, 1)[-1] if out else ""
        binds = (_FLAG.fullmatch(last) is not None and word[:1] not in ("-", "")) \
            or word == "=" or last == "="
        if binds and last and len(out[-1]) + 1 + len(word) <= limit:
            out[-1] += GLUE + word
        else:
            out.append(word)
    return " ".join(out)


def breaks(text: str, width: int) -> str:
    """`text` with spaces turned into line breaks so each line fits `width` where its words allow,
    a key never parted from its value (`glue`); the same length, so a rich Text's styles stay put."""
    out = []
    for line in text.split("\n"):
        cur = -1  # the length of the line being filled (-1: nothing on it yet)
        words = glue(line, width).split(" ")
        got = []
        for w in words:
            if cur >= 0 and cur + 1 + len(w) > width:
                got.append("\n")
                cur = len(w)
            else:
                got.append(" " if cur >= 0 else "")
                cur = cur + 1 + len(w) if cur >= 0 else len(w)
            got.append(w)
        out.append("".join(got).replace(GLUE, " "))
    return "\n".join(out)


def fit(lines: Iterable[str], cols: int | None = None, hang: str = "    ") -> list[str]:
    """Each line of a command's output wrapped to `cols` (default: the terminal's, `width()`) at
    spaces only, its continuation under its own indent plus `hang`: a key, a value, a URL or a
    `key=value` is never split (a word wider than the line stays whole and runs past it)."""
    w = cols if cols is not None else width()
    out: list[str] = []
    for line in lines:
        for part in line.split("\n"):
            lead = part[: len(part) - len(part.lstrip())]
            out += para(part.lstrip(), w, lead, lead + hang) if part.strip() else [part]
    return out


def command(cmd: str, width: int | None, indent: str = "    ") -> list[str]:
    """A shell command: a trailing `  # comment` on its own line above it, then the command
    broken between shell words with ` \\` continuations (quoted words are never split)."""
    code, _, comment = cmd.partition("  # ")
    lines = [f"{indent}# {comment}"] if comment else []
    if width is None:
        return [*lines, indent + code.rstrip()] if comment else [indent + cmd]
    words = _paired(_words(code.rstrip()))
    cur = indent
    for w in words:
        if cur.strip() and len(cur) + 1 + len(w) + 2 > width:
            lines.append(cur + " \\")
            cur = indent + "  " + w
        else:
            cur = f"{cur} {w}" if cur.strip() else cur + w
    lines.append(cur)
    return lines


def _paired(words: list[str]) -> list[str]:
    """A flag and its value as one unit of the layout (`--vllm.model Qwen/Qwen3-8B`), as `glue`
    keeps them in prose."""
    out: list[str] = []
    for w in words:
        if out and _FLAG.fullmatch(out[-1]) and not w.startswith("-"):
            out[-1] += " " + w
        else:
            out.append(w)
    return out


def _words(code: str) -> list[str]:
    """The command's words as written (quotes kept): split where shlex sees a word boundary."""
    lex = shlex.shlex(code, posix=True, punctuation_chars=False)
    lex.whitespace_split = True
    lex.commenters = ""
    out: list[str] = []
    pos = 0
    try:
        while True:
            tok = lex.get_token()
            if tok is None or tok == lex.eof:
                break
            end = lex.instream.tell() if hasattr(lex.instream, "tell") else len(code)
            out.append(code[pos:end].strip())
            pos = end
    except ValueError:  # unbalanced quotes: one word
        return [code]
    return [w for w in out if w] or [code]
