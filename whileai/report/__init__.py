"""The report: what a target reads, ignores and warns about, and its renderings.

- `compiled`: `Compiled` (text, reads, ignores, fixed keys, findings, run command, cost);
- `fieldmap`: a backend's field map as data (rows of spec field -> target path), and `apply`;
- `render`: the plain, rich and JSON renderings; `model`: the report JSON's pydantic model.

May import: `whileai.rules`, the facts (`whileai.cost`, `whileai.tasksets`, `whileai.vocab`),
`whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""

import importlib
import pkgutil
from typing import Any

# this package's own modules are found by the import system, never by __getattr__ below
_MODULES = {m.name for m in pkgutil.iter_modules(__path__)}


def __getattr__(name: str) -> Any:
    """A name of the module this package grew from (compiled), imported on first use."""
    if name in _MODULES or name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(importlib.import_module("whileai.report.compiled"), name)
    except AttributeError:
        raise AttributeError(f"module 'whileai.report' has no attribute {name!r}") from None
