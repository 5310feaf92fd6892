"""The targets whileai compiles for, by name: the one place a target is listed.

    from whileai.targets import registry
    registry.names()           # ("prime-rl", "trl", "verl")
    registry.get("trl")        # the Target object (whileai.targets.base), imported on first use

Adding a target: a package `whileai/targets/<name>/` whose `target` module defines `TARGET`, and
one line in `TARGETS` below (docs/layout.md, "Adding a target"). Each entry names a module, so a
command imports only the target it uses. `register()` adds one at run time (a test's toy target).

    registry.rules()           # every warning rule: the shared ones, then each target's own
    registry.of(__name__)      # in a target's own module: its Target object

The registry imports the target packages by name only (importlib), so it stands below them: a
target's compile asks it for every rule id a spec's `accept` table may name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from whileai.errors import SpecError

if TYPE_CHECKING:
    from whileai.rules.base import Rule
    from whileai.targets.base import Target

# name -> the module whose TARGET is that target
TARGETS: dict[str, str] = {
    "prime-rl": "whileai.targets.prime_rl.target",
    "trl": "whileai.targets.trl.target",
    "verl": "whileai.targets.verl.target",
}
_LOADED: dict[str, Target] = {}


def names() -> tuple[str, ...]:
    return tuple(TARGETS) + tuple(n for n in _LOADED if n not in TARGETS)


def get(name: object, field: str = "target") -> Target:
    """The target called `name`; any other value is a SpecError naming the known ones."""
    if not isinstance(name, str) or name not in names():
        near = [n for n in names() if isinstance(name, str) and n == name.strip().lower()]
        raise SpecError(field, name, f"one of {', '.join(names())}",
                        hint=f"did you mean {near[0]!r}? target names are lower case" if near else "")
    if name not in _LOADED:
        _LOADED[name] = importlib.import_module(TARGETS[name]).TARGET
    return _LOADED[name]


def of(module: str) -> Target:
    """The target whose package holds `module` (a `__name__`): how a target's own modules (its
    compile) reach their Target object, for its name and pin, without importing target.py."""
    for name in names():
        home = TARGETS[name] if name in TARGETS else type(get(name)).__module__
        package = home.rpartition(".")[0] or home
        if module == package or module.startswith(package + "."):
            return get(name)
    raise KeyError(f"no registered target holds {module}")


def register(target: Target) -> Callable[[], None]:
    """Add (or replace) a target at run time, under its own name; returns what undoes it."""
    before = _LOADED.get(target.name)
    _LOADED[target.name] = target

    def undo() -> None:
        if before is None:
            _LOADED.pop(target.name, None)
        else:
            _LOADED[target.name] = before

    return undo


def having(option: str) -> list[str]:
    """The targets that read an option (whileai.targets.base.Options), for its error message."""
    return [n for n in names() if option in get(n).options]


def rules() -> list[Rule]:
    """Every warning rule, as `whileai rules` and docs/rules.md list them: the shared ones
    (whileai.rules.research), then each target's own (`Target.rules()`), in registry order."""
    from whileai.rules.research import RULES

    return [*RULES, *(r for n in names() for r in get(n).rules())]
