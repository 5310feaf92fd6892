"""Regenerate the taskset catalogue of the pinned prime-rl: schemas/prime-rl-559b447.tasksets.json.

Run with the loader's Python (prime-rl-configs at 559b447, the verifiers it pins and the example
environments prime-rl's workspace lists; see ../shared/reference/prime-rl/README.md):

    $LOADER scripts/gen_prime_rl_tasksets.py --pin-tree PIN            # write the file
    $LOADER scripts/gen_prime_rl_tasksets.py --pin-tree PIN --check    # exit 1 if it differs

PIN is the pinned prime-rl source tree (its uv.lock lists the workspace environments, its
configs/ and examples/ show how each taskset is used). For every taskset the environment can
import (verifiers' built-in tasksets and every installed package exporting a Taskset), the file
records what verifiers' own loader resolves: the providing package, the env class and its agent
roles (each role's pinned or default harness, its runtime default), the taskset's arguments
(`env.taskset.<arg>`: JSON type, default, bounds, choices, from the catalogue's
`taskset[<id>]`), the task-level knobs (`env.taskset.task.*`, judges), the split argument and
its default (train and eval sources both read the default unless the source sets it), and the
pin's own uses. Tasksets the pin's workspace lists but this environment cannot import are listed
under `not_loadable` with the reason. Harness capability flags are under `harnesses`.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))
import prime_rl_plugins  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the pin: whileai/targets/prime_rl/pin.py
from whileai.targets.prime_rl.pin import COMMIT  # noqa: E402  (stdlib only)

CATALOG = ROOT / "schemas" / f"prime-rl-{COMMIT[:7]}.catalog.json"
OUT = ROOT / "schemas" / f"prime-rl-{COMMIT[:7]}.tasksets.json"
BASE_TASKSET_FIELDS = {"id", "task", "system_prompt"}
HARNESS_FLAGS = ("SUPPORTS_MCP", "SUPPORTS_TOOL_INTERCEPTION", "SUPPORTS_RESUME", "SUPPORTS_SKILLS",
                 "EXECUTES_CODE", "NEEDS_CONTAINER", "APPENDS_SYSTEM_PROMPT")
Node = dict[str, Any]


def arg_info(node: Node, defs: dict[str, Node]) -> Node:
    """A taskset argument's JSON shape from its catalogue node: type(s), default, bounds, choices."""
    while "$ref" in node:
        node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
    out: Node = {}
    alts = [a for a in node.get("anyOf", [node]) if a.get("const") != "None"]
    types: list[str] = []
    for a in alts:
        a = defs.get(a["$ref"].rsplit("/", 1)[-1], a) if "$ref" in a else a
        t = a.get("type") or ("object" if "properties" in a else None)
        if t and t not in types:
            types.append(t)
        for k in ("enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if k in a:
                out["choices" if k in ("enum", "const") else k] = a[k] if k != "const" else [a[k]]
    out["type"] = types[0] if len(types) == 1 else types
    if "default" in node:
        out["default"] = node["default"]
    else:
        out["required"] = True
    return out


def split_info(args: dict[str, Node], cls: type) -> Node:
    """Which argument selects the split, its default, and whether a held-out value exists."""
    names = [n for n in args if "split" in n]
    dataset = next((args[n].get("default") for n in ("dataset_name", "dataset") if n in args), None)
    if dataset is None:
        try:
            src = inspect.getsource(inspect.getmodule(cls))  # type: ignore[arg-type]
        except (OSError, TypeError):
            src = ""
        m = re.search(r"load_dataset\(\s*[\"']([^\"']+)[\"']", src) or re.search(
            r"^DATASET\w*\s*=\s*[\"']([^\"']+)[\"']", src, re.M)
        dataset = m.group(1) if m else None
    if not names:
        return {"arg": None, "default": None, "dataset": dataset,
                "note": "no split argument: train and eval read the same rows"}
    arg = names[0]
    info = args[arg]
    choices = info.get("choices")
    held_out = [c for c in choices or [] if c != info.get("default")]
    return {
        "arg": arg,
        "default": info.get("default"),
        "choices": choices,
        "dataset": dataset,
        "train_reads": info.get("default"),
        "eval_reads": info.get("default"),
        "held_out": held_out if choices is not None else "any split name the dataset has "
                                                        "(a free string; not checked offline)",
    }


def pin_uses(pin_tree: Path | None) -> dict[str, list[Node]]:
    """taskset id -> how the pin's configs/ and examples/ use it (file, section, harness, args)."""
    out: dict[str, list[Node]] = {}
    if pin_tree is None:
        return out
    files = sorted([*pin_tree.glob("configs/**/*.toml"), *pin_tree.glob("examples/**/*.toml")])
    for f in files:
        doc = tomllib.loads(f.read_text())
        sections = [("train", s) for s in doc.get("orchestrator", {}).get("train", {}).get("source", [])]
        for owner in (doc.get("orchestrator", {}), doc):
            sections += [("eval", s) for s in (owner.get("eval") or {}).get("source", [])]
        for split, src in sections:
            env = src.get("env", {})
            ts = env.get("taskset", {})
            if not ts.get("id"):
                continue
            roles = {k: v.get("harness", {}).get("id") for k, v in env.items()
                     if isinstance(v, dict) and k not in ("taskset", "timeout", "retries", "interception")}
            out.setdefault(prime_rl_plugins.kebab(ts["id"]), []).append({
                "file": f.relative_to(pin_tree).as_posix(), "source": split,
                "args": {k: v for k, v in ts.items() if k != "id"}, "role_harness": roles,
            })
    return out


def build(pin_tree: Path | None) -> Node:
    from verifiers.v1.configs.agent import AgentConfig
    from verifiers.v1.taskset import Taskset
    from verifiers.v1.utils import loaders

    plugins = prime_rl_plugins.discover()
    catalog = json.loads(CATALOG.read_text())
    defs = catalog["$defs"]
    uses = pin_uses(pin_tree)
    tasksets: dict[str, Node] = {}
    for tid, cls in sorted(plugins.tasksets.items()):
        env_cls = loaders.environment_class(tid)
        env_cfg = loaders.env_config_type(tid)
        cfg = loaders.taskset_config_type(tid)
        bundled = loaders.default_harness_id(tid)
        roles = {}
        for name, field in env_cfg.model_fields.items():
            if isinstance(field.default, AgentConfig):
                pinned = field.default.harness.id if field.default.harness is not None else None
                roles[name] = {"harness": pinned or prime_rl_plugins.kebab(bundled),
                               "harness_pinned_by_env": pinned is not None,
                               "runtime": field.default.runtime.type}
        tdef = defs[f"taskset[{tid}]"]
        args = {k: arg_info(v, defs) for k, v in sorted(tdef["properties"].items())
                if k not in BASE_TASKSET_FIELDS}
        task_node = tdef["properties"].get("task", {})
        task_def = defs.get(task_node.get("$ref", "#/").rsplit("/", 1)[-1], {})
        task_default = task_node.get("default", {})
        env_def = defs[f"env[{tid}]"]
        env_args = {k: arg_info(v, defs) for k, v in sorted(env_def["properties"].items())
                    if k not in roles and k not in ("id", "taskset", "timeout", "retries",
                                                    "max_concurrent_agents", "interception")}
        dist = plugins.package.get(f"tasksets:{tid}", "verifiers")
        tasksets[tid] = {
            "package": dist,
            "package_version": md.version(dist),
            "module": cls.__module__,
            "taskset_class": cls.__name__,
            "config_class": cfg.__name__,
            "env_class": env_cls.__name__,
            "env_config_class": env_cfg.__name__,
            "roles": roles,
            "bundled_harness": prime_rl_plugins.kebab(bundled) if bundled != "bash" else None,
            "has_toolsets": cls.toolsets.__func__ is not Taskset.toolsets.__func__,
            "args": args,
            "env_args": env_args,
            "task_args": sorted(k for k in task_def.get("properties", {})),
            "default_judges": [j.get("id") for j in task_default.get("judges", [])],
            "split": split_info(args, cls),
            "pin_uses": uses.get(tid, []),
        }
    harnesses = {}
    for hid, hcls in sorted(plugins.harnesses.items()):
        harnesses[hid] = {
            "package": plugins.package.get(f"harnesses:{hid}", "verifiers"),
            "class": hcls.__name__,
            "args": sorted(k for k in defs[f"harness[{hid}]"]["properties"] if k != "id"),
            **{flag.lower(): bool(getattr(hcls, flag, False)) for flag in HARNESS_FLAGS},
        }
    workspace = prime_rl_plugins.workspace_environments(pin_tree)
    installed = {plugins.package.get(f"tasksets:{t}") for t in plugins.tasksets}
    not_loadable = {
        name: {"workspace_path": path,
               "reason": "prime-rl workspace member from deps/prime-envs (pinned b30aad3), whose "
                         "repository is not reachable here and which is not on PyPI"}
        for name, path in workspace.items()
        if name not in installed and "prime-envs" in path
    }
    for name, path in workspace.items():
        if name not in installed and name not in not_loadable:
            not_loadable[name] = {"workspace_path": path, "reason": "not installed in this environment"}
    referenced = sorted(set(uses) - set(tasksets))
    return {
        "commit": COMMIT,
        "generated_with": {d: md.version(d) for d in ("verifiers", "prime-rl-configs", "renderers")},
        "rules": {
            "resolution": "env.taskset.id names a module: verifiers.v1.tasksets.<module> first, "
                          "else an installed package <module> ('-' -> '_', owner/ and @version "
                          "dropped); it must export exactly one Taskset subclass in __all__. An "
                          "id that does not import is a ModuleNotFoundError at load time",
            "roles": "the env class (the taskset package's exported Env subclass, else the "
                     "single-agent env) declares each role as a field; any other key under env "
                     "is 'Extra inputs are not permitted'. A role table deep-merges over the "
                     "role's declared default",
            "harness": "a role's harness table is narrowed by its id (a table without id is "
                       "'bash'); no harness table = the taskset's bundled harness, else bash",
            "runtime": "each role's runtime defaults to 'prime' (a remote sandbox); "
                       "'subprocess' runs locally",
            "split": "train and eval sources each build the taskset from their own env.taskset "
                     "table, so both read the split argument's default unless the source sets it",
        },
        "introspected": sorted(tasksets),
        "tasksets": tasksets,
        "harnesses": harnesses,
        "not_loadable": not_loadable,
        "referenced_by_pin_but_not_loadable": {t: sorted({u["file"] for u in uses[t]}) for t in referenced},
        "discovery_failures": plugins.failed,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pin-tree", type=Path, help="the pinned prime-rl source tree")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file on disk differs")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    text = json.dumps(build(args.pin_tree), indent=1, sort_keys=True, default=str) + "\n"
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print(f"{args.out.name}: {'up to date' if same else 'STALE'}")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
