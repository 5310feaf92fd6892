"""What every command does with bad input: one line on stderr, exit code 2; and a quiet closed pipe.

It exits with SystemExit, which typer passes through as it does its own Exit: the lean path of
the hot commands (whileai.cli.main) never imports typer."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import NoReturn

from whileai.errors import SpecError, clean


def fail(err: SpecError) -> NoReturn:
    """The one line for a bad input, then exit code 2."""
    err_line(f"error: {err}")
    raise SystemExit(2)


def err_line(line: str) -> None:
    """One line on stderr, secrets masked and escaped (a closed stderr is ignored)."""
    try:
        print(clean(line), file=sys.stderr)
    except (BrokenPipeError, UnicodeEncodeError):
        pass


@contextlib.contextmanager
def quiet_pipe() -> Iterator[None]:
    """Printing into a pipe that closed early (`| head -1`) ends quietly with exit code 0."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the flush at exit cannot fail again
        raise SystemExit(0) from None
