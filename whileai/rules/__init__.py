"""Research-backed warnings as data: each rule has an id, a condition, a message and a citation.

- `base`: `Rule`, `Facts` and `Finding`, what every rule set is made of;
- `research`: the method rules (teacher size, tokenizers, temperature, holdout ...);
- `scale`: the rules about a run's scale (nodes, engines, SLURM).

A target's load-time validation (prime-rl's loader mirror) is not here: it lives with the target
(`whileai.targets.prime_rl.loader`). May import: the facts, `whileai.spec`, `whileai.catalogs`.
"""

import importlib
import pkgutil
from typing import Any

# this package's own modules are found by the import system, never by __getattr__ below
_MODULES = {m.name for m in pkgutil.iter_modules(__path__)}


def __getattr__(name: str) -> Any:
    """A name of the module this package grew from (research), imported on first use."""
    if name in _MODULES or name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(importlib.import_module("whileai.rules.research"), name)
    except AttributeError:
        raise AttributeError(f"module 'whileai.rules' has no attribute {name!r}") from None
