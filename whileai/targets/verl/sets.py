"""The spec's overrides (`--set`, `[overrides]`) against verl 0.9.1's pinned catalogue: the adapter
(`HydraKeys`) through which the shared override engine (whileai.targets.overrides) checks them.

A key must be in the config the job composes (catalog.lookup: the YAML's keys, a map that takes
any key, a teacher beside `teacher_model`, or a key verl's code reads without a YAML default,
written `+key=`), and its value must fit the type and the choices the catalogue states. No verl
import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whileai.errors import SpecError, raw
from whileai.targets.verl import catalog, lax
from whileai.targets.verl.pin import VERSION
from whileai.targets.verl.values import fits

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec


def check(job: str, key: str, value: Any) -> catalog.CatalogKey:
    """SpecError unless verl's config for `job` has `key` and `value` fits it; else its entry."""
    found = catalog.lookup(key, job)
    config = catalog.document()["jobs"][job]["config"]
    if found is None:
        raise SpecError(f"overrides.{key}", raw(f"unknown key {key!r}"),
                        f"a key of verl {VERSION}'s {config} config (schemas/{catalog.FILE})",
                        hint=catalog.suggest(key, job))
    items = value if isinstance(value, list) else [value]  # trainer.logger: a list of backends
    if found.choices and (bad := [v for v in items if v not in found.choices]):
        raise SpecError(f"overrides.{key}", value if bad == [value] else bad[0],
                        ("each item " if isinstance(value, list) else "")
                        + f"one of {', '.join(map(str, found.choices))} "
                        f"(verl {VERSION}: {found.choices_from or config})")
    if not fits(value, found.type, strict=bool(found.dataclass)):  # one rule with lax's
        raise SpecError(f"overrides.{key}", value, f"a value of type {found.type} (verl {VERSION}'s "
                        f"{config} config)")
    return found


def added(entry: catalog.CatalogKey) -> bool:
    """Whether run.sh writes the key with `+` (Hydra refuses a plain override of a key the
    composed config lacks)."""
    return entry.source.startswith("read")


class HydraKeys:
    """verl's catalogue adapter for the shared override engine (whileai.targets.overrides
    .apply_overrides): one job's composed config; a key it lacks but verl's code reads is an
    addition (`+key=`)."""

    def __init__(self, job: str) -> None:
        self.job = job

    def check(self, path: str, value: Any) -> bool:
        return added(check(self.job, path, value))


def lax_check(pairs: list[tuple[str, str]], job: str, run: RunSpec, prefix: str = "") -> None:
    """whileai's own rules where verl is lax (whileai.targets.verl.lax) on one job's final
    overrides (`+key`, Hydra's raw value); a refusal of a key the spec's overrides set names it
    as `overrides.<key>`."""
    try:
        lax.first_error(dict(pairs), job=job)
    except SpecError as e:
        key = e.field.lstrip("+")
        if prefix + key in run.overrides:
            raise SpecError(f"overrides.{prefix}{key}", e.value, e.allowed, hint=e.hint) from None
        raise
