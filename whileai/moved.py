"""Module paths from before the package layout (whileai 0.1.0's first round), kept importable.

`from whileai.backends import prime_rl`, `from whileai.arms import Arms` and the like still work:
each old path is the module at its new path (the same object), found on first import. New code
imports the new paths; this table is the whole of the compatibility, and `docs/layout.md` prints it.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from typing import Any

MOVED: dict[str, str] = {
    "whileai.arms": "whileai.launch.arms",
    "whileai.atomic": "whileai.files.atomic",
    "whileai.budget": "whileai.cost.budget",
    "whileai.catalog": "whileai.catalogs.targets",
    "whileai.cli_arms": "whileai.cli.arms",
    "whileai.fieldmap": "whileai.report.fieldmap",
    "whileai.layout": "whileai.spec.layout",
    "whileai.load": "whileai.spec.load",
    "whileai.methods": "whileai.spec.methods",
    "whileai.mixture": "whileai.spec.mixture",
    "whileai.paths": "whileai.catalogs.paths",
    "whileai.render": "whileai.report.render",
    "whileai.report_model": "whileai.report.model",
    "whileai.rules_scale": "whileai.rules.scale",
    "whileai.schemas": "whileai.cli.schemas",
    "whileai.sizes": "whileai.cost.sizes",
    "whileai.spec_tables": "whileai.spec.tables",
    "whileai.stages": "whileai.targets.stages",
    "whileai.taskset_catalog": "whileai.catalogs.tasksets",
    "whileai.tiny": "whileai.launch.tiny",
    "whileai.tokcheck": "whileai.vocab.compare",
    "whileai.tokfiles": "whileai.vocab.files",
    "whileai.validation": "whileai.spec.validation",
    "whileai.values": "whileai.spec.values",
    "whileai.write": "whileai.files.write",
    "whileai.backends": "",  # a folder of old names only
    "whileai.backends.overrides": "whileai.targets.overrides",
    "whileai.backends.prime_rl": "whileai.targets.prime_rl.compile",
    "whileai.backends.prime_rl_algo": "whileai.targets.prime_rl.algo",
    "whileai.backends.prime_rl_deploy": "whileai.targets.prime_rl.deploy",
    "whileai.backends.prime_rl_deploy_rules": "whileai.targets.prime_rl.loader.deploy",
    "whileai.backends.prime_rl_loader": "whileai.targets.prime_rl.loader",
    "whileai.backends.prime_rl_map": "whileai.targets.prime_rl.fieldmap",
    "whileai.backends.prime_rl_mixture": "whileai.targets.prime_rl.mixture",
    "whileai.backends.prime_rl_renderer": "whileai.targets.prime_rl.renderer",
    "whileai.backends.prime_rl_resolve": "whileai.targets.prime_rl.resolve",
    "whileai.backends.prime_rl_rules": "whileai.targets.prime_rl.check",
    "whileai.backends.prime_rl_teacher": "whileai.targets.prime_rl.teacher",
    "whileai.backends.trl": "whileai.targets.trl.compile",
    "whileai.backends.trl_accelerate": "whileai.targets.trl.accelerate",
    "whileai.backends.trl_catalog": "whileai.targets.trl.catalog",
    "whileai.backends.trl_check": "whileai.targets.trl.check",
    "whileai.backends.trl_cost": "whileai.targets.trl.cost",
    "whileai.backends.trl_map": "whileai.targets.trl.fieldmap",
    "whileai.backends.trl_reward": "whileai.targets.trl.reward",
    "whileai.inspect": "whileai.tokenview",
    "whileai.launch.recipe": "whileai.cli.recipe",
    "whileai.results.budget": "whileai.results.spend",
}


def _target(name: str) -> str | None:
    if name in MOVED:
        return MOVED[name]
    head, _, tail = name.rpartition(".")
    if head in MOVED and MOVED[head]:  # a submodule of a moved package (whileai.inspect.app)
        return f"{MOVED[head]}.{tail}"
    return None


class _Alias:
    """A loader (duck-typed, so importing importlib.abc is not paid at start-up)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []  # so old submodule names resolve  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if self.target:  # the import system returns whatever sys.modules holds after this
            sys.modules[module.__name__] = importlib.import_module(self.target)


class _Finder:
    def find_spec(self, name: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = _target(name) if name.startswith("whileai.") else None
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(name, _Alias(new), is_package=True)  # type: ignore[arg-type]


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

