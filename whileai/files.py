"""Spec loading, pydantic errors as one clear message, atomic writes, file ownership."""

from __future__ import annotations

import itertools
import os
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from whileai.errors import SpecError, close_matches, raw
from whileai.spec import METHODS, RunSpec, validate_raw

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MARKER = "written by whileai"
_UNION_MARK = re.compile(r"[^A-Za-z0-9_$]")
_TYPES = {"int", "str", "float", "bool", "list", "dict", "none"}


def loads_toml(text: str, where: str = "TOML") -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(where, raw("malformed TOML"), "fix the syntax", hint=str(e)) from None


def load_spec(path: str | Path, overrides: dict[str, Any] | None = None) -> RunSpec:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError("spec", str(p), "a readable UTF-8 TOML file", hint=e.__class__.__name__) \
            from None
    data = loads_toml(text, where=str(p))
    if isinstance(data.get("data"), str) and not Path(data["data"]).is_absolute():
        data["data"] = str(p.parent / data["data"])  # a spec's data file is relative to the spec
    if overrides:
        data["overrides"] = {**data.get("overrides", {}), **overrides}
    return build(RunSpec, data)


def build(model: type[BaseModel], data: Any) -> Any:
    """Validate `data` into `model`, turning pydantic's errors into one SpecError."""
    try:
        return validate_raw(model, data)
    except ValidationError as e:
        raise from_validation(e, model) from None


def from_validation(exc: ValidationError, model: type[BaseModel]) -> SpecError:
    err = exc.errors(include_url=False)[0]
    # drop the markers pydantic adds inside unions ('constrained-int', "literal['full']", 'str')
    loc = [str(x) for x in err["loc"] if not _UNION_MARK.search(str(x)) and str(x) not in _TYPES]
    # drop the union tag pydantic inserts (method.opd.samples → method.samples)
    if len(loc) >= 2 and loc[0] == "method" and loc[1] in METHODS:
        loc = [loc[0], *loc[2:]]
    field = ".".join(loc) or model.__name__
    kind, value = err["type"], err.get("input")
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1], data_method=_method_of(exc))
        near = close_matches(loc[-1], known, n=1, cutoff=0.6)
        return SpecError(field, raw("unknown field"), f"known fields here: {', '.join(known)}",
                         hint=f"did you mean {near[0]!r}?" if near else "")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return SpecError(f"{field}.type" if not field.endswith("type") else field,
                         err.get("ctx", {}).get("tag", value),
                         f"one of {', '.join(METHODS)}", hint=_near(value, list(METHODS)))
    if kind == "missing":
        return SpecError(field, raw("missing"), "this field is required")
    msg = err["msg"].removeprefix("Value error, ")
    if isinstance(value, dict):
        value = raw("a table")
    return SpecError(field, value, msg[0].lower() + msg[1:] if msg else "see the docs")


def _near(value: Any, options: list[str]) -> str:
    if isinstance(value, str):
        near = close_matches(value, options, n=1, cutoff=0.5)
        if near:
            return f"did you mean {near[0]!r}?"
    return ""


def _method_of(exc: ValidationError) -> str | None:
    for e in exc.errors(include_url=False):
        if len(e["loc"]) >= 2 and e["loc"][0] == "method" and e["loc"][1] in METHODS:
            return str(e["loc"][1])
    return None


def _fields_at(model: type[BaseModel], loc: list[str], data_method: str | None) -> list[str]:
    cur: Any = model
    for seg in loc:  # walk the models along the error's location
        if seg == "method" and cur is RunSpec:
            cur = METHODS.get(data_method or "", None)
            if cur is None:
                return []
            continue
        info = cur.model_fields.get(seg) if cur is not None else None
        if info is None:
            return []
        args = getattr(info.annotation, "__args__", None) or (info.annotation,)
        cur = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if cur is None:
            return []
    return [(i.alias or n) for n, i in cur.model_fields.items() if n != "schema_"]


def owned_by_whileai(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return MARKER in f.read(400)
    except OSError:
        return False


def write_files(target: Path, files: dict[str, str], *, single: bool, force: bool) -> list[Path]:
    """Write compiled files atomically; refuse to clobber files whileai did not write.

    `single`: `target` is the file itself; otherwise `target` is a directory.
    Everything is checked before anything is written.
    """
    plans = [(target, next(iter(files.values())))] if single else [
        (target / name, text) for name, text in files.items()
    ]
    listed = set() if single else _listed(target)
    for dest, _ in plans:
        if dest.is_dir():
            raise SpecError("out", str(dest), "a file path (it is a directory)")
        mine = dest.name in listed or owned_by_whileai(dest)
        if dest.exists() and not force and not mine:
            raise SpecError("out", str(dest), "a new file or one whileai wrote",
                            hint="it exists and whileai did not write it; pass --force")
    for dest, text in plans:
        write_atomic(dest, text)
    if not single:
        names = sorted(listed | set(files))
        write_atomic(target / LISTING, f"# {MARKER}: files it owns here\n" + "\n".join(names) + "\n")
    return [d for d, _ in plans]


LISTING = ".whileai-files"


def _listed(folder: Path) -> set[str]:
    try:
        lines = (folder / LISTING).read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    return {x for x in lines if x and not x.startswith("#")}


def write_atomic(dest: Path, text: str) -> None:
    """atomic_write for the CLI and API: an OSError becomes one SpecError naming the path.
    No fsync: the rename already keeps readers from a partial file, and a config is rewritten
    in milliseconds if a power cut loses it."""
    try:
        atomic_write(dest, text, durable=False)
    except OSError as e:
        raise SpecError("out", str(dest), "a writable path", hint=e.strerror or str(e)) from None


def atomic_write(dest: Path, text: str, *, durable: bool = True) -> None:
    """Write through a temporary file beside `dest` and rename it over `dest`: readers see the
    old file or the new one, never a part. The file gets the usual mode (0666 less umask).
    `durable`: fsync before the rename (manifests and metrics, which outlive a crash)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count():
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{n}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
