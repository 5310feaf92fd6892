"""Catalogue the config classes of one prime-rl release: every dotted key per entry point.

Runs with a Python that can import that release's `prime_rl.configs` (the loader's Python of
/work/loader, see docs/migrate.md, with the tag's config sources put first on the path):

    $LOADER scripts/gen_prime_rl_history.py --tree TAG_TREE --tag v0.7.0   # write schemas/...
    $LOADER scripts/gen_prime_rl_history.py --tree TAG_TREE --tag v0.7.0 --check

TAG_TREE is `git archive <tag>` of prime-rl. Before importing, the tag's config package is put
first on sys.path (`packages/prime-rl-configs/src` from v0.6.0 on, `src` at v0.5.0), so the
classes are the release's own. The output, schemas/prime-rl-<tag>.keys.json, is flat: per
entry point, `{dotted.path: {"kind": ..., "default": ...}}` where a list of tables is written
`path[]`, a union of tables contributes the keys of every member (with `variants`: the tag
values that select it), and a `dict[str, Model]` is written `path.*`. Only what a migration
needs: which keys a release knows, their JSON kind and default. whileai's own Python turns
consecutive catalogues into the rename chain (scripts/gen_prime_rl_renames.py).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = {
    "rl": ("prime_rl.configs.rl", "RLConfig"),
    "sft": ("prime_rl.configs.sft", "SFTConfig"),
    "inference": ("prime_rl.configs.inference", "InferenceConfig"),
    "orchestrator": ("prime_rl.configs.orchestrator", "OrchestratorConfig"),
    "trainer": ("prime_rl.configs.trainer", "TrainerConfig"),
}
# before v0.5.0 the classes lived beside each component (src/prime_rl/<component>/config.py)
OLD_ENTRIES = {
    "rl": ("prime_rl.rl", "RLConfig"),
    "sft": ("prime_rl.trainer.sft.config", "SFTTrainerConfig"),
    "inference": ("prime_rl.inference.config", "InferenceConfig"),
    "orchestrator": ("prime_rl.orchestrator.config", "OrchestratorConfig"),
    "trainer": ("prime_rl.trainer.rl.config", "RLTrainerConfig"),
}
MAX_DEPTH = 12


def _src(tree: Path) -> Path:
    slim = tree / "packages" / "prime-rl-configs" / "src"
    return slim if slim.is_dir() else tree / "src"


def _jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return None  # a table default: its keys are listed one by one
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        items = [_jsonable(v) for v in value]
        return items if all(i is not None or v is None for i, v in zip(items, value, strict=True)) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return getattr(value, "value", None) if hasattr(value, "value") else None


def _models(tp: Any) -> list[tuple[str, type]]:
    """(suffix, model) for each table type inside an annotation: '' for a table, '[]' for a
    list of tables, '.*' for a dict of tables."""
    from pydantic import BaseModel

    origin = typing.get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [("", tp)]
    if origin in (list, tuple, set):
        return [("[]" + s, m) for a in typing.get_args(tp) for s, m in _models(a)]
    if origin is dict:
        args = typing.get_args(tp)
        return [(".*" + s, m) for s, m in _models(args[1])] if len(args) == 2 else []
    if origin is typing.Annotated:
        return _models(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [x for a in typing.get_args(tp) for x in _models(a)]
    return []


def _kind(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _kind(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        kinds = sorted({_kind(a) for a in typing.get_args(tp) if a is not type(None)})
        return "|".join(kinds) or "null"
    if origin is typing.Literal:
        return "enum"
    if origin in (list, tuple, set):
        return "list"
    if origin is dict:
        return "dict"
    if isinstance(tp, type):
        from pydantic import BaseModel

        if issubclass(tp, BaseModel):
            return "table"
        if issubclass(tp, bool):
            return "bool"
        if issubclass(tp, int):
            return "int"
        if issubclass(tp, float):
            return "float"
        if issubclass(tp, (str, Path)):
            return "str"
    return "any"


def _tag(model: type) -> str | None:
    field = model.model_fields.get("type") or model.model_fields.get("name")
    if field is not None and typing.get_origin(field.annotation) is typing.Literal:
        return str(typing.get_args(field.annotation)[0])
    return None


def _aliases(field: Any, name: str) -> list[str]:
    """The other names a field accepts (`validation_alias=AliasChoices("group_size",
    "rollouts_per_example")`, or a plain `validation_alias`/`alias`)."""
    from pydantic import AliasChoices

    alias = field.validation_alias or field.alias
    choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if alias else []
    return [c for c in choices if isinstance(c, str) and c != name]


def _where(model: type, name: str, src: Path | None) -> str | None:
    """'orchestrator.py:602': the line of the release's source that declares the field."""
    owner = next((k for k in model.__mro__ if name in getattr(k, "__annotations__", {})), None)
    if owner is None or src is None:
        return None
    try:
        lines, start = inspect.getsourcelines(owner)
        file = Path(inspect.getsourcefile(owner) or "").resolve().relative_to(src.resolve())
    except (OSError, TypeError, ValueError):
        return None
    hit = next((i for i, line in enumerate(lines) if re.match(rf"\s+{name}\s*:", line)), None)
    return None if hit is None else f"{file.as_posix()}:{start + hit}"


