"""Is an output folder writable? Asked before any expensive work (loading models, compiling
arms, sampling), so a bad `-o` / `--out` costs one line and exit 2, never a traceback at the end.

The probe creates and removes one empty file in the nearest folder that exists: the only
honest test (permissions, read-only mounts and /proc all answer it), and nothing stays behind.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from whileai.errors import SpecError

T = TypeVar("T")
_TEMP = r"^\.(?P<name>.+)\.whileai-\d+-\d+\.(?:tmp|bak)$"  # compiled on first use


def probe(path: str | Path, field: str = "--out") -> None:
    """SpecError naming `path` as typed unless a folder can be made (or written) there."""
    typed = str(path)
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise SpecError(field, typed, "a folder (a file is there)")
    base = p
    while not base.exists():
        if base.parent == base:
            break
        base = base.parent
    if not base.is_dir():
        raise SpecError(field, typed, f"a writable folder ({base} is a file)")
    try:
        fd, name = tempfile.mkstemp(prefix=".whileai-probe-", dir=base)
    except OSError as e:
        raise SpecError(field, typed, "a writable folder", hint=e.strerror or str(e)) from None
    os.close(fd)
    os.unlink(name)


def typed(filename: str | None, fallback: str = "out") -> str:
    """The destination a user named for a path whileai wrote through a temporary file
    ('.x.toml.whileai-12-0.tmp' -> 'x.toml'), so no message names a temporary file."""
    if not filename:
        return fallback
    p = Path(filename)
    m = re.match(_TEMP, p.name)
    return str(p.with_name(m.group("name"))) if m else str(filename)


def out_error(e: OSError, field: str = "--out", where: str | Path | None = None) -> SpecError:
    """An OSError while writing outputs as the one-line error naming the typed path."""
    name = str(where) if where is not None else typed(getattr(e, "filename", None))
    return SpecError(field, name, "a writable path", hint=e.strerror or str(e))


def named(specs: list[Path], spec: Path, work: Callable[[], T]) -> T:
    """`work()`; with several spec files, a SpecError it raises names its spec file first."""
    try:
        return work()
    except SpecError as e:
        if len(specs) < 2 or str(spec) in str(e):
            raise
        raise SpecError(f"{spec}: {e.field}", e.value, e.allowed, hint=e.hint) from None
