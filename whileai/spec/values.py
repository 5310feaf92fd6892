"""What any value in a spec or an override may be, checked on the raw data before pydantic.

Every string, key and array item passes the secret scanner (whileai.secretscan); strings hold
no NUL, lone surrogate or (outside templates and override values) control character;
integers fit TOML's signed 64-bit range; floats are finite; dates and times are refused
(no target key takes one and YAML would hand the trainer a datetime object); nesting is
bounded. A target key that names a secret (PASSWORD, HF_TOKEN, hub_token) takes the NAME of
an environment variable, never its value.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from typing import Any

from pydantic import BaseModel

from whileai import secretscan
from whileai.errors import SpecError, raw

INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # TOML integers are signed 64-bit
MAX_DEPTH = 24
MAX_STRING = 65536
# compiled on first use (re's cache): printable ASCII, most text, never needs them
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]"
_LINE_BREAK = r"[\t\n\r\u2028\u2029\x85]"
TABLES = ("overrides", "taskset_args", "eval.taskset_args")  # written verbatim into the target
SECRET_ADVICE = ("no secrets in a spec or config file: keep the value in an environment variable "
                 "and name the variable (e.g. api_key_env = \"VLLM_API_KEY\")")


def check_tree(data: Any, path: str = "", *, multiline: tuple[str, ...] = ("template",)) -> None:
    """Raise SpecError for the first value anywhere in `data` that no spec may hold."""
    _walk(data, path, 0, multiline)


def _walk(node: Any, path: str, depth: int, multiline: tuple[str, ...]) -> None:
    if depth > MAX_DEPTH:
        raise SpecError(path or "spec", raw(f"nesting deeper than {MAX_DEPTH} levels"),
                        "a flatter value")
    if isinstance(node, str):
        check_string(node, path or "spec", lines=_multiline(path, multiline))
    elif isinstance(node, dict):
        for k, v in node.items():
            if isinstance(k, str):
                check_string(k, f"{path}.<key>" if path else "<key>", lines=False)
            _walk(v, f"{path}.{k}" if path else str(k), depth + 1, multiline)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            _walk(v, f"{path}[{i}]", depth + 1, multiline)
    elif node is None and path.startswith(TABLES):
        raise SpecError(path, raw("null"), "a value: TOML has no null (leave the key out to keep the "
                        "target's default)")
    else:
        check_scalar(node, path or "spec")


def _multiline(path: str, fields: tuple[str, ...]) -> bool:
    return path.startswith(TABLES) or path.rsplit(".", 1)[-1] in fields


def check_string(text: str, field: str, *, lines: bool) -> None:
    kind = secretscan.find(text)
    if kind:
        raise SpecError(field, raw(f"a value that looks like a secret ({kind})"), SECRET_ADVICE)
    if len(text) > MAX_STRING:
        raise SpecError(field, raw(f"a text of {len(text)} characters"),
                        f"at most {MAX_STRING} characters")
    if text.isascii() and text.isprintable():  # neither pattern can match
        return
    bad = re.search(_CONTROL, text) or (None if lines else re.search(_LINE_BREAK, text))
    if bad:
        raise SpecError(field, text, "text without control characters, NUL or lone surrogates"
                        + ("" if lines else " (one line)"))


def check_scalar(value: Any, field: str) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        raise SpecError(field, raw(f"an integer of {len(str(abs(value)))} digits"),
                        "an integer within TOML's signed 64-bit range (|n| < 2**63)")
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError(field, value, "a finite number (inf and nan are not accepted)")
    if isinstance(value, (_dt.date, _dt.time)):  # datetime is a date
        raise SpecError(field, raw(f"a TOML {type(value).__name__}"),
                        "a string, number, boolean, array or table (dates and times are not "
                        "accepted: write the value as a string)")
    if not isinstance(value, (int, float, BaseModel)):  # a model instance validates itself
        raise SpecError(field, raw(f"a Python {type(value).__name__}"),
                        "a string, number, boolean, array or table")


_PORT = r"(?:^|_)port\Z"  # compiled on first use (re's cache)


def check_override(segs: tuple[str | int, ...], key: str, value: Any, *,
                   label: str = "overrides") -> None:
    """An override (or a taskset argument: `label`) whose key names a secret takes a variable
    NAME (HF_TOKEN), never a value; a port is 1-65535."""
    names = [str(s) for s in segs]
    if secretscan.sensitive(names) and isinstance(value, str) \
            and not secretscan.names_a_variable(value):
        raise SpecError(f"{label}.{key}", raw("a secret's value"),
                        "the NAME of an environment variable that holds it (e.g. MY_PASSWORD): a "
                        "secret's value never goes into a config file")
    if names and re.search(_PORT, names[-1]) and type(value) is int and not 1 <= value <= 65535:
        raise SpecError(f"{label}.{key}", value, "a port from 1 to 65535")


_RULE_ID = r"[a-z0-9]+(-[a-z0-9]+)*"


def check_accept(accept: dict[str, str]) -> dict[str, str]:
    """`accept`: each key shaped like a rule id, each reason some words (whether the id names a
    rule is checked where the rules are, whileai.rules.accept: the spec cannot import them)."""
    for rule, reason in accept.items():
        if not re.fullmatch(_RULE_ID, rule):
            raise SpecError("accept", rule, "a rule id such as 'opsd-small-model' (see `whileai rules`)")
        if not reason.strip():
            raise SpecError(f"accept.{rule}", reason, "a reason: why this warning does not apply "
                            "to this run (an empty one accepts nothing)")
        if len(reason) > 1000:
            raise SpecError(f"accept.{rule}", raw(f"a reason of {len(reason)} characters"),
                            "at most 1000 characters")
    return accept
