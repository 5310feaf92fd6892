"""verl 0.9.1's Hydra keys, from the pinned catalogue schemas/verl-0.9.1.catalog.json.

    lookup("actor_rollout_ref.actor.optim.lr")          # CatalogKey(type="float", default=1e-06, ...)
    lookup("optim.lr", job="sft_trainer")               # the SFT trainer's config
    suggest("trainer.total_training_step")              # "did you mean 'trainer.total_training_steps'?"

The catalogue (written by scripts/gen_verl_catalog.py in a Python with verl, checked by its
`--check`) holds every key of the config each job composes (`ppo_trainer` for main_ppo and
main_generation_server, `sft_trainer_engine` for sft_trainer) with its type, default and, where
verl's code keeps a registry or a fixed list, the allowed values. A key is known when it is in
that config (or is a field of its section's dataclass that the YAML leaves out: `+key=`), below a
map that takes any key (`open`: `engine_kwargs.vllm.*`, ...), a teacher added beside
`teacher_model` (`templates`), or read by verl's code without a YAML default (`read`, with where).
Read once, lazily; nothing here imports verl.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, NamedTuple

from whileai.catalogs.targets import Catalog, schemas_dir
from whileai.targets.verl.pin import VERSION as PIN

FILE = f"verl-{PIN}.catalog.json"
JOBS = ("main_ppo", "main_generation_server", "sft_trainer")


class CatalogKey(NamedTuple):
    """One key of a verl job's composed config, as the catalogue states it."""

    key: str  # the key as asked (a teacher's own name kept)
    type: str  # "float", "int | None", "list[str]", ...; "Any" below an open map or for a read key
    default: Any  # the composed default (resolved where verl interpolates it)
    choices: tuple[Any, ...] = ()  # the values verl has (a registry or a fixed list), if any
    choices_from: str = ""  # where verl keeps them: "trainer/ppo/core_algos.py: ADV_ESTIMATOR_REGISTRY"
    interpolation: str = ""  # the `${...}` verl's YAML writes, when the default is one
    source: str = "yaml"  # "yaml"; "added" (a dataclass field the YAML leaves out: set it with
    # +key=); "open" (below a map that takes any key); or "read at FILE:LINE"
    dataclass: str = ""  # the `_target_` dataclass whose annotation is `type` ("": the YAML's value)


@cache
def document() -> dict[str, Any]:
    """The catalogue as JSON (read once)."""
    return dict(json.loads((schemas_dir() / FILE).read_text()))


def config_of(job: str) -> dict[str, Any]:
    """The catalogue's part for a job's config (`main_ppo` -> ppo_trainer's)."""
    jobs = document()["jobs"]
    if job not in jobs:
        raise KeyError(f"{job}: verl jobs are {', '.join(jobs)}")
    return dict(document()["configs"][jobs[job]["config"]])


def lookup(key: str, job: str = "main_ppo") -> CatalogKey | None:
    """The catalogue's entry for a Hydra key (a leading `+`, `++` or `~` ignored), or None."""
    key = key.lstrip("+~")
    conf = config_of(job)
    keys: dict[str, Any] = conf["keys"]
    canon = _templated(key, conf)
    if canon in keys:
        e = keys[canon]
        return CatalogKey(key, e["type"], e.get("default"), tuple(e.get("choices", ())),
                     e.get("choices_from", ""), e.get("interpolation", ""),
                     "added" if e.get("added") else "yaml", e.get("dataclass", ""))
    read = {**conf["read"], **document()["jobs"][job]["read"]}
    at = next((r for r in read if key == r or key.startswith(r + ".")), None)
    if at is not None:  # a key verl reads (a map of them: each key below it)
        return CatalogKey(key, "Any", None, source=f"read at {read[at]}")
    templated = {p.removesuffix(".*") for p in conf["templates"]}  # their entries have keys
    if any(canon.startswith(m + ".") for m in conf["open"] if m not in templated):
        return CatalogKey(key, "Any", None, source="open")
    return None


def suggest(key: str, job: str = "main_ppo") -> str:
    """`did you mean 'a.b'?` for an unknown key (the near misses prime-rl's catalogue finds:
    the same section first, then any key), or ""."""
    near = _catalog(job).suggest(key.lstrip("+~"))
    return f"did you mean {' or '.join(repr(n) for n in near)}?" if near else ""


def keys(job: str = "main_ppo") -> list[str]:
    """Every key of the job's config, sorted."""
    return list(config_of(job)["keys"])


def _templated(key: str, conf: dict[str, Any]) -> str:
    """A key below a map of templated entries, as the template's own key (`teacher_models.math.x`
    -> `teacher_models.teacher_model.x`)."""
    for pattern, template in conf["templates"].items():
        prefix = pattern.removesuffix("*")
        if key.startswith(prefix) and "." in key[len(prefix):]:
            return template + "." + key[len(prefix):].split(".", 1)[1]
    return key


@cache
def _catalog(job: str) -> Catalog:
    """The job's keys as the nested schema whileai.catalogs.targets.Catalog reads, so its
    suggestions are the ones `--set` gets for prime-rl and TRL."""
    conf = config_of(job)
    top: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    for key in [*conf["keys"], *conf["read"], *document()["jobs"][job]["read"]]:
        node = top
        for seg in key.split("."):
            node = node["properties"].setdefault(seg, {"type": "object", "properties": {},
                                                       "additionalProperties": False})
    for key in conf["open"]:
        _node(top, key)["additionalProperties"] = True
    for pattern, template in conf["templates"].items():  # a teacher added: teacher_model's keys
        parent, entry = _node(top, pattern.removesuffix(".*")), _node(top, template)
        parent["additionalProperties"] = entry
    return Catalog(top, f"verl {PIN} ({document()['jobs'][job]['config']})")


def _node(top: dict[str, Any], key: str) -> dict[str, Any]:
    node = top
    for seg in key.split("."):
        node = node["properties"][seg]
    return node
