"""Plain-text layout for a terminal, a pipe or a log: lines that fit a width.

Prose wraps at spaces with a hanging indent (`textwrap`); a word longer than the width (a URL, a
model id) stays whole rather than being cut. Shell commands break only between shell words,
with a trailing backslash, so a wrapped command still pastes and runs as printed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import textwrap

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
    `hang`."""
    if width is None:
        return [indent + text]
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=hang,
                         break_long_words=False, break_on_hyphens=False) or [indent]


def command(cmd: str, width: int | None, indent: str = "    ") -> list[str]:
    """A shell command: a trailing `  # comment` on its own line above it, then the command
    broken between shell words with ` \\` continuations (quoted words are never split)."""
    code, _, comment = cmd.partition("  # ")
    lines = [f"{indent}# {comment}"] if comment else []
    if width is None:
        return [*lines, indent + code.rstrip()] if comment else [indent + cmd]
    words = _words(code.rstrip())
    cur = indent
    for w in words:
        if cur.strip() and len(cur) + 1 + len(w) + 2 > width:
            lines.append(cur + " \\")
            cur = indent + "  " + w
        else:
            cur = f"{cur} {w}" if cur.strip() else cur + w
    lines.append(cur)
    return lines


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
