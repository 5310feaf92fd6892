"""One verl job's Hydra overrides: their values read as Hydra reads them, over the catalogue's
composed defaults, and a refusal of one.

    run = Job({"data.train_batch_size": "16", "+trainer.x": "1"}, "main_ppo")
    run.get("data.train_batch_size") -> 16; run.get("actor_rollout_ref.rollout.n") -> 1 (the default)
    parse_value("1e-6") -> 1e-06     parse_value("True") -> True     parse_value("abc") -> "abc"
    parse_value('["console"]') -> ["console"]    parse_value("${data.x}") -> INTERPOLATION
    fits("abc", "float") -> False    fits(3, "float") -> True    fits(None, "int | None") -> True

The keys as written (`+` kept) map to the raw values Hydra gets; whileai.targets.verl.lax reads
them through this. Values: the subset of Hydra's override grammar a run.sh uses
(hydra/core/override_parser: null, true and false in any case, ints, floats with exponents, inf and
nan, quoted strings, `[a, b]` lists, `{a: b}` maps, `${...}` interpolations); anything else is a
string, as Hydra makes it. Types are the strings scripts/gen_verl_catalog.py writes (`int | None`,
`list[str]`, ...). Pure; nothing here imports verl.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from whileai.targets.verl import catalog

INTERPOLATION: Any = type("Interpolation", (), {"__repr__": lambda self: "<interpolation>"})()
_INT = re.compile(r"[+-]?(0|[1-9][0-9_]*)")
_FLOAT = re.compile(r"[+-]?((\d[\d_]*)?\.\d[\d_]*|\d[\d_]*\.?)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.I)


def parse_value(raw: str) -> Any:
    """A raw override value as Hydra types it."""
    text = raw.strip()
    if "${" in text:
        return INTERPOLATION
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
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
    `strict=False`, for a key only its YAML default types: a list stands for a string
    (`data.train_files` takes one file or several)."""
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
        if base in ("list", "tuple", "ListConfig") and isinstance(value, list):
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


class Refusal(NamedTuple):
    """One mistake: the key as written, its raw value, why, what is allowed, what verl does."""

    key: str
    value: str
    message: str
    allowed: str
    verl: str  # what verl 0.9.1 itself does with it, one line
    rule: str = ""  # an id of RULES

    def line(self) -> str:
        return (f"{self.key}={self.value}: {self.message}; allowed: {self.allowed} "
                f"(verl 0.9.1 {self.verl}) [{self.rule}]")


class Job:
    """A job's overrides over the catalogue's composed defaults."""

    def __init__(self, overrides: Mapping[str, str], job: str,
                 launcher: tuple[int, int] | None = None) -> None:
        self.job, self.raw, self.launcher = job, dict(overrides), launcher
        self.set = {k.lstrip("+~"): (k, v) for k, v in overrides.items()}

    def get(self, key: str) -> Any:
        """The value the job composes for `key` (INTERPOLATION when it cannot be known here)."""
        if key in self.set:
            return parse_value(self.set[key][1])
        entry = catalog.lookup(key, self.job)
        return entry.default if entry else None

    def ints(self, *keys: str) -> list[int] | None:
        """The keys' integers, or None when one is not an integer here (unset, `${...}`)."""
        values = [self.get(k) for k in keys]
        return values if all(type(v) is int for v in values) else None

    def world(self, prefix: str) -> int | None:
        """GPUs of one replica: TP x DP x PP under `prefix` (a size the config lacks counts 1)."""
        sizes = [self.size(prefix + k) for k in ("tensor_model_parallel_size", "data_parallel_size",
                                                 "pipeline_model_parallel_size")]
        if any(s is None or s < 1 for s in sizes):
            return None
        return sizes[0] * sizes[1] * sizes[2]  # type: ignore[operator]

    def written(self, key: str) -> tuple[str, str]:
        """The key as written and its raw value (the default, shown, when not set)."""
        return self.set.get(key, (key, repr(self.get(key))))

    def teachers(self) -> list[str]:
        """The teacher entries verl keeps (a second one makes verl drop `teacher_model`)."""
        names = {k.split(".")[2] for k in self.set if k.startswith("distillation.teacher_models.")
                 and k.count(".") >= 3}
        extra = sorted(names - {"teacher_model"})
        return extra or ["teacher_model"]

    def size(self, key: str) -> int | None:
        """A parallel size: the job's value, 1 where the config has no such key."""
        value = self.get(key) if catalog.lookup(key, self.job) or key.lstrip("+") in self.set else 1
        return value if type(value) is int else None

    def refuse(self, key: str, message: str, allowed: str, verl: str, rule: str) -> Refusal:
        """A refusal of `key` as the job writes it (verl's default shown when it is not set)."""
        written, raw = self.written(key)
        return Refusal(written, raw, message, allowed, verl, rule)


def launcher_gpus(words: Sequence[str]) -> tuple[int, int] | None:
    """(GPUs a node, nodes) a torchrun launcher starts (`--nproc_per_node=8 --nnodes=1`), or None."""
    found: dict[str, str] = {}
    it = iter(words)
    for w in it:
        name, eq, value = w.partition("=")
        name = name.replace("-", "_").lstrip("_")
        if name in ("nproc_per_node", "nnodes"):
            found[name] = value if eq else next(it, "")
    per_node, nodes = found.get("nproc_per_node", ""), found.get("nnodes", "1")
    if not (per_node.isdigit() and nodes.isdigit()):
        return None
    return int(per_node), int(nodes)
