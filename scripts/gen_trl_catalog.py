"""Write the pinned catalogue of TRL's config fields: schemas/trl-<version>.catalog.json.

Usage (needs the trl extra installed at the pinned version):

    python scripts/gen_trl_catalog.py            # write schemas/trl-1.16.0.catalog.json
    python scripts/gen_trl_catalog.py --check    # exit 1 if the file on disk differs

For each config class a TRL command parses (the dataclasses behind `trl distillation`,
`trl grpo`, `trl sft` and whileai's OPSD launcher), the catalogue lists every field: its type as a
string, its default (JSON-able, else null) and its choices (Literal or Enum types). Structure
only: no help text is copied. whileai's TRL backend checks `run.overrides` and its own field
map against this file without importing trl.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import os
import sys
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the pin: whileai/targets/trl/pin.py (stdlib only, no whileai dependency)
from whileai.targets.trl.pin import VERSION as PIN  # noqa: E402

# class name -> (module, attribute); the parser each TRL command builds, in order.
CLASSES = {
    "ScriptArguments": ("trl", "ScriptArguments"),
    "GRPOScriptArguments": ("trl.scripts.grpo", "GRPOScriptArguments"),
    "ModelConfig": ("trl", "ModelConfig"),
    "DatasetMixtureConfig": ("trl", "DatasetMixtureConfig"),
    "DistillationConfig": ("trl", "DistillationConfig"),
    "GRPOConfig": ("trl", "GRPOConfig"),
    "SDFTConfig": ("trl.experimental.sdft", "SDFTConfig"),
    "SFTConfig": ("trl", "SFTConfig"),
    "GOLDConfig": ("trl.experimental.gold", "GOLDConfig"),
    "ServerDistillationConfig": ("trl.experimental.server_distillation", "ServerDistillationConfig"),
}
COMMANDS = {
    "distillation": ["ScriptArguments", "DistillationConfig", "ModelConfig", "DatasetMixtureConfig"],
    "grpo": ["GRPOScriptArguments", "GRPOConfig", "ModelConfig", "DatasetMixtureConfig"],
    "sdft": ["ScriptArguments", "SDFTConfig", "ModelConfig"],
    "sft": ["ScriptArguments", "SFTConfig", "ModelConfig", "DatasetMixtureConfig"],
    # whileai's train.py for OPD across tokenizers and for a served teacher (targets/trl/teacher.py)
    "gold": ["ScriptArguments", "GOLDConfig", "ModelConfig"],
    "server": ["ScriptArguments", "ServerDistillationConfig", "ModelConfig"],
}


def type_string(tp: Any) -> str:
    """A stable, readable rendering of a field's annotation: 'int | None', "Literal['a', 'b']"."""
    if tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_string(a) for a in typing.get_args(tp))
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(a) for a in typing.get_args(tp)) + "]"
    if origin is not None:
        args = typing.get_args(tp)
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_string(a) for a in args)}]" if args else name
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def choices(tp: Any) -> list[Any] | None:
    found: list[Any] = []
    stack = [tp]
    while stack:
        t = stack.pop()
        origin = typing.get_origin(t)
        if origin in (typing.Union, types.UnionType):
            stack.extend(typing.get_args(t))
        elif origin is typing.Literal:
            found.extend(typing.get_args(t))
        elif isinstance(t, type) and issubclass(t, enum.Enum):
            found.extend(m.value for m in t)
    return found or None


def jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


def describe(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = jsonable(f.default)
            required = False
        elif f.default_factory is not dataclasses.MISSING:
            default = jsonable(f.default_factory())
            required = False
        else:
            default, required = None, True
        tp = hints.get(f.name, f.type)
        entry: dict[str, Any] = {"type": type_string(tp), "default": default}
        meta_choices = f.metadata.get("choices") if f.metadata else None
        ch = list(meta_choices) if meta_choices else choices(tp)
        if ch:
            entry["choices"] = [jsonable(c) for c in ch]
        if required:
            entry["required"] = True
        fields[f.name] = entry
    return {"module": cls.__module__, "fields": fields}


def build() -> dict[str, Any]:
    import importlib

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import transformers
    import trl

    if trl.__version__ != PIN:
        raise SystemExit(f"trl {trl.__version__} is installed; the catalogue is pinned to {PIN}")
    classes = {}
    for name, (module, attr) in CLASSES.items():
        classes[name] = describe(getattr(importlib.import_module(module), attr))
    return {
        "target": "trl",
        "trl_version": trl.__version__,
        "transformers_version": transformers.__version__,
        "generated_by": "scripts/gen_trl_catalog.py",
        "commands": COMMANDS,
        "classes": classes,
    }


def render(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the file on disk")
    ap.add_argument("--out", default=str(ROOT / "schemas" / f"trl-{PIN}.catalog.json"))
    args = ap.parse_args(argv)
    text = render(build())
    out = Path(args.out)
    if args.check:
        if not out.exists() or out.read_text() != text:
            print(f"{out} is out of date; run python scripts/gen_trl_catalog.py", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
