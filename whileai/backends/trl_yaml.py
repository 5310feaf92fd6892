"""A small YAML emitter for TRL configs: scalars, lists and nested mappings, block style.

TRL reads its config with `yaml.safe_load` (YAML 1.1 rules), so every scalar is written in a
form that loads back as the same Python value: floats always carry a '.' in the mantissa
(PyYAML reads `1e-06` as a string), strings are plain only when they cannot be read as
anything else and double-quoted (JSON escapes) otherwise. pyyaml is not needed to emit.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./\-]*$")
_RESERVED = {
    "true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf",
}


def scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v)
        if "e" in text or "E" in text:
            mant, _, exp = text.lower().partition("e")
            if "." not in mant:
                mant += ".0"
            sign = "-" if exp.startswith("-") else "+"
            text = f"{mant}e{sign}{exp.lstrip('+-')}"
        return text
    if isinstance(v, str):
        if _PLAIN.match(v) and v.lower() not in _RESERVED:
            return v
        return json.dumps(v)
    raise TypeError(f"cannot write {type(v).__name__} to YAML: {v!r}")


def _key(k: str) -> str:
    return k if _PLAIN.match(k) and k.lower() not in _RESERVED else json.dumps(k)


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict) and v:
                out.append(f"{pad}{_key(k)}:")
                out += _lines(v, indent + 2)
            elif isinstance(v, (list, tuple)) and any(isinstance(x, (dict, list)) for x in v):
                out.append(f"{pad}{_key(k)}:")
                out += _lines(list(v), indent + 2)
            else:
                out.append(f"{pad}{_key(k)}: {_inline(v)}")
        return out
    for item in value:  # a list holding mappings or lists
        if isinstance(item, dict) and item:
            sub = _lines(item, indent + 2)
            out.append(f"{pad}- {sub[0].lstrip()}")
            out += sub[1:]
        else:
            out.append(f"{pad}- {_inline(item)}")
    return out


def _inline(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)}: {_inline(x)}" for k, x in v.items()) + "}"
    return scalar(v)


def dumps(doc: dict[str, Any]) -> str:
    """A mapping as block YAML, in the mapping's own key order."""
    return "\n".join(_lines(doc, 0)) + "\n"
