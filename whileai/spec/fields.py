"""Every leaf field of a spec model, dotted: what the no-silent-drop check and `whileai methods`
walk through."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def spec_fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every leaf field of a spec model, dotted, through unions (the no-silent-drop check)."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        subs = _models_of(info.annotation)
        if not subs:
            out.append(path)
        for sub in subs:
            out += [f for f in spec_fields(sub, path + ".") if f not in out]
    return out


def _models_of(annotation: Any) -> list[type[BaseModel]]:
    args = getattr(annotation, "__args__", None) or (annotation,)
    found: list[type[BaseModel]] = []
    for a in args:
        if isinstance(a, type) and issubclass(a, BaseModel):
            found.append(a)
        elif getattr(a, "__args__", None):
            found += _models_of(a)
    return found
