"""Regenerate whileai's pinned prime-rl catalogue from prime-rl's own config classes.

Run with a Python that has prime-rl-configs at 559b447, the verifiers commit it pins and the
example environments prime-rl's workspace lists (see ../shared/reference/prime-rl/README.md):

    $LOADER scripts/gen_prime_rl_catalog.py            # write schemas/prime-rl-559b447.catalog.json
    $LOADER scripts/gen_prime_rl_catalog.py --check    # exit 1 if the file on disk differs

The output is one JSON Schema (Draft 2020-12) built with pydantic's `models_json_schema` over
every entry point's config class, so all roots share one `$defs`:

- the document root is `RLConfig` (the `rl` entry point); the other entry points' roots are
  `x-prime-rl.roots` (`{"sft": "#/$defs/SFTConfig", ...}`);
- structure only: `description`, `title` and `examples` are dropped (property names kept);
- discriminated unions are `anyOf` (with pydantic's `discriminator` mapping kept); a union field
  whose default carries a `type` gets `x-prime-rl-default-type`: the loader fills that tag when
  a table omits it (pydantic-config's `_default_discriminator_types`), so such a table is
  validated against that one variant only; a union on another tag (the renderer's `name`) gets
  `x-prime-rl-tag-required`: a table without it is refused;
- plugin narrowing, which JSON Schema cannot express by itself, is written out per plugin id
  (`x-prime-rl-narrow` says how the loader picks): a source's `env` is one of `env[<taskset>]`
  (the taskset's own env config with its taskset config `taskset[<taskset>]`) or
  `env-id[<env>]` (an explicit `env.id`, any known taskset); an agent role's `harness` is one of
  `harness[<id>]` (a table without `id` is `bash`); a task's `judges` entries are one of
  `judge[<id>]`. `env[*]` is the unchecked shape for a taskset this environment cannot import;
- pydantic-config reads a value "None" as null in every config table (`x-prime-rl-none-string`
  on the table): a nullable field gets a `{"const": "None"}` branch, any other field that would
  take a string gets `"not": {"const": "None"}`;
- before-validators that accept a shorthand add that shape (`trainer.model.full_offload = true`
  is a boolean branch with `x-prime-rl-coerce`); `AliasChoices` aliases are extra properties
  with `x-prime-rl-alias-of`;
- `x-prime-rl`: commit, version, roots, the global input rules (the string "None" is null, ...)
  and the renderers package's data (`model_renderers`, `renderer_rules`); see
  gen_prime_rl_tasksets.py for the taskset catalogue.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import sys
import typing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import prime_rl_plugins  # noqa: E402
from prime_rl_loader import ENTRIES  # noqa: E402 - entry point -> (module, class)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the pin: whileai/targets/prime_rl/pin.py
from whileai.targets.prime_rl.pin import COMMIT  # noqa: E402  (stdlib only)

VERSION = "0.8.0"
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "schemas" / f"prime-rl-{COMMIT[:7]}.catalog.json"
PROSE = {"description", "title", "examples"}
PROBES: list[Any] = [True, False, 0, 1, "", "x", [], {}]
Node = dict[str, Any]


def strip(node: Any, key: str = "") -> Any:
    if isinstance(node, dict):
        return {k: strip(v, k) for k, v in node.items() if key in ("properties", "$defs") or k not in PROSE}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def one_of_to_any_of(node: Any) -> Any:
    if isinstance(node, dict):
        return {("anyOf" if k == "oneOf" else k): one_of_to_any_of(v) for k, v in node.items()}
    if isinstance(node, list):
        return [one_of_to_any_of(v) for v in node]
    return node


def ref(name: str) -> Node:
    return {"$ref": f"#/$defs/{name}"}


def all_models(roots: list[type]) -> list[type]:
    """Every pydantic model class reachable from the roots' field annotations."""
    from pydantic import BaseModel

    seen: dict[type, None] = {}

    def visit(tp: Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp in seen:
                return
            seen[tp] = None
            for f in tp.model_fields.values():
                visit(f.annotation)
            return
        for arg in typing.get_args(tp):
            visit(arg)

    for r in roots:
        visit(r)
    return list(seen)


class Builder:
    def __init__(self, pin_tree: Path | None) -> None:
        self.pin_tree = pin_tree
        self.plugins = prime_rl_plugins.discover()
        self.roots = {e: getattr(importlib.import_module(m), c) for e, (m, c) in ENTRIES.items()}

    # -- classes ---------------------------------------------------------------------------
    def plugin_classes(self) -> dict[str, dict[str, tuple[type, ...]]]:
        from verifiers.v1.utils import loaders

        ts = {tid: (loaders.env_config_type(tid), loaders.taskset_config_type(tid))
              for tid in self.plugins.tasksets}
        envs = {eid: (loaders.env_config_type("", eid),) for eid in self.plugins.envs}
        harness = {hid: (loaders.harness_config_type(hid),) for hid in self.plugins.harnesses}
        judges = {jid: (loaders.judge_config_type(jid),) for jid in self.plugins.judges}
        return {"taskset": ts, "env": envs, "harness": harness, "judge": judges}

    def build(self) -> Node:
        from pydantic.json_schema import models_json_schema
        from verifiers.v1.configs.agent import AgentConfig
        from verifiers.v1.configs.env import EnvConfig
        from verifiers.v1.configs.task import TaskConfig
        from verifiers.v1.configs.taskset import TasksetConfig

        classes = self.plugin_classes()
        extra: list[type] = [EnvConfig, TasksetConfig, AgentConfig, TaskConfig]
        for group in classes.values():
            for tup in group.values():
                extra += list(tup)
        models = all_models([*self.roots.values(), *extra])
        keys = [(m, "validation") for m in models]
        key_map, schema = models_json_schema(keys, ref_template="#/$defs/{model}")
        defs: dict[str, Node] = schema["$defs"]
        name = {m: key_map[(m, "validation")]["$ref"].rsplit("/", 1)[-1] for m in models}

        self.add_shorthands(models, name, defs)
        self.add_none_strings(models, name, defs)
        self.add_default_types(models, name, defs)
        self.narrow(classes, models, name, defs)

        root_name = name[self.roots["rl"]]
        rl = copy.deepcopy(defs[root_name])
        out: Node = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **rl,
            "$defs": defs,
            "x-prime-rl": {
                "commit": COMMIT,
                "version": VERSION,
                "roots": {e: f"#/$defs/{name[c]}" for e, c in self.roots.items()},
                "input_rules": input_rules(),
                **renderer_data(self.pin_tree),
                "workspace_environments": prime_rl_plugins.workspace_environments(self.pin_tree),
                **parser_data(),
            },
        }
        return one_of_to_any_of(strip(out))

    # -- before-validators and aliases -----------------------------------------------------
    def add_shorthands(self, models: list[type], name: dict[type, str], defs: dict[str, Node]) -> None:
        from pydantic import AliasChoices, BeforeValidator, TypeAdapter

        for m in models:
            props = defs[name[m]].get("properties", {})
            for fname, f in m.model_fields.items():
                if fname not in props:
                    continue
                for meta in f.metadata:
                    if not isinstance(meta, BeforeValidator):
                        continue
                    coerce = {}
                    for probe in PROBES:
                        try:
                            out = meta.func(probe)
                            if out is probe:
                                continue
                            TypeAdapter(f.annotation).validate_python(out)
                        except Exception:  # noqa: BLE001 - a probe the validator refuses
                            continue
                        coerce[json.dumps(probe)] = out
                    if coerce:
                        types = sorted({_json_type(json.loads(k)) for k in coerce})
                        node = props[fname]
                        alts = node.pop("anyOf", None) or [{k: node.pop(k) for k in list(node)
                                                            if k not in ("default",)}]
                        for t in types:
                            alts.append({"type": t, "x-prime-rl-coerce": coerce})
                        node["anyOf"] = alts
                alias = f.validation_alias
                if isinstance(alias, AliasChoices):
                    for choice in alias.choices[1:]:
                        if isinstance(choice, str) and choice not in props:
                            props[choice] = {**copy.deepcopy(props[fname]), "x-prime-rl-alias-of": fname}

    def add_none_strings(self, models: list[type], name: dict[type, str], defs: dict[str, Node]) -> None:
        """pydantic-config's BaseConfig reads a field value "None" as null before validation."""
        from pydantic_config import BaseConfig

        for m in models:
            if not issubclass(m, BaseConfig):
                continue
            defs[name[m]]["x-prime-rl-none-string"] = True
            for node in defs[name[m]].get("properties", {}).values():
                if _accepts_null(node):
                    node.setdefault("anyOf", []).append(NONE_STRING)
                elif _accepts_string(node, defs):
                    node["not"] = {"const": "None"}  # read as null, which this field refuses

    def add_default_types(self, models: list[type], name: dict[type, str], defs: dict[str, Node]) -> None:
        from pydantic import BaseModel
        from pydantic_config import BaseConfig

        for m in models:
            props = defs[name[m]].get("properties", {})
            for fname, f in m.model_fields.items():
                d = f.default
                if fname not in props:
                    continue
                injects = issubclass(m, BaseConfig)  # pydantic-config's BaseConfig fills `type`
                if injects and isinstance(d, BaseModel) and isinstance(getattr(d, "type", None), str):
                    if typing.get_args(f.annotation):
                        props[fname]["x-prime-rl-default-type"] = d.type
                elif isinstance(f.discriminator, str):
                    # only `type` tags are filled from the default: a table must name this tag
                    props[fname]["x-prime-rl-tag-required"] = f.discriminator

    # -- plugin narrowing ------------------------------------------------------------------
    def narrow(self, classes: dict[str, Any], models: list[type], name: dict[type, str],
               defs: dict[str, Node]) -> None:
        from verifiers.v1.configs.agent import AgentConfig
        from verifiers.v1.configs.env import EnvConfig
        from verifiers.v1.configs.task import TaskConfig
        def tagged(cls: type, tag: str, pid: str, optional_id: bool = False) -> str:
            node = copy.deepcopy(defs[name[cls]])
            node["properties"]["id"] = {"const": pid, "default": pid} if optional_id else {"const": pid}
            if not optional_id:
                node["required"] = sorted({*node.get("required", []), "id"})
            key = f"{tag}[{pid}]"
            defs[key] = node
            return key

        harness_keys = {h: tagged(c[0], "harness", h, optional_id=(h == "bash"))
                        for h, c in classes["harness"].items()}
        judge_keys = {j: tagged(c[0], "judge", j) for j, c in classes["judge"].items()}
        taskset_keys = {t: tagged(c[1], "taskset", t) for t, c in classes["taskset"].items()}

        harness_node = {
            "anyOf": [ref(k) for k in harness_keys.values()] + [{"type": "null"}, NONE_STRING],
            "default": None,
            "x-prime-rl-narrow": {"by": "id", "default": "bash", "map": harness_keys,
                                  "unknown": "ModuleNotFoundError: harness not installed",
                                  "null": "the taskset's default harness (its bundled one, else bash)"},
        }
        judge_items = {
            "anyOf": [ref(k) for k in judge_keys.values()],
            "x-prime-rl-narrow": {"by": "id", "map": judge_keys, "required": True,
                                  "unknown": "ModuleNotFoundError: judge not installed"},
        }
        for m in models:
            props = defs[name[m]].get("properties", {})
            if issubclass(m, AgentConfig) and "harness" in props:
                props["harness"] = copy.deepcopy(harness_node)
            if issubclass(m, TaskConfig) and "judges" in props:
                props["judges"]["items"] = copy.deepcopy(judge_items)
        env_keys: dict[str, str] = {}
        for tid, (env_cls, _) in classes["taskset"].items():
            node = copy.deepcopy(defs[name[env_cls]])
            node["properties"]["taskset"] = ref(taskset_keys[tid])
            node["properties"]["id"] = {"const": "", "default": ""}
            node["required"] = sorted({*node.get("required", []), "taskset"})
            env_keys[tid] = f"env[{tid}]"
            defs[env_keys[tid]] = node
        any_taskset = {
            "anyOf": [ref(k) for k in taskset_keys.values()],
            "x-prime-rl-narrow": {"by": "id", "map": taskset_keys,
                                  "unknown": "ModuleNotFoundError: taskset not installed"},
        }
        env_id_keys: dict[str, str] = {}
        for eid, (env_cls,) in classes["env"].items():
            node = copy.deepcopy(defs[name[env_cls]])
            node["properties"]["id"] = {"const": eid}
            node["properties"]["taskset"] = copy.deepcopy(any_taskset)
            node["required"] = sorted({*node.get("required", []), "id", "taskset"})
            env_id_keys[eid] = f"env-id[{eid}]"
            defs[env_id_keys[eid]] = node
        unchecked = copy.deepcopy(defs[name[EnvConfig]])
        unchecked["additionalProperties"] = True
        # an uninstalled taskset: its arguments and task knobs are unknown, so only its id is typed
        unchecked["properties"]["taskset"] = {"type": "object", "additionalProperties": True,
                                              "properties": {"id": {"type": "string"}}, "required": ["id"]}
        defs["env[*]"] = unchecked
        env_node = {
            "anyOf": [ref(k) for k in env_keys.values()] + [ref(k) for k in env_id_keys.values()],
            "x-prime-rl-narrow": {
                "by": ["id", "taskset.id"],
                "rule": "a non-empty env.id picks env-id[<id>] (its roles, any taskset); else "
                        "taskset.id picks env[<taskset>] (the taskset's own env: its exported Env "
                        "subclass, else the single-agent env with role 'agent'); no taskset.id and "
                        "no id: 'no env configured'",
                "taskset": env_keys,
                "env_id": env_id_keys,
                "unknown": "env[*]",
                "id_normalization": "drop an 'owner/' prefix and an '@version' suffix, '-' -> '_', "
                                    "lowercase; verifiers.v1.<group>.<module> is tried before <module>",
            },
        }
        for m in models:
            if "env" not in m.model_fields:
                continue
            ann = m.model_fields["env"].annotation
            if isinstance(ann, type) and issubclass(ann, EnvConfig):
                props = defs[name[m]]["properties"]
                props["env"] = {**copy.deepcopy(env_node), "default": props["env"].get("default")}


