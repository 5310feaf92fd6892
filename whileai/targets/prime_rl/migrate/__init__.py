"""`whileai migrate`: carry a prime-rl config written for an older release to the pin (core.py).

Imported lazily: `whileai`'s CLI registers the command (cli.py) without loading tomlkit or the
catalogues."""

from __future__ import annotations

from typing import Any

__all__ = ["ENTRIES", "Change", "Migration", "detect", "entry_of", "migrate"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from whileai.targets.prime_rl.migrate import core

        return getattr(core, name)
    raise AttributeError(name)
