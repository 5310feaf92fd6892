"""Write the pinned catalogue of verl's Hydra keys: schemas/verl-<version>.catalog.json.

Usage (in a Python with verl 0.9.1, e.g. /work/envs/verl: docs/verl.md):

    python scripts/gen_verl_catalog.py            # write schemas/verl-0.9.1.catalog.json
    python scripts/gen_verl_catalog.py --check    # exit 1 if the file on disk differs

For each config a verl job composes (`ppo_trainer` for main_ppo and main_generation_server,
`sft_trainer_engine` for sft_trainer), every key of the composed config, as Hydra composes it
from the installed package's trainer/config with no overrides: its type (the `_target_`
dataclass field's annotation where the key's section has one, else the YAML value's type; a
field the dataclass has and the YAML leaves out is listed with `added`: Hydra takes it as
`+key=`), its
default (resolved where it resolves; `interpolation` keeps the `${...}` verl wrote; `dataclass`
names the class that typed it), and `choices` where verl's code has a registry or a fixed list
(each with the source it came from).
Also, per job: `open` (maps that take any key: a dict-typed field, or an empty `{}`), `templates`
(`distillation.teacher_models.*` takes the keys of `teacher_model`), and `read` (keys verl's
code reads with `config.<section>.get("key")` or, for the generation job, reads outright,
that the YAML lacks: a `+key=` there is no typo). Structure only: no help text is copied.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the pin: whileai/targets/verl/pin.py (stdlib only, no whileai dependency)
from whileai.targets.verl.pin import VERSION as PIN  # noqa: E402

OUT = ROOT / "schemas" / f"verl-{PIN}.catalog.json"
JOBS = {"main_ppo": "ppo_trainer", "main_generation_server": "ppo_trainer",
        "sft_trainer": "sft_trainer_engine"}
# maps verl passes on whole, so any key below them is read (where, in verl 0.9.1)
OPEN = {"ppo_trainer": {"ray_kwargs.ray_init": "trainer/main_ppo.py:63-74 (ray.init(**ray_init))"}}
TEMPLATES = {"ppo_trainer": {"distillation.teacher_models.*": "distillation.teacher_models.teacher_model"}}
_GET = re.compile(r"\bconfig\.((?:[a-z_]+\.)*[a-z_]+)\.get\(\s*[\"']([A-Za-z_]+)[\"']")


def type_string(tp: Any) -> str:
    """An annotation as a short stable string: 'int | None', 'dict[str, Any]'."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_trl_catalog", ROOT / "scripts" / "gen_trl_catalog.py")
    assert spec and spec.loader
    trl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trl)
    return str(trl.type_string(tp))


def yaml_type(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict",
            type(None): "None"}.get(type(value), type(value).__name__)


