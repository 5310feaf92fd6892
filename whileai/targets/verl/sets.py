"""The pinned verl catalogue (schemas/verl-0.9.1.catalog.json, written by
scripts/gen_verl_catalog.py in a Python with verl) as the checks an override meets.

Per job (`main_ppo`, `main_generation_server`, `sft_trainer`) the catalogue names the config it
composes; per config every key with its type, default and choices, the maps that take any key
(`open`), the keys a template gives (`distillation.teacher_models.<name>.*` as `teacher_model`'s)
and the keys verl's code reads that the YAML lacks (`read`: written with a `+`). No verl import.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from typing import TYPE_CHECKING, Any

from whileai.catalogs.paths import set_path
from whileai.catalogs.targets import schemas_dir
from whileai.errors import SpecError, raw
from whileai.targets.verl.pin import VERSION

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec

FILE = f"verl-{VERSION}.catalog.json"


@cache
def _raw() -> dict[str, Any] | None:
    path = schemas_dir() / FILE
    return json.loads(path.read_text()) if path.is_file() else None


def _config(job: str) -> dict[str, Any] | None:
    data = _raw()
    if data is None:
        return None
    name = data["jobs"][job]["config"]
    config: dict[str, Any] = data["configs"][name]
    return config


def _canonical(job: str, key: str) -> str:
    """A key under a template written as the template's own (`teacher_models.t2.x` -> `teacher_model.x`)."""
    config = _config(job) or {}
    for pattern, template in config.get("templates", {}).items():
        prefix = pattern.removesuffix("*")
        if key.startswith(prefix):
            rest = key[len(prefix):].partition(".")[2]
            return f"{template}.{rest}" if rest else template
    return key


def entry(job: str, key: str) -> dict[str, Any] | None:
    config = _config(job)
    if config is None:
        return None
    found: dict[str, Any] | None = config["keys"].get(_canonical(job, key))
    return found


def known(job: str, key: str) -> bool:
    """Whether the composed config has `key` (else run.sh writes `+key=`). Without the
    catalogue every key counts as known."""
    config = _config(job)
    if config is None:
        return True
    canon = _canonical(job, key)
    return canon in config["keys"] or any(canon.startswith(p + ".") for p in config.get("open", []))


def _read(job: str, key: str) -> bool:
    data, config = _raw() or {}, _config(job) or {}
    return key in data.get("jobs", {}).get(job, {}).get("read", {}) or key in config.get("read", {})


def check(job: str, key: str, value: Any) -> None:
    """SpecError unless verl's config has `key` (or verl reads it) and `value` fits its type."""
    config = _config(job)
    if config is None or _read(job, key):
        return
    found = entry(job, key)
    if found is None and not known(job, key):
        near = difflib.get_close_matches(key, list(config["keys"]), n=2, cutoff=0.8)
        raise SpecError(f"overrides.{key}", raw(f"unknown key {key!r}"),
                        f"a key of verl {VERSION}'s {_raw()['jobs'][job]['config']} config "  # type: ignore[index]
                        f"(schemas/{FILE})", hint=f"did you mean {' or '.join(map(repr, near))}?"
                        if near else "")
    if found is None:
        return
    choices = found.get("choices")
    if choices and value not in choices:
        raise SpecError(f"overrides.{key}", value, f"one of {', '.join(map(str, choices))} "
                        f"(verl {VERSION}: {found.get('choices_from', 'its config')})")
    kind = str(found.get("type", ""))
    if not _fits(kind, value):
        raise SpecError(f"overrides.{key}", value, f"a value of type {kind} (verl {VERSION}'s "
                        f"{found.get('dataclass') or 'config'})")


def _fits(kind: str, value: Any) -> bool:
    alts = [k.strip() for k in kind.split("|")] if kind else []
    if not alts or "Any" in alts or "None" in alts and value is None:
        return True
    checks = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "bool": lambda v: isinstance(v, bool), "str": lambda v: isinstance(v, str)}
    known_alts = [a for a in alts if a in checks]
    if len(known_alts) < len([a for a in alts if a != "None"]):
        return True  # a list, a dict or a class: verl's own check judges it
    return any(checks[a](value) for a in known_alts)


def apply(doc: dict[str, Any], run: RunSpec, job: str) -> set[str]:
    """The spec's overrides set in the document: the one place they meet verl's catalogue and
    whileai's own rules where verl is lax. Returns the keys written with `+` (not in verl's
    composed config)."""
    added: set[str] = set()
    for key, value in run.overrides.items():
        check(job, key, value)
        if not known(job, key):
            added.add(key)
        set_path(doc, key, value)
    return added