NONE_STRING: Node = {"const": "None", "x-prime-rl-coerce": {'"None"': None}}


def _accepts_null(node: Node) -> bool:
    t = node.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(alt.get("type") == "null" for alt in node.get("anyOf", []) + node.get("oneOf", []))


def _accepts_string(node: Node, defs: dict[str, Node]) -> bool:
    if "$ref" in node:
        return _accepts_string(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    t = node.get("type")
    if t == "string" or (isinstance(t, list) and "string" in t):
        return not ("enum" in node or "const" in node) or "None" in node.get("enum", [node.get("const")])
    return any(_accepts_string(alt, defs) for alt in node.get("anyOf", []) + node.get("oneOf", []))


def _json_type(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), "null")


def input_rules() -> Node:
    """How the loader reads input beyond the schema (pydantic-config / prime-rl BaseConfig)."""
    return {
        "none_string": "in any config table, a value equal to the string 'None' is read as null "
                       "(TOML has no null)",
        "dict_string_values": "dict-typed fields whose values are strings are coerced to "
                              "int/float/bool where they parse (CLI values), except dict[str, str]",
        "default_discriminator": "a union table without 'type' gets the field default's type "
                                 "(x-prime-rl-default-type)",
        "files": "several '@ file' arguments deep-merge left to right; lists are replaced",
        "vllm_extra": "inference.vllm accepts any extra key (vLLM argument); kebab-case extra "
                      "keys become snake_case and string values are JSON-parsed",
        "unknown_keys": "every other table forbids unknown keys (extra='forbid')",
    }


