"""The verifiers plugins a prime-rl loader environment can resolve: tasksets, harnesses, envs, judges.

Shared by gen_prime_rl_catalog.py and gen_prime_rl_tasksets.py; runs in the loader's Python
(prime-rl-configs at 559b447 + the verifiers it pins + the example environments; see
../shared/reference/prime-rl/README.md). Plugins are found the way verifiers' own loader
(`verifiers.v1.utils.loaders`) finds them: a plugin id names a module, tried first inside
verifiers (`verifiers.v1.<group>.<module>`), then as an installed package, and the module's
`__all__` exports exactly one subclass of the plugin's base class. Ids are written kebab-case
(`claude-code`); the loader also accepts `claude_code`, `owner/claude-code@1.0` (hub form).
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

GROUPS = ("tasksets", "harnesses", "envs", "judges")


@dataclass
class Plugins:
    """id -> class for each kind, the package (distribution) providing each id, and failures."""

    tasksets: dict[str, type] = field(default_factory=dict)
    harnesses: dict[str, type] = field(default_factory=dict)
    envs: dict[str, type] = field(default_factory=dict)
    judges: dict[str, type] = field(default_factory=dict)
    package: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def kebab(module: str) -> str:
    return module.replace("_", "-")


def _exports(module: Any, base: type) -> list[type]:
    names = getattr(module, "__all__", None) or []
    return [
        obj
        for n in names
        if isinstance(obj := getattr(module, n, None), type) and issubclass(obj, base) and obj is not base
    ]


def _candidate_modules() -> dict[str, str]:
    """module name -> providing distribution, for verifiers' built-ins and installed packages
    that depend on verifiers."""
    import verifiers.v1 as vf1

    out: dict[str, str] = {}
    for group in GROUPS:
        pkg = importlib.import_module(f"verifiers.v1.{group}")
        for m in pkgutil.iter_modules(pkg.__path__):
            out.setdefault(m.name, "verifiers")
    del vf1
    for dist in md.distributions():
        name = dist.metadata["Name"]
        files = [str(f) for f in dist.files or [] if str(f).endswith(".py") and "/" in str(f)]
        if not name or name in ("verifiers",) or name.lower().startswith("prime-rl") or len(files) > 300:
            continue
        # a plugin package is a small package whose code imports verifiers
        for module in sorted({f.split("/")[0] for f in files} - {"tests"}):
            own = [f for f in files if f.startswith(module + "/")]
            if any(_imports_verifiers(dist, f) for f in own):
                out.setdefault(module, name)
    return out


def _imports_verifiers(dist: Any, file: str) -> bool:
    try:
        text = dist.locate_file(file).read_text(errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*(from|import)\s+verifiers\b", text, re.M) is not None


def discover() -> Plugins:
    from verifiers.v1.env import Env
    from verifiers.v1.harness import Harness
    from verifiers.v1.judge import Judge
    from verifiers.v1.taskset import Taskset

    kinds = {"tasksets": (Taskset, "tasksets"), "harnesses": (Harness, "harnesses"),
             "envs": (Env, "envs"), "judges": (Judge, "judges")}
    found = Plugins()
    for module_name, dist in sorted(_candidate_modules().items()):
        pid = kebab(module_name)
        for attr, (base, group) in kinds.items():
            # verifiers' own plugins live in its group package; other packages are top-level
            target = f"verifiers.v1.{group}.{module_name}" if dist == "verifiers" else module_name
            try:
                if importlib.util.find_spec(target) is None:
                    continue
                module = importlib.import_module(target)
            except Exception as e:  # noqa: BLE001 - a plugin that cannot import is reported
                found.failed[f"{attr}:{pid}"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                continue
            classes = _exports(module, base)
            if len(classes) == 1:
                getattr(found, attr)[pid] = classes[0]
                found.package[f"{attr}:{pid}"] = dist
            elif len(classes) > 1:
                found.failed[f"{attr}:{pid}"] = f"exports {len(classes)} {base.__name__} subclasses"
    return found


def workspace_environments(pin_tree: Path | None) -> dict[str, str]:
    """Environment packages prime-rl's uv workspace lists at the pin: package name -> member path.

    Read from the pin's uv.lock (editable workspace members under deps/*/environments)."""
    if pin_tree is None or not (pin_tree / "uv.lock").is_file():
        return {}
    lock = tomllib.loads((pin_tree / "uv.lock").read_text())
    out = {}
    for pkg in lock.get("package", []):
        src = pkg.get("source", {}).get("editable", "")
        if "/environments/" in src:
            out[pkg["name"]] = src
    return dict(sorted(out.items()))