def _literals(func: Any, name: str) -> list[str]:
    """The string constants `func`'s source compares `name` with (==, in (...), in [...])."""
    tree = ast.parse(inspect.getsource(func).lstrip() if not inspect.ismodule(func)
                     else inspect.getsource(func))
    found: list[str] = []
    lists: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
            strs = [e.value for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            lists.update({t.id: strs for t in node.targets if isinstance(t, ast.Name)})
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        if not ((isinstance(left, ast.Name) and left.id == name) or
                (isinstance(left, ast.Attribute) and left.attr == name)):
            continue
        for c in node.comparators:
            elts = c.elts if isinstance(c, (ast.Tuple, ast.List)) else [c]
            for e in elts:
                if isinstance(e, ast.Constant) and isinstance(e.value, str):
                    found.append(e.value)
                elif isinstance(e, ast.Name):
                    found += lists.get(e.id, [])
    return list(dict.fromkeys(found))


def _registered(folder: Path) -> list[str]:
    """The names `@register("name")` gives in a folder (importing it needs aiohttp)."""
    return sorted({m.group(1) for py in folder.glob("*.py")
                   for m in re.finditer(r"@register\(\s*[\"']([^\"']+)[\"']", py.read_text())})


def choices() -> dict[str, dict[str, Any]]:
    """Keys (ppo_trainer's, and sft's where named) -> allowed values and where verl keeps them."""
    from verl.trainer.distillation import losses
    from verl.trainer.ppo import core_algos
    from verl.utils.tracking import Tracking
    from verl.workers.config.actor import ActorConfig
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    adv = sorted(set(core_algos.ADV_ESTIMATOR_REGISTRY) | {e.value for e in core_algos.AdvantageEstimator})
    kl = _literals(core_algos.kl_penalty_forward, "kl_penalty")
    agg = _literals(ActorConfig.__post_init__, "loss_agg_mode")
    policy = (sorted(core_algos.POLICY_LOSS_REGISTRY), "trainer/ppo/core_algos.py: POLICY_LOSS_REGISTRY")
    pick = {
        "algorithm.adv_estimator": (adv, "trainer/ppo/core_algos.py: ADV_ESTIMATOR_REGISTRY, "
                                         "AdvantageEstimator"),
        "actor_rollout_ref.rollout.name": (sorted(RolloutReplicaRegistry._registry),
                                           "workers/rollout/replica.py: RolloutReplicaRegistry"),
        "actor_rollout_ref.actor.loss_agg_mode": (agg, "workers/config/actor.py: valid_loss_agg_modes"),
        "actor_rollout_ref.actor.policy_loss.loss_mode": policy,
        "actor_rollout_ref.actor.kl_loss_type": (kl, "trainer/ppo/core_algos.py: kl_penalty_forward"),
        "algorithm.kl_penalty": (kl, "trainer/ppo/core_algos.py: kl_penalty_forward"),
        "distillation.distillation_loss.loss_mode": (
            sorted(losses.DISTILLATION_LOSS_REGISTRY),
            "trainer/distillation/losses.py: DISTILLATION_LOSS_REGISTRY"),
        "distillation.distillation_loss.policy_loss_mode": policy,
        "distillation.teacher_models.teacher_model.inference.name": (
            sorted(RolloutReplicaRegistry._registry), "workers/rollout/replica.py: RolloutReplicaRegistry"),
        "reward.reward_manager.name": (_registered(Path(losses.__file__).parents[2] / "experimental" /
                                                   "reward_loop" / "reward_manager"),
                                       "experimental/reward_loop/reward_manager/*.py: @register"),
        "trainer.logger": (list(Tracking.supported_backend), "utils/tracking.py: Tracking.supported_backend"),
    }
    return {k: {"choices": list(v), "choices_from": src} for k, (v, src) in pick.items()}


def _field_types(target: str) -> dict[str, str]:
    import importlib

    module, _, name = target.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
        hints = typing.get_type_hints(cls)
    except Exception:  # a class verl cannot import here: the YAML's types stand
        return {}
    if not dataclasses.is_dataclass(cls):
        return {}
    return {f.name: type_string(hints.get(f.name, f.type)) for f in dataclasses.fields(cls)}


def _field_defaults(target: str) -> dict[str, Any]:
    """The dataclass's defaults (JSON-able, else None), for the fields its YAML leaves out."""
    import importlib

    module, _, name = target.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = f.default if f.default is not dataclasses.MISSING else None
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = None
        out[f.name] = value
    return out


def walk(cfg: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Every leaf of a composed config -> its entry; and the maps that take any key."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    keys: dict[str, dict[str, Any]] = {}
    open_: list[str] = []

    def visit(node: Any, prefix: str, types: dict[str, str]) -> None:
        target = node._get_node("_target_") if "_target_" in node else None
        own = _field_types(str(target._value())) if target is not None else {}
        for k in node.keys():
            child = node._get_node(k)
            path = f"{prefix}.{k}" if prefix else str(k)
            field_type = own.get(str(k)) or types.get(str(k))
            if isinstance(child, DictConfig) and not child._is_none() and len(child) > 0:
                if (field_type or "").startswith("dict"):  # a map with entries: each key read
                    open_.append(path)
                visit(child, path, {})
                continue
            raw = child._value()
            entry: dict[str, Any] = {}
            if isinstance(raw, str) and "${" in raw:
                entry["interpolation"] = raw
                try:
                    value = OmegaConf.select(cfg, path, throw_on_missing=False)
                except Exception:
                    value = None
            elif isinstance(child, (DictConfig, ListConfig)) and not child._is_none():
                value = OmegaConf.to_container(child, resolve=False)
            else:
                value = raw
            if isinstance(value, (DictConfig, ListConfig)):
                value = OmegaConf.to_container(value, resolve=True)
            entry["type"] = field_type or yaml_type(value)
            if str(k) in own:  # typed by the section's dataclass, not by the YAML's value
                entry["dataclass"] = str(target._value()).rsplit(".", 1)[-1]
            entry["default"] = None if value == "???" else value
            if value == "???":
                entry["required"] = True
            if entry["type"].startswith("dict") or value == {} and isinstance(child, DictConfig):
                open_.append(path)
            keys[path] = entry
        # fields the dataclass has and its YAML leaves out: Hydra takes them with +key=
        # (node.keys(): a ??? value is not `in` a DictConfig)
        missing = [k for k in own if k not in node.keys() and not k.startswith("_")]
        defaults = _field_defaults(str(target._value())) if missing and target is not None else {}
        for k in missing:
            path = f"{prefix}.{k}" if prefix else k
            keys[path] = {"type": own[k], "dataclass": str(target._value()).rsplit(".", 1)[-1],
                          "default": defaults.get(k), "added": True}
            base = own[k].split("|")[0].split("[")[0].strip()
            if base.startswith("dict") or base[:1].isupper() and base not in ("Any", "None"):
                open_.append(path)  # a map, or a config the YAML never spells out: any key below

    visit(cfg, "", {})
    return keys, open_


def reads(package: Path, keys: dict[str, Any], sft: bool) -> dict[str, str]:
    """Keys verl's code reads with `config.<section>.get("key")` that the YAML lacks -> file:line
    (the SFT trainer's own modules for `sft_trainer_engine`, every other module for `ppo_trainer`)."""
    out: dict[str, str] = {}
    sections = {k.rsplit(".", 1)[0] for k in keys if "." in k} | {k.split(".")[0] for k in keys}
    for py in sorted(package.rglob("*.py")):
        if ("sft" in py.name) != sft:
            continue
        rel = py.relative_to(package).as_posix()
        for n, line in enumerate(py.read_text(errors="replace").splitlines(), 1):
            for m in _GET.finditer(line):
                key = f"{m.group(1)}.{m.group(2)}"
                if m.group(1) in sections and key not in keys and not any(
                        k.startswith(key + ".") for k in keys):
                    out.setdefault(key, f"{rel}:{n}")
    return out


def build() -> dict[str, Any]:
    import verl
    from hydra import compose, initialize_config_dir

    package = Path(verl.__file__).parent
    configs: dict[str, Any] = {}
    picked = choices()
    with initialize_config_dir(config_dir=str(package / "trainer" / "config"), version_base=None):
        for name in sorted(set(JOBS.values())):
            keys, open_ = walk(compose(config_name=name))
            for key, extra in picked.items():
                if key in keys:
                    keys[key].update(extra)
            open_ += OPEN.get(name, {})
            configs[name] = {"keys": dict(sorted(keys.items())), "open": sorted(set(open_)),
                             "templates": TEMPLATES.get(name, {}),
                             "read": dict(sorted(reads(package, keys, name.startswith("sft")).items()))}
    gen = (package / "trainer" / "main_generation_server.py").read_text().splitlines()
    at = next(i for i, ln in enumerate(gen, 1) if "config.data.output_path" in ln)
    jobs = {job: {"config": cfg, "read": {}} for job, cfg in JOBS.items()}
    jobs["main_generation_server"]["read"] = {"data.output_path": f"trainer/main_generation_server.py:{at}"}
    return {"target": "verl", "verl_version": verl.__version__, "generated_by": "scripts/gen_verl_catalog.py",
            "jobs": jobs, "configs": configs}


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the catalogue on disk differs")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    import verl

    if verl.__version__ != PIN:
        print(f"verl {verl.__version__} is installed; the catalogue is pinned at {PIN}", file=sys.stderr)
        return 2
    text = render(build())
    if args.check:
        same = OUT.is_file() and OUT.read_text() == text
        print(f"{OUT.relative_to(ROOT)}: {'up to date' if same else 'differs: regenerate it'}")
        return 0 if same else 1
    OUT.write_text(text)
    counts = ", ".join(f"{n}: {len(c['keys'])} keys" for n, c in json.loads(text)["configs"].items())
    print(f"wrote {OUT.relative_to(ROOT)} ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
