"""Writing compiled files: one plan for the CLI, the API and the recipes, then one commit.

`destinations()` says where each compiled spec goes (a target's file or run directory),
refusing collisions (two specs with one stem, `-o two.toml` for two specs). `plan()` checks
every destination before a byte is written: only regular files and directories are touched
(a FIFO, device, socket or symlink is refused, never opened), and an existing file is
overwritten only when whileai wrote it and it is unchanged since, as recorded per relative path
with its sha256 in the folder's `.whileai-files` (sha256sum's format), or with `force`.
`commit()` then writes all-or-nothing: every file goes to a temporary name first, then each is
renamed over its destination; any failure puts back what was there. A run directory is
recompiled in place; files whileai wrote there before and no longer produces are removed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from whileai.errors import SpecError, raw
from whileai.files import atomic
from whileai.spec import values

LISTING = ".whileai-files"
HEADER = "# written by whileai: the files it wrote here and their sha256 (sha256sum -c checks them)"
NAME_MAX = 255  # bytes in one path component (Linux, macOS)


class Dest(NamedTuple):
    root: Path | None  # the folder the files go in; None: nothing is written
    name: str  # a file target: the file's name; a directory target: the spec's name


class Output(NamedTuple):
    root: Path
    files: dict[str, str]  # name relative to root → text
    whole: bool = True  # the folder is this output's (a run directory) or shared (TOMLs)


class _File(NamedTuple):
    dest: Path
    text: str


class WritePlan(NamedTuple):
    files: list[_File]
    stale: list[Path]  # files whileai wrote before, unchanged, that this compile no longer makes
    dirs: list[Path]  # folders to create, outermost first


def check_out(out: Any, field: str = "out") -> Path:
    """`out` from the CLI or the API: a str or os.PathLike naming a path whileai may write."""
    if not isinstance(out, (str, os.PathLike)):
        raise SpecError(field, out, "a path (str or os.PathLike)")
    text = os.fspath(out)
    if not isinstance(text, str) or not text:
        raise SpecError(field, text, "a non-empty text path")
    values.check_string(text, field, lines=False)
    for part in Path(text).parts:
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX:
            raise SpecError(field, raw(f"a name of {len(part)} characters"),
                            f"file and folder names of at most {NAME_MAX} bytes")
    return Path(text)


def check_folder(out: Any, field: str, writes: str) -> Path:
    """`check_out` for a command that writes a folder: a path named like a file (`page.html`) is
    refused, since it would become a folder of that name."""
    path = check_out(out, field)
    if path.suffix.lower() in (".html", ".htm", ".json", ".toml", ".yaml", ".txt") and not path.is_dir():
        raise SpecError(field, str(path), f"a folder ({writes}), not a {path.suffix} file",
                        hint=f"e.g. {field} {path.with_suffix('')}")
    return path


def _name(stem: str) -> str:
    values.check_string(stem, "spec name", lines=False)
    if stem in ("", ".", "..") or "/" in stem or len(stem.encode()) > NAME_MAX - 5:
        raise SpecError("spec name", stem, f"a file name of at most {NAME_MAX - 5} bytes")
    return stem


_FILE_SUFFIXES = (".toml", ".yaml", ".yml", ".json")  # an output named like a file


def destinations(suffix: str | None, why: str, names: list[str], out: Any) -> list[Dest]:
    """Where each compiled spec goes. A file target (`suffix`: its file's suffix): `out` is the
    file (one spec) or a folder of <name><suffix>; a directory target (suffix None): `out` is the
    run directory (one spec) or a folder of <name>/ runs. why: the target's kind of output, for
    the error when `out` is of another kind."""
    names = [_name(n) for n in names]
    if out is None:
        return [Dest(None, n + (suffix or "")) for n in names]
    path = check_out(out)
    kind = _kind(path)
    many = len(names) > 1
    if suffix is not None:
        if not many and path.suffix == suffix and kind != "dir":
            found = [Dest(path.parent, path.name)]
        elif path.suffix and path.suffix != suffix and kind != "dir" and not many:
            raise SpecError("out", str(path), f"a {suffix} file or a directory ({why})")
        elif many and (path.suffix in (suffix, *_FILE_SUFFIXES)
                       or kind == "file"):
            raise SpecError("out", str(path), f"a directory when compiling {len(names)} specs")
        else:
            found = [Dest(path, n + suffix) for n in names]
    elif kind == "file":
        raise SpecError("out", str(path), f"a directory ({why})")
    elif kind != "dir" and path.suffix in _FILE_SUFFIXES:  # a directory named run.toml
        raise SpecError("out", str(path), f"a directory ({why}), not a {path.suffix} file",
                        hint=f"e.g. -o {path.with_suffix('')}")
    else:
        found = [Dest(path / n if many else path, n) for n in names]
    seen: dict[str, int] = {}
    for i, t in enumerate(found):
        where = os.path.abspath(os.path.join(t.root or "", t.name if suffix else ""))
        if where in seen:
            raise SpecError("out", where, "one destination per spec", hint=f"specs {seen[where] + 1} "
                            f"and {i + 1} have the same name {names[i]!r}; rename one or compile "
                            "them one at a time")
        seen[where] = i
    return found


def _kind(path: Path) -> str:
    """'missing', 'dir', 'file' or 'other' (without following a final symlink)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        raise SpecError("out", str(path), "a usable path", hint=e.strerror or type(e).__name__) \
            from None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "dir" if os.path.isdir(path) else "other"
    return "file" if stat.S_ISREG(mode) else "other"


def plan(outputs: list[Output], *, force: bool = False) -> WritePlan:
    """Check every destination of every output; nothing is written here."""
    folders: dict[Path, Output] = {}
    for out in outputs:  # several TOMLs into one folder: one listing for all of them
        had = folders.get(out.root)
        if had is not None and set(had.files) & set(out.files):
            raise SpecError("out", str(out.root / min(set(had.files) & set(out.files))),
                            "one spec per destination")
        folders[out.root] = Output(out.root, {**had.files, **out.files}, out.whole) if had else out
    files: list[_File] = []
    stale: list[Path] = []
    dirs: list[Path] = []
    for root, out in folders.items():
        _folder(root, dirs, top=True)
        owned = _owned(root)
        for rel, text in out.files.items():
            dest = root / rel
            for parent in reversed(Path(rel).parents[:-1]):
                _folder(root / parent, dirs, top=False)
            _check_file(dest, owned.get(rel), text, force)
            files.append(_File(dest, text))
        digests = {r: _sha(t) for r, t in out.files.items()}
        for rel, digest in owned.items():
            if rel in out.files or _digest(root / rel) != digest:
                continue  # made again, or changed by someone since: no longer whileai's
            if out.whole:
                stale.append(root / rel)  # a run directory holds what this compile makes
            else:
                digests[rel] = digest  # another spec's TOML in a shared folder stays listed
        _check_file(root / LISTING, None, "", True)
        listing = "".join(f"{digests[r]}  {r}\n" for r in sorted(digests))
        files.append(_File(root / LISTING, f"{HEADER}\n{listing}"))
    return WritePlan(files, stale, list(dict.fromkeys(dirs)))


def _folder(path: Path, dirs: list[Path], *, top: bool) -> None:
    kind = _kind(path)
    if kind == "dir" and (top or not os.path.islink(path)):
        return
    if kind != "missing":
        raise SpecError("out", str(path), "a directory (or a path that does not exist yet)",
                        hint="it is a file" if kind == "file" else "it is not a regular directory")
    if top:  # the nearest existing folder above must be a writable directory
        up = path.absolute().parent
        while not os.path.lexists(up) and up != up.parent:
            up = up.parent
        if not up.is_dir():
            raise SpecError("out", str(path), "a writable path", hint=f"{up} is not a directory")
        if not os.access(up, os.W_OK | os.X_OK):
            raise SpecError("out", str(path), "a writable path", hint=f"{up} is not writable")
    for p in reversed([path, *path.parents]):
        if not os.path.lexists(p):
            dirs.append(p)


def _check_file(dest: Path, digest: str | None, text: str, force: bool) -> None:
    kind = _kind(dest)
    if kind == "missing":
        return
    if kind != "file":
        raise SpecError("out", str(dest), "a regular file or a new path", hint="it is a directory"
                        if kind == "dir" else "it is not a regular file; whileai never writes to it")
    if force or (digest is not None and _digest(dest) == digest) or _digest(dest) == _sha(text):
        return
    raise SpecError("out", str(dest), "a new file or one whileai wrote, unchanged since", hint=(
        "it changed since whileai wrote it" if digest else "whileai did not write it")
        + "; pass --force (API: force=True) to overwrite it")


def _owned(root: Path) -> dict[str, str]:
    """Relative path → sha256, from the folder's listing (unreadable or odd: nothing owned)."""
    listing = root / LISTING
    if _kind(listing) != "file":
        return {}
    try:
        with open(listing, "rb") as f:
            lines = f.read(1 << 20).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    pairs = [line.split("  ", 1) for line in lines if not line.startswith("#")]
    return {rel: d for d, rel in (p for p in pairs if len(p) == 2)
            if len(d) == 64 and _inside(rel)}


def _inside(rel: str) -> bool:
    """A plain relative path below the folder (a listing never points outside it)."""
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts and rel != LISTING


@cache
def _sha256() -> Any:
    """The SHA-256 constructor: CPython's own where it has one (_sha2; _sha256 before 3.12), which
    spares a write hashlib's OpenSSL start-up (some 10 M instructions, more than hashing every
    file of a run); else hashlib's. The digests are the same."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment]
    return sha256


def _sha(text: str) -> str:
    return str(_sha256()(text.encode("utf-8")).hexdigest())


def _digest(path: Path) -> str | None:
    if _kind(path) != "file":
        return None
    h = _sha256()()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def commit(p: WritePlan, then: Callable[[], None] | None = None) -> None:
    """Write every file of the plan, or none (whileai.files.atomic); `then` checks them in
    place, and its exception takes the write back."""
    atomic.commit([(f.dest, f.text) for f in p.files], dirs=p.dirs, stale=p.stale, then=then)


def write(outputs: list[Output], *, force: bool = False, then: Callable[[], None] | None = None
          ) -> None:
    """Check everything, then write everything: the whole of one command, or nothing (also when
    `then`, run on the written files, raises)."""
    commit(plan(outputs, force=force), then)
