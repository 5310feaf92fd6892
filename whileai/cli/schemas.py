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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.schemadoc import Node, document, text
from whileai.spec import endpoint as _endpoint
from whileai.spec import methods as _methods
from whileai.spec import run as _spec

# which -> (file name, title)
SCHEMAS: dict[str, tuple[str, str]] = {
    "spec": ("spec.schema.json", "whileai run spec"),
    "report": ("report.schema.json", "whileai --json report"),
    "results": ("results.schema.json", "whileai results.json"),
    "inspect": ("inspect.schema.json", "whileai inspect JSON"),
    "inspect-run": ("inspect-run.schema.json", "whileai inspect --run JSON"),
}
# Every document comes from its pydantic model through whileai.schemadoc.document (the one
# generator); the spec and the report take the titles above, the others keep their model's name.
# A model outside the spec is imported only when its schema is asked for.

ENDPOINT_STRING = r"^vllm:[^@\s]+@\S+$"
# field-level patterns: (model, field) -> regex, from the validators in whileai.spec.run/methods
# (the code matches them in full; a JSON Schema pattern searches, so each is anchored here)
PATTERNS: dict[tuple[str, str], str] = {
    ("RunSpec", "taskset"): f"^(?:{_spec._TASKSET.pattern})$",
    ("Endpoint", "url"): f"^(?:{_endpoint._URL})$",
    ("Endpoint", "api_key_env"): f"^(?:{_endpoint._ENV_VAR})$",
    ("OPSD", "privileged"): f"^(?:{_methods._KEY})$",
    ("OPSD", "anchor"): r"^(initial|live|ema:\d*\.?\d+([eE]-?\d+)?)$",
    ("OPSD", "template"): r"(^|[^{])(\{\{)*\{demonstration\}",  # not {{demonstration}}
}


def generate(which: str) -> Node:
    """The JSON Schema `which` (spec, report, results or inspect) as a fresh dict."""
    if which not in SCHEMAS:
        raise KeyError(f"unknown schema {which!r}: one of {', '.join(SCHEMAS)}")
    build: dict[str, Callable[[], Node]] = {"spec": spec_schema, "report": report_schema,
                                            "results": results_schema, "inspect": inspect_schema,
                                            "inspect-run": inspect_run_schema}
    return build[which]()


def dumps(which: str) -> str:
    """The committed text of a schema file (what `whileai schema <which>` prints)."""
    return text(generate(which))


def write_all(directory: Path) -> list[Path]:
    """Write every schema into `directory`; return the paths written."""
    written = []
    for which in SCHEMAS:
        path = directory / SCHEMAS[which][0]
        path.write_text(dumps(which), encoding="utf-8")
        written.append(path)
    return written


# -- spec ----------------------------------------------------------------------------------
def spec_schema() -> Node:
    return document(_spec.RunSpec, title=SCHEMAS["spec"][1], edit=_tomlify)


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
    from whileai.report.document import Report

    return document(Report, title=SCHEMAS["report"][1], edit=_one_or_several)


def _one_or_several(schema: Node) -> Node:
    """What `whileai compile --json` prints: one spec file's report (an object), or for several
    an array of them in the order given (docs/guide.md "The --json report")."""
    schema = _with_spec(schema)
    ref = schema.pop("$ref")
    schema["oneOf"] = [{"$ref": ref, "description": "One spec file: its report."},
                       {"type": "array", "items": {"$ref": ref}, "minItems": 2,
                        "description": "Several spec files: one report each, in the order given."}]
    return schema


def _with_spec(schema: Node) -> Node:
    """The report's `spec` is the spec file's own schema (shaped for TOML), under $defs."""
    spec = _tomlify(_spec.RunSpec.model_json_schema(by_alias=True))
    defs = schema.setdefault("$defs", {})
    defs.update(spec.pop("$defs"))
    defs["RunSpec"] = spec
    schema["$defs"] = dict(sorted(defs.items()))
    return schema


# -- results -------------------------------------------------------------------------------
def results_schema() -> Node:
    """results.json's (whileai.results.document): `whileai schema results`, gen_schemas.py and
    `python -m whileai.results` all write the same text (a test holds them together)."""
    from whileai.results.document import Results

    return document(Results)


# -- inspect -------------------------------------------------------------------------------
def inspect_schema() -> Node:
    """`whileai inspect`'s JSON, from its pydantic model (whileai.tokenview.document; pydantic only)."""
    from whileai.tokenview.document import InspectReport

    return document(InspectReport)


def inspect_run_schema() -> Node:
    """`whileai inspect --run`'s JSON (whileai.tokenview.rundocument; pydantic only)."""
    from whileai.tokenview.rundocument import RunReport

    return document(RunReport)
