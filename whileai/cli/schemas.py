"""JSON Schemas generated from the pydantic models: run spec files, the `--json` report,
results.json and `whileai inspect`'s JSON.

    python scripts/gen_schemas.py      # rewrite schemas/{spec,report,results,inspect}.schema.json
    whileai schema spec                # print one (the same text as the committed file)

The spec schema is shaped for TOML files (`#:schema ../schemas/spec.schema.json`, read by taplo
and editors built on it): TOML has no null, so "unset" is an absent key rather than a null
branch; each method table must name its `type`; a teacher may be the `vllm:<model>@<url>`
string; the spec's own validators appear as patterns taken from `whileai.spec.run`.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.spec import methods as _methods
from whileai.spec import run as _spec

DRAFT = "https://json-schema.org/draft/2020-12/schema"
Node = dict[str, Any]

# which -> (file name, title)
SCHEMAS: dict[str, tuple[str, str]] = {
    "spec": ("spec.schema.json", "whileai run spec"),
    "report": ("report.schema.json", "whileai --json report"),
    "results": ("results.schema.json", "whileai results.json"),
    "inspect": ("inspect.schema.json", "whileai inspect JSON"),
    "inspect-run": ("inspect-run.schema.json", "whileai inspect --run JSON"),
}
# results.json's schema belongs to whileai.results (its pydantic model and json_schema());
# imported only when asked for, and taken verbatim so there is one generator.
RESULTS_SCHEMA = ("whileai.results.model", "json_schema")

ENDPOINT_STRING = r"^vllm:[^@\s]+@\S+$"
# field-level patterns: (model, field) -> regex, from the validators in whileai.spec.run/methods
# (the code matches them in full; a JSON Schema pattern searches, so each is anchored here)
PATTERNS: dict[tuple[str, str], str] = {
    ("RunSpec", "taskset"): f"^(?:{_spec._TASKSET.pattern})$",
    ("Endpoint", "url"): f"^(?:{_methods._URL.pattern})$",
    ("Endpoint", "api_key_env"): f"^(?:{_methods._ENV_VAR.pattern})$",
    ("OPSD", "privileged"): f"^(?:{_methods._KEY.pattern})$",
    ("OPSD", "anchor"): r"^(initial|live|ema:\d*\.?\d+([eE]-?\d+)?)$",
    ("OPSD", "template"): r"(^|[^{])(\{\{)*\{demonstration\}",  # not {{demonstration}}
}


class Unavailable(RuntimeError):
    """The model behind a schema is not importable in this checkout (yet)."""


def _results_generator() -> Callable[[], Node]:
    module, attr = RESULTS_SCHEMA
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise Unavailable(f"results schema: {module}.{attr} is not importable ({e})") from None
    return fn  # type: ignore[no-any-return]


def available() -> list[str]:
    """The schemas this checkout can generate."""
    out = []
    for which in SCHEMAS:
        try:
            generate(which)
        except Unavailable:
            continue
        out.append(which)
    return out


def generate(which: str) -> Node:
    """The JSON Schema `which` (spec, report, results or inspect) as a fresh dict."""
    if which not in SCHEMAS:
        raise KeyError(f"unknown schema {which!r}: one of {', '.join(SCHEMAS)}")
    build: dict[str, Callable[[], Node]] = {"spec": spec_schema, "report": report_schema,
                                            "results": results_schema, "inspect": inspect_schema,
                                            "inspect-run": inspect_run_schema}
    body = build[which]()
    if which in ("results", "inspect", "inspect-run"):
        return body
    body.pop("title", None)
    return {"$schema": DRAFT, "title": SCHEMAS[which][1]} | body


def dumps(which: str) -> str:
    """The committed text of a schema file (what `whileai schema <which>` prints)."""
    return json.dumps(generate(which), indent=2) + "\n"


def write_all(directory: Path) -> list[Path]:
    """Write every available schema into `directory`; return the paths written."""
    written = []
    for which in available():
        path = directory / SCHEMAS[which][0]
        path.write_text(dumps(which), encoding="utf-8")
        written.append(path)
    return written


# -- spec ----------------------------------------------------------------------------------
def spec_schema() -> Node:
    return _tomlify(_spec.RunSpec.model_json_schema(by_alias=True))


def _tomlify(schema: Node) -> Node:
    defs: dict[str, Node] = schema.get("$defs", {})
    for name, node in [*defs.items(), ("RunSpec", schema)]:
        for field, pattern in PATTERNS.items():
            if field[0] == name:
                node["properties"][field[1]]["pattern"] = pattern
    for model in _spec.METHODS.values():
        node = defs[model.__name__]
        node["required"] = ["type", *[r for r in node.get("required", []) if r != "type"]]
    return _walk(schema)


def _walk(node: Any) -> Any:
    if isinstance(node, list):
        return [_walk(x) for x in node]
    if not isinstance(node, dict):
        return node
    node = {k: _walk(v) for k, v in node.items()}
    alts = node.get("anyOf")
    if isinstance(alts, list) and {"type": "null"} in alts:
        rest = [a for a in alts if a != {"type": "null"}]
        del node["anyOf"]
        if len(rest) == 1:
            node = rest[0] | node
        else:
            node["anyOf"] = rest
        if node.get("default", 0) is None:
            del node["default"]  # TOML has no null: unset is an absent key
    if node.get("source") == "":
        del node["source"]
    if node.get("$ref") == "#/$defs/Endpoint":
        ref = {"$ref": node.pop("$ref")}
        text = {"type": "string", "pattern": ENDPOINT_STRING,
                "description": "Shorthand: vllm:<model>@<url>"}
        node["anyOf"] = [text, ref]
    return node


# -- report --------------------------------------------------------------------------------
def report_schema() -> Node:
    from whileai.report.model import Report

    schema = Report.model_json_schema(by_alias=True)
    spec = spec_schema()
    defs = schema.setdefault("$defs", {})
    defs.update(spec.pop("$defs"))
    defs["RunSpec"] = spec
    schema["$defs"] = dict(sorted(defs.items()))
    return schema


# -- results -------------------------------------------------------------------------------
def results_schema() -> Node:
    """whileai.results' own schema, unchanged: `whileai schema results`, gen_schemas.py and
    `python -m whileai.results` all write the same text (a test holds them together)."""
    return copy.deepcopy(_results_generator()())


# -- inspect -------------------------------------------------------------------------------
def inspect_schema() -> Node:
    """`whileai inspect`'s JSON, from its pydantic model (whileai.tokenview.model; pydantic only)."""
    from whileai.tokenview.model import json_schema

    return json_schema()