def renderer_data(pin_tree: Path | None) -> Node:
    """The renderers package's own data: the model map, the renderer names and what they key on."""
    import importlib.metadata

    import renderers.base as rb

    def plain(v: Any) -> Any:
        return sorted(v) if isinstance(v, (set, frozenset)) else v

    return {
        "renderers_version": importlib.metadata.version("renderers"),
        "model_renderers": dict(sorted(rb.MODEL_RENDERER_MAP.items())),
        "renderer_data": {
            "renderer_names": _renderer_names(),
            "multimodal_models": {k: plain(v) for k, v in sorted(rb.MULTIMODAL_MODELS.items())},
            "trusted_revisions": dict(sorted(rb.TRUSTED_REVISIONS.items())),
            "tokenizer_source_overrides": dict(sorted(rb.TOKENIZER_SOURCE_OVERRIDES.items())),
            "rules": {
                "auto": "renderer name 'auto' resolves the tokenizer name (tokenizer.name, else the "
                        "model name) by exact key in model_renderers; no prefix or pattern matching",
                "auto_miss_at_load": "prime-rl rejects 'auto' at load time when that name is not a "
                                     "key (orchestrator: validate_renderer_auto_resolves; sft: "
                                     "validate_typed_renderer, which also rejects 'default')",
                "auto_miss_at_run": "the renderers package itself would fall back to 'default' "
                                    "(the tokenizer's chat template) for a text model, and refuse a "
                                    "multimodal one",
                "opsd_algo_renderer": "orchestrator.algo.renderer (opsd) is not checked at load",
            },
            "pin_examples": pin_renderer_examples(pin_tree),
        },
    }


