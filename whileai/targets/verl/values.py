"""Hydra override values read as Hydra reads them, and whether one fits a catalogue type.

    parse_value("1e-6") -> 1e-06     parse_value("True") -> True     parse_value("abc") -> "abc"
    parse_value('["console"]') -> ["console"]    parse_value("${data.x}") -> INTERPOLATION
    fits("abc", "float") -> False    fits(3, "float") -> True    fits(None, "int | None") -> True

The subset of Hydra's override grammar a run.sh uses (hydra/core/override_parser: null, true and
false in any case, ints, floats with exponents, inf and nan, quoted strings, `[a, b]` lists,
`{a: b}` maps, `${...}` interpolations); anything else is a string, as Hydra makes it.
Types are the strings scripts/gen_verl_catalog.py writes (`int | None`, `list[str]`, ...).
"""

from __future__ import annotations

import re
from typing import Any

INTERPOLATION: Any = type("Interpolation", (), {"__repr__": lambda self: "<interpolation>"})()
_SHELL = re.compile(r"\$[A-Za-z_{(]")  # a shell expansion whileai.targets.verl.runsh kept as written
_INT = re.compile(r"[+-]?(0|[1-9][0-9_]*)")
_FLOAT = re.compile(r"[+-]?((\d[\d_]*)?\.\d[\d_]*|\d[\d_]*\.?)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.I)


def parse_value(raw: str) -> Any:
    """A raw override value as Hydra types it."""
    text = raw.strip()
    if "${" in text or _SHELL.search(text):  # Hydra's interpolation; a variable the script left unset
        return INTERPOLATION
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return _unquote(text)
    low = text.lower()
    if low == "null":
        return None
    if low in ("true", "false"):
        return low == "true"
    if _INT.fullmatch(text):
        return int(text.replace("_", ""))
    if _FLOAT.fullmatch(text) and any(c.isdigit() for c in text) or low.lstrip("+-") in ("inf", "nan"):
        return float(text.replace("_", ""))
    if text.startswith("[") and text.endswith("]"):
        return [parse_value(p) for p in _split(text[1:-1])]
    if text.startswith("{") and text.endswith("}"):
        pairs = [p.partition(":") for p in _split(text[1:-1])]
        return {k.strip(): parse_value(v) for k, _, v in pairs}
    return text


def _unquote(text: str) -> str:
    """A quoted value's text as Hydra unescapes it (hydra-core 1.3's overrides_visitor.py:311-358):
    a run of backslashes before a quote or the closing quote halved, every other backslash kept."""
    return re.sub(rf"(\\+)(?={text[0]}|\Z)", lambda m: m[1][:len(m[1]) // 2], text[1:-1])


def _split(body: str) -> list[str]:
    """Comma-separated elements at the top level of a list or map body."""
    out, depth, cur, quote = [], 0, "", ""
    for c in body:
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += c
    return [p for p in (*out, cur) if p.strip()]


def _alternatives(type_: str) -> list[str]:
    """`int | None` -> ["int", "None"] (a union inside brackets kept whole)."""
    return [p.strip() for p in _top_union(type_)]


def _top_union(type_: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for c in type_:
        depth += (c == "[") - (c == "]")
        if c == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    return [*out, cur]


def fits(value: Any, type_: str, *, strict: bool = True) -> bool:
    """Whether a parsed value fits a catalogue type (`None`, `Any` and class names take anything).
    `strict=False`, for a key only its YAML default types: a list stands for a string and a
    string for a list (`data.train_files`, `trainer.logger` take one or several)."""
    if value is INTERPOLATION or value is None:
        return True  # resolved by verl; null is verl's own "unset" on most keys
    for alt in _alternatives(type_):
        base = alt.split("[", 1)[0].strip()
        if base in ("Any", "None", "Optional", "Literal") or base[:1].isupper():
            return True
        if base == "bool" and isinstance(value, bool):
            return True
        if base in ("int", "float") and isinstance(value, (int, float)) and not isinstance(value, bool):
            if base == "float" or isinstance(value, int) or float(value).is_integer():
                return True
        if base == "str" and (not isinstance(value, (list, dict)) or not strict):
            return True
        if base in ("list", "tuple", "ListConfig") and (isinstance(value, list) or not strict):
            return True
        if base in ("dict", "DictConfig") and isinstance(value, dict):
            return True
    return False


def kind(type_: str) -> str:
    """A type for a message: `int | None` -> "an integer (or null)"."""
    names = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
             "list": "a list", "tuple": "a list", "dict": "a map"}
    alts = [a.split("[", 1)[0].strip() for a in _alternatives(type_)]
    said = [names.get(a, a) for a in alts if a != "None"]
    return " or ".join(dict.fromkeys(said)) + (" (or null)" if "None" in alts else "")
