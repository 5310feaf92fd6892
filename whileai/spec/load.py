"""Reading input: spec files → RunSpec, TOML text, `--set` assignments, and pydantic's errors
turned into one SpecError line (with a did-you-mean that knows which model it is in).

Files are read only when they are regular files (a FIFO or a device is refused before it is
opened, so nothing hangs or reads forever) and only up to a size limit. Reading files and TOML
needs no pydantic (`whileai check` reads prime-rl files through here): it is imported where a
spec is built.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.catalogs import paths
from whileai.errors import SpecError, raw

if TYPE_CHECKING:
    from pydantic import BaseModel

    from whileai.spec.run import RunSpec

SPEC_LIMIT = 1 << 20  # a spec or a hand-written config: 1 MiB is far beyond any real one


def read_bytes(path: str | Path, field: str, limit: int, what: str = "file") -> bytes:
    """The bytes of a regular file, at most `limit`; SpecError for anything else.

    The file is opened non-blocking and checked with fstat before any read, so a FIFO
    swapped in after a stat is refused too, never waited on."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(field, str(p), f"a regular {what}", hint=_kind(st.st_mode))
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SpecError(field, raw(f"no such file: {p}"), f"the path of an existing {what}") from None
    except OSError as e:
        raise SpecError(field, str(p), f"a readable {what}", hint=e.strerror or type(e).__name__) \
            from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SpecError(field, str(p), f"a regular {what}")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise SpecError(field, str(p), f"a {what} of at most {limit >> 20} MiB")
    return data


def read_text(path: str | Path, field: str, limit: int = SPEC_LIMIT, what: str = "file") -> str:
    data = read_bytes(path, field, limit, what)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # a BOM some editors write
    except UnicodeDecodeError as e:
        raise SpecError(field, str(path), f"a UTF-8 {what}",
                        hint=f"the byte at offset {e.start} is not UTF-8") from None


def _kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a directory", stat.S_ISFIFO: "a named pipe (FIFO)",
             stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
             stat.S_ISSOCK: "a socket"}
    return next((f"it is {name}" for test, name in kinds.items() if test(mode)), "not a file")


def loads_toml(text: str, where: str = "TOML") -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: a spec built in Python reads no TOML
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(where, raw("malformed TOML"), "fix the syntax", hint=str(e)) from None
    except RecursionError:
        raise SpecError(where, raw("TOML nested too deeply"), "a flatter file") from None


def load_spec(path: str | Path, sets: dict[str, Any] | None = None) -> Any:
    """A spec file → RunSpec, with `--set` overrides (canonical keys) on top of its [overrides]."""
    from whileai.spec.run import RunSpec

    p = Path(path)
    data = loads_toml(read_text(p, "spec", what="TOML file"), where=str(p))
    if isinstance(data.get("data"), str) and data["data"] and not Path(data["data"]).is_absolute():
        data["data"] = str(p.parent / data["data"])  # a spec's data file is relative to the spec
    for source in data.get("sources") or []:  # a source's own data file too
        if isinstance(source, dict) and isinstance(source.get("data"), str) and source["data"] \
                and not Path(source["data"]).is_absolute():
            source["data"] = str(p.parent / source["data"])
    if sets:
        mine = data.get("overrides", {})
        mine = paths.flatten(mine) if isinstance(mine, dict) else mine
        if isinstance(mine, dict):
            merged = {k: v for k, v in mine.items() if k not in sets} | sets
            paths.conflicts({k: paths.parse(k) for k in merged})
            data["overrides"] = merged
    foreign = [k for k in data if k not in RunSpec.model_fields and k != "$schema"]
    if not {"taskset", "method"} & set(data) and any(isinstance(data[k], dict) for k in foreign):
        # tables no spec has, and none of a spec's own: a framework's config, most likely
        raise SpecError(str(p), raw(f"no taskset, and {', '.join(map(repr, foreign[:4]))} "
                                    f"{'is no spec field' if len(foreign) == 1 else 'are no spec fields'}"),
                        "a whileai run spec (taskset, model, [method]); for a prime-rl config or a "
                        f"TRL run directory written by hand: whileai check {p}")
    run = build(RunSpec, data)
    run._origin = str(p.parent)  # where a reward module beside the spec is looked for
    return run


def parse_sets(items: list[str]) -> dict[str, Any]:
    """`--set` assignments → {canonical key: value}; the same key twice is an error."""
    out: dict[str, Any] = {}
    for text in items:
        key, value = parse_set(text)
        if key in out:
            raise SpecError(f"--set {key}", raw("given twice"), "give each key once (a.b[0] and "
                            "a.b.0 are the same key)")
        out[key] = value
    paths.conflicts({k: paths.parse(k) for k in out}, where="--set")
    return out


def parse_set(text: str) -> tuple[str, Any]:
    """`a.b=3e-6` → ("a.b", 3e-06). Values are TOML values; a bare word is a string."""
    key, eq, rhs = text.partition("=")
    key, rhs = key.strip(), rhs.strip()
    if not eq or not key:
        raise SpecError("--set", text, "expected dotted.key=value, e.g. trainer.optim.lr=3e-6")
    key = paths.canonical(key, where="--set")
    try:
        value = loads_toml(f"v = {rhs}")["v"]
    except (SpecError, KeyError):
        value = rhs
    return key, value


def build(model: type[BaseModel], data: Any) -> Any:
    """Validate `data` into `model`, turning pydantic's errors into one SpecError."""
    from pydantic import ValidationError

    from whileai.spec.base import validate_raw
    from whileai.spec.validation import from_validation

    try:
        return validate_raw(model, data)
    except ValidationError as e:
        raise from_validation(e, model) from None


def replace_run(run: RunSpec, **changes: Any) -> RunSpec:
    """A validated copy of `run` with fields changed (nested: pass the whole sub-table)."""
    from whileai.spec.run import RunSpec

    # the run's fields the spec set, not every default: "set" is what the contradiction checks
    # read (lora_rank with lora = false); nested tables whole (a method's type is its tag)
    set_ = {(RunSpec.model_fields[n].alias or n) for n in run.model_fields_set}
    data = {k: v for k, v in run.model_dump(mode="python", by_alias=True).items() if k in set_}
    data |= changes
    if changes.get("lora") is False and "lora_rank" not in changes:
        data.pop("lora_rank", None)  # full weights have no rank: one set would contradict lora
    if not data.get("overrides"):  # an empty table flattens to a key '' (spec._flatten)
        data.pop("overrides", None)
    new: RunSpec = build(RunSpec, data)
    # where the spec file was: a PrivateAttr (not a field) where spec.py declares one
    origin = getattr(run, "_origin", None)
    if origin is not None:
        new._origin = origin  # type: ignore[attr-defined]
    return new