def walk(model: type, prefix: str, out: dict[str, dict[str, Any]], depth: int = 0,
         src: Path | None = None) -> None:
    from pydantic_core import PydanticUndefined

    if depth > MAX_DEPTH:
        return
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        entry = out.setdefault(path, {"kind": _kind(field.annotation)})
        if "at" not in entry and (at := _where(model, name, src)) is not None:
            entry["at"] = at
        for alias in _aliases(field, name):
            out.setdefault(f"{prefix}{alias}", {"kind": entry["kind"], "alias_of": path})
        default = field.default
        if field.default_factory is not None:
            try:
                default = field.default_factory()  # type: ignore[call-arg]
            except TypeError:
                default = PydanticUndefined
        if default is not PydanticUndefined and "default" not in entry:
            value = _jsonable(default)
            if value is not None or default is None:
                entry["default"] = value
        tables = _models(field.annotation)
        for suffix, sub in tables:
            tag = _tag(sub) if len(tables) > 1 else None
            if tag is not None:
                entry.setdefault("variants", [])
                if tag not in entry["variants"]:
                    entry["variants"].append(tag)
            walk(sub, f"{path}{suffix}.", out, depth + 1, src)


class _Stubs:
    """Heavy modules (and every submodule of them) a config module imports but never uses to
    build its classes, answered with mocks (`from torch.distributed.x import y` included)."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        import importlib.machinery

        if any(name == r or name.startswith(r + ".") for r in self.roots):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> Any:
        from unittest import mock

        module = mock.MagicMock(name=spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: Any) -> None:
        return None


def catalogue(tree: Path, tag: str, verifiers: Path | None = None, stubs: list[str] | None = None,
              ) -> dict[str, Any]:
    sys.path[:0] = [str(_src(tree))] + ([str(verifiers)] if verifiers else [])
    if stubs:
        sys.meta_path.insert(0, _Stubs(stubs))
    for mod in [m for m in sys.modules if m == "prime_rl" or m.startswith("prime_rl.")]:
        del sys.modules[mod]
    entries: dict[str, Any] = {}
    layout = ENTRIES if (_src(tree) / "prime_rl" / "configs").is_dir() else OLD_ENTRIES
    for entry, (module, cls) in layout.items():
        try:
            root = getattr(importlib.import_module(module), cls)
        except (ImportError, AttributeError):
            continue
        keys: dict[str, dict[str, Any]] = {}
        walk(root, "", keys, src=_src(tree))
        entries[entry] = dict(sorted(keys.items()))
    return {"release": tag, "config_package": _src(tree).relative_to(tree).as_posix(),
            "entries": entries}


def write_or_check(out: Path, text: str, check: bool) -> int:
    """Write a generated file under the repository; with `check`, write nothing and return 1 where
    the file on disk differs (gen_prime_rl_renames.py writes its file through this too)."""
    if check:
        same = out.exists() and out.read_text() == text
        print(f"{out.name}: {'up to date' if same else 'STALE'}")
        return 0 if same else 1
    out.write_text(text)
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="`git archive TAG` of prime-rl")
    ap.add_argument("--tag", required=True, help="the release, e.g. v0.7.0")
    ap.add_argument("--verifiers", type=Path, help="a verifiers source tree (its parent of "
                    "`verifiers/`) at the commit the tag pins as deps/verifiers, put first on the path")
    ap.add_argument("--stub", default="", help="comma-separated modules to stub, with "
                    "their submodules (v0.3.0-v0.5.0: torch,wandb, imported by prime_rl.utils.utils)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file on disk differs")
    args = ap.parse_args()
    out = ROOT / "schemas" / f"prime-rl-{args.tag}.keys.json"
    text = json.dumps(catalogue(args.tree, args.tag, args.verifiers,
                                [m for m in args.stub.split(",") if m]), indent=1, sort_keys=False) + "\n"
    return write_or_check(out, text, args.check)


if __name__ == "__main__":
    sys.exit(main())