def _renderer_names() -> list[str]:
    import renderers

    names = []
    union = typing.get_args(renderers.RendererConfig)[0]
    for arm in typing.get_args(union):
        field = getattr(arm, "model_fields", {}).get("name")
        if field is not None and isinstance(field.default, str):
            names.append(field.default)
    return sorted(names)


def pin_renderer_examples(pin_tree: Path | None) -> list[Node]:
    """Explicit renderer choices in the pin's own configs/ and examples/ (model -> renderer)."""
    import tomllib

    if pin_tree is None:
        return []
    out = []
    for f in sorted([*pin_tree.glob("configs/**/*.toml"), *pin_tree.glob("examples/**/*.toml")]):
        doc = tomllib.loads(f.read_text())
        for renderer in (doc.get("orchestrator", {}).get("renderer"), doc.get("renderer")):
            if isinstance(renderer, dict):
                model = (doc.get("model") or {}).get("name") or doc.get("orchestrator", {}).get(
                    "model", {}).get("name")
                out.append({"file": f.relative_to(pin_tree).as_posix(), "model": model,
                            "renderer": renderer})
    return out


def parser_data() -> Node:
    """prime-rl's own model -> vLLM parser patterns (prime_rl.utils.parsers)."""
    from prime_rl.utils import parsers

    def pats(items: list[Any]) -> list[list[str]]:
        return [[p.pattern, n] for p, n in items]

    return {"tool_call_parsers": pats(parsers.TOOL_CALL_PARSER_PATTERNS),
            "reasoning_parsers": pats(parsers.REASONING_PARSER_PATTERNS)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file on disk differs")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--pin-tree", type=Path, help="the pinned prime-rl source tree (its configs/, "
                    "examples/ and uv.lock feed the renderer examples and the workspace list)")
    args = ap.parse_args()
    text = json.dumps(Builder(args.pin_tree).build(), indent=1, sort_keys=True, default=str) + "\n"
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print(f"{args.out.name}: {'up to date' if same else 'STALE'}")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
