"""Facts about spend: sizes from model names, GPU-hours before launch, budgets per step.

- `sizes`: parameters and bf16 bytes from a model's name, GPUs per engine;
- `estimate`: the cost line of a report (tokens, GPU-hours, with the formula);
- `budget`: rollouts and tokens per step, and matching arms on a budget.

May import: `whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""

import importlib
import pkgutil
from typing import Any

# this package's own modules are found by the import system, never by __getattr__ below
_MODULES = {m.name for m in pkgutil.iter_modules(__path__)}


def __getattr__(name: str) -> Any:
    """A name of the module this package grew from (estimate), imported on first use."""
    if name in _MODULES or name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(importlib.import_module("whileai.cost.estimate"), name)
    except AttributeError:
        raise AttributeError(f"module 'whileai.cost' has no attribute {name!r}") from None
