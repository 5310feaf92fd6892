"""All-or-nothing file writes: temporary files beside their destinations, then renames.

`commit` writes a set of files as one (whileai.files.write plans them; readers see the old files or
the new ones, and a failure puts back what was there); `atomic_write` is the one-file form that
manifests, metrics and results use. No fsync for configs (a rename already keeps readers from a
partial file, and a config is rewritten in milliseconds); `durable=True` for what outlives a run.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from whileai.errors import SpecError


def commit(files: Sequence[tuple[Path, str]], *, dirs: Sequence[Path] = (),
           stale: Sequence[Path] = (), then: Callable[[], None] | None = None) -> None:
    """Write every file, or none: the folders and a temporary file beside each destination
    first, then one rename each; a failure anywhere removes the temporary files and folders
    and renames back what was there. `then` runs with every file in place (a check of the
    written files); an exception from it undoes the write the same way and is raised again
    (Ctrl-C keeps the files: the caller names them). Then the stale files go."""
    made: list[Path] = []
    temps: list[tuple[Path, Path]] = []
    done: list[tuple[Path, Path | None]] = []  # (dest, backup of what it replaced)
    try:
        for d in dirs:
            os.mkdir(d)
            made.append(d)
        for dest, text in files:
            temps.append((_temp(dest, text), dest))
        for tmp, dest in temps:
            backup = None
            if os.path.lexists(dest):  # a hard link keeps what was there until the end
                backup = _free(dest, "bak")
                _keep(dest, backup)
            try:
                os.replace(tmp, dest)
            except OSError:
                if backup is not None:
                    backup.unlink()
                raise
            done.append((dest, backup))
    except OSError as e:
        _undo(temps, done, made)
        from whileai.files.writable import typed

        where = typed(getattr(e, "filename", None))  # the destination, never its temporary file
        raise SpecError("out", where, "a writable path", hint=e.strerror or str(e)) from None
    if then is not None:
        try:
            then()
        except Exception:
            _undo(temps, done, made)
            raise
        except BaseException:
            _drop(done)
            raise
    _drop(done)
    for old in stale:
        old.unlink(missing_ok=True)


def _drop(done: list[tuple[Path, Path | None]]) -> None:
    """The backups of what the files replaced, once the write stands."""
    for _, backup in done:
        if backup is not None:
            backup.unlink(missing_ok=True)


def _keep(dest: Path, backup: Path) -> None:
    try:
        os.link(dest, backup)
    except OSError:  # a file system without hard links: a copy does
        shutil.copyfile(dest, backup)


def _undo(temps: list[tuple[Path, Path]], done: list[tuple[Path, Path | None]],
          made: list[Path]) -> None:
    for dest, backup in reversed(done):
        try:
            os.replace(backup, dest) if backup is not None else os.unlink(dest)
        except OSError:
            pass
    for tmp, _ in temps:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError:
            pass


def _free(dest: Path, tag: str) -> Path:
    for n in itertools.count():
        p = dest.with_name(f".{dest.name}.whileai-{os.getpid()}-{n}.{tag}")
        if not os.path.lexists(p):
            return p
    raise AssertionError("unreachable")


def _temp(dest: Path, text: str, *, durable: bool = False) -> Path:
    """A new file beside `dest` holding `text` (the usual mode: 0666 less umask)."""
    while True:
        tmp = _free(dest, "tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            if durable:
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_write(dest: str | Path, text: str, *, durable: bool = True) -> None:
    """One file through a temporary file and a rename: readers see the old file or the new
    one, never a part (manifests, metrics, results). `durable`: fsync before the rename."""
    dest = Path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temp(dest, text, durable=durable)
    except OSError as e:  # name the destination, not a temporary file beside it
        raise OSError(e.errno, e.strerror, str(dest)) from e
    try:
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