def inspect_run_schema() -> Node:
    """`whileai inspect --run`'s JSON (whileai.tokenview.runmodel; pydantic only)."""
    from whileai.tokenview.runmodel import json_schema

    return json_schema()


# -- representative runs -------------------------------------------------------------------
_TEACHER = "vllm:PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://localhost:8001/v1"
_REMOTE = {"url": "http://teacher.internal:8001/v1", "model": "Qwen/Qwen3-8B", "api_key_env": "TEACHER_KEY"}
_CLUSTER = {"url": "http://teacher-node:8001/v1", "model": "Qwen/Qwen3-32B"}
_SLURM = {"job_name": "grpo-32b", "partition": "gpu", "account": "team", "time": "2-00:00:00",
          "nodelist": "gpu[01-04]", "exclude": "gpu09", "template_path": "my_rl.sbatch.j2",
          "project_dir": "/shared/prime-rl", "pre_run_command": "echo start",
          "cleanup_grace_period": 600, "shared_fs": True}
_MONITOR = {"project": "whileai", "entity": "team", "name": "arm", "group": "pair-1", "tags": ["a"]}


_OWN_DATA = str(Path(__file__).resolve().parents[2] / "examples" / "own-data" / "tasks.jsonl")


def sample_runs() -> dict[str, _spec.RunSpec]:
    """Runs that between them set every spec field (all methods, LoRA and full weights, W&B
    monitor, eval set, unset and off, checkpoints, tasksets beyond reverse-text with their
    arguments and roles, several nodes on SLURM, SFT, a two-stage run): the catalogue checks and
    the field-map docs
    compile these."""
    base = {"taskset": "reverse-text", "model": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"}
    opd = {"type": "opd", "teacher": _TEACHER}
    runs: dict[str, dict[str, Any]] = {
        "opd-lora": {"method": opd | {"learning_rate": 2e-4}, "monitor": _MONITOR, "gpus": 4,
                     "inspect": {"token_export": True},
                     "inference_gpus": 1, "eval": {"interval": 10, "examples": 64}},
        "opd-full": {"method": {"type": "opd", "divergence": "forward_kl", "top_k": 16, "teacher": _REMOTE},
                     "lora": False},
        "opsd-lora": {"method": {"type": "opsd"}, "monitor": {"project": "whileai"}},
        "opsd-full-live": {"method": {"type": "opsd", "anchor": "live", "divergence": "jsd"}, "lora": False},
        "opsd-initial": {"method": {"type": "opsd", "anchor": "initial", "samples": 2}},
        "grpo-lora": {"method": {"type": "grpo"}, "monitor": _MONITOR | {"tags": []}},
        "grpo-full": {"method": {"type": "grpo", "samples": 4, "temperature": 0.8}, "lora": False,
                      "seed": 7, "output_dir": "runs/grpo"},
        "grpo-own-data": {"method": {"type": "grpo", "samples": 4}, "data": _OWN_DATA,
                          "reward": "rewards.contains_answer", "ratio": 1.5},
        "grpo-nodes": {"method": {"type": "grpo"}, "model": "Qwen/Qwen3-32B", "lora": False,
                       "nodes": 4, "inference_nodes": 2, "inference_replicas": 1,
                       "nodes_per_fsdp_group": 1, "output_dir": "/shared/runs", "slurm": _SLURM},
        "opd-nodes": {"method": {"type": "opd", "teacher": _CLUSTER}, "model": "Qwen/Qwen3-8B",
                      "nodes": 2, "gpus": 16, "gpus_per_node": 8, "inference_tp": 1,
                      "output_dir": "/shared/runs", "slurm": {"partition": "gpu"}},
        # other tasksets (prime-rl reads them; TRL trains from the data file)
        "opd-gsm8k": {"taskset": "gsm8k", "model": "Qwen/Qwen3-0.6B", "method": opd,
                      "data": _OWN_DATA, "eval": {"examples": -1},
                      "checkpoint": {"interval": 20, "keep_last": 2}},
        "grpo-alphabet-sort": {"taskset": "alphabet-sort", "model": "Qwen/Qwen3-0.6B",
                               "method": {"type": "grpo"}, "data": _OWN_DATA,
                               "reward": "rewards.contains_answer",
                               "taskset_args": {"min_turns": 3, "max_turns": 5},
                               "eval": {"enabled": False}, "checkpoint": {"enabled": False}},
        "grpo-own-env": {"taskset": "my-org/my-env@0.1", "roles": ["player"], "method": {"type": "grpo"},
                         "data": _OWN_DATA, "reward": "rewards.contains_answer",
                         "taskset_args": {"level": 2},
                         "eval": {"taskset": "gsm8k", "taskset_args": {"split": "test"}}},
        "sft-lora": {"method": {"type": "sft", "teacher": _TEACHER}},
        "sft-full": {"method": {"type": "sft", "teacher": _REMOTE, "samples": 2, "temperature": 0.7,
                                "max_tokens": 1024, "learning_rate": 1e-5}, "lora": False},
        "sft-then-opd": {"method": {"type": "sft", "teacher": _TEACHER, "max_tokens": 1024},
                         "lora": False, "then": {"method": opd, "steps": 50, "prompts": 32,
                                                 "lora": True, "lora_rank": 64}},
        "sft-nodes": {"method": {"type": "sft", "teacher": _CLUSTER}, "model": "Qwen/Qwen3-8B",
                      "lora": False, "nodes": 2, "gpus_per_node": 8, "output_dir": "/shared/runs",
                      "slurm": {"partition": "gpu"}},
        # a mixture (prime-rl; TRL refuses it): every source field, a method of its own and none
        "grpo-opd-mixture": {"method": {"type": "grpo", "samples": 8}, "ratio": 2.0, "lora": False,
                             "sources": [
                                 {"taskset": "gsm8k", "taskset_args": {"split": "train"}, "ratio": 1.0,
                                  "name": "math-opd", "method": opd, "eval": True},
                                 {"taskset": "my-org/my-env@0.1", "roles": ["player"],
                                  "taskset_args": {"level": 2}, "eval": False}]},
    }
    return {name: _spec.RunSpec.model_validate(base | fields) for name, fields in runs.items()}
