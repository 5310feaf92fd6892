"""An import-only `flash_attn` for a CPU: ring-flash-attn and transformers import it at module
load; nothing a rehearsal runs calls it. `whileai rehearse --setup` writes this file as
`flash_attn/__init__.py` (and `flash_attn/flash_attn_interface.py`, `flash_attn/bert_padding.py`)
with a dist-info beside it, since transformers reads the package's version from its metadata.
Any call raises, naming why."""

from __future__ import annotations

from typing import Any

__version__ = "2.8.3"
WHY = (
    "flash_attn here is whileai rehearse's import-only stand-in (a CPU rehearsal runs no "
    "attention kernel); install the real flash-attn on a GPU machine"
)


def _refuse(name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name}: {WHY}")

    call.__name__ = name
    return call


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return _refuse(name)
