"""The JSON Schemas: current, valid Draft 2020-12, accepting what whileai reads and writes and
flagging what an editor should flag; and every field map naming only paths its catalogue has."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.cli.schemas import SCHEMAS, dumps, generate
from whileai.errors import SpecError
from whileai.report.document import Report
from whileai.spec.load import build, load_spec, loads_toml
from whileai.spec.run import RunSpec
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.toml"))


def _fixture() -> Any:
    spec = importlib.util.spec_from_file_location("sample_runs", ROOT / "scripts" / "sample_runs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_runs() -> dict[str, RunSpec]:
    """The runs that set every spec field: the repository's fixture data (scripts/sample_runs.py)."""
    return _fixture().sample_runs()  # type: ignore[no-any-return]


def for_backend(run: RunSpec, backend: str) -> RunSpec | None:
    """A sample run as `backend` takes it (scripts/sample_runs.py: prime-rl refuses data, reward)."""
    return _fixture().for_backend(run, backend)  # type: ignore[no-any-return]


def schema(which: str) -> dict[str, Any]:
    return generate(which)


def validator(which: str) -> Draft202012Validator:
    return Draft202012Validator(schema(which))


def errors(which: str, doc: Any) -> list[str]:
    return [e.message for e in validator(which).iter_errors(doc)]


def trl_backend() -> Any:
    try:
        return importlib.import_module("whileai.targets.trl.compile")
    except ModuleNotFoundError as e:
        if e.name == "whileai.targets.trl.compile":
            return None
        raise


def backends() -> list[str]:
    return ["prime-rl"] + (["trl"] if trl_backend() else [])


@pytest.mark.parametrize("which", list(SCHEMAS))
def test_committed_schema_is_current(which: str) -> None:
    schema(which)
    path = ROOT / "schemas" / SCHEMAS[which][0]
    assert path.exists(), f"{path} missing: run python scripts/gen_schemas.py"
    assert path.read_text(encoding="utf-8") == dumps(which), \
        f"{path} is stale: run python scripts/gen_schemas.py"


@pytest.mark.parametrize("which", list(SCHEMAS))
def test_schema_is_valid_draft_2020_12(which: str) -> None:
    Draft202012Validator.check_schema(schema(which))


@pytest.mark.parametrize("which", list(SCHEMAS))
def test_cli_prints_the_committed_schema(which: str) -> None:
    schema(which)
    result = CliRunner().invoke(app, ["schema", which])
    assert result.exit_code == 0, result.output
    assert result.output == dumps(which)


def test_results_schema_has_one_text() -> None:
    """`python -m whileai.results` writes the same text as gen_schemas.py (one generator)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "whileai.results"], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out == dumps("results")


def test_spec_patterns_never_reject_what_whileai_accepts() -> None:
    from whileai.cli.schemas import PATTERNS

    accepted = {"taskset": ["reverse-text", "owner/name@v1.2", "a.b_c"],
                "url": ["http://localhost:8001/v1", "https://h.example.com/", "http://10.0.0.1:80"],
                "api_key_env": ["VLLM_API_KEY", "_K1"], "privileged": ["answer", "info.answer"],
                "anchor": ["ema:0.01", "ema:.5", "ema:1e-3", "ema:1", "initial", "live"],
                "template": ["hint: {demonstration}"]}
    for (_, field), pattern in PATTERNS.items():
        for value in accepted[field]:
            assert re.search(pattern, value), f"{field}: pattern {pattern} rejects {value!r}"
    assert not re.search(PATTERNS[("OPSD", "anchor")], "ema")


def test_cli_rejects_an_unknown_schema() -> None:
    assert CliRunner().invoke(app, ["schema", "nope"]).exit_code == 2


def test_examples_exist_and_point_at_the_spec_schema() -> None:
    assert len(EXAMPLES) >= 3
    for path in EXAMPLES:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        m = re.fullmatch(r"#:schema (\S+)", first)
        assert m, f"{path}: first line should be '#:schema <path to spec.schema.json>'"
        assert (path.parent / m.group(1)).resolve() == ROOT / "schemas" / "spec.schema.json"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_spec_validates(path: Path) -> None:
    doc = loads_toml(path.read_text(encoding="utf-8"))
    assert errors("spec", doc) == []
    load_spec(path)  # and pydantic agrees


def test_sample_runs_validate_as_toml_specs() -> None:
    for name, run in sample_runs().items():
        doc = run.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert errors("spec", doc) == [], name


BAD_SPECS: dict[str, dict[str, Any]] = {
    "unknown top-level key": {"stepz": 3},
    "unknown method key": {"method": {"type": "grpo", "topk": 3}},
    "unknown teacher key": {"method": {"type": "opd", "teacher": {"url": "http://h:1/v1", "model": "m",
                                                                  "x": 1}}},
    "unknown eval key": {"eval": {"every": 5}},
    "wrong method type": {"method": {"type": "ppo"}},
    "method without type": {"method": {"samples": 4}},
    "teacher shorthand malformed": {"method": {"type": "opd", "teacher": "http://localhost:8001/v1"}},
    "bad taskset id": {"taskset": "Reverse Text"},
    "bound violated": {"method": {"type": "grpo", "samples": 1}},
    "wrong type": {"steps": "many"},
    "template without placeholder": {"method": {"type": "opsd", "template": "hint"}},
    "anchor malformed": {"method": {"type": "opsd", "anchor": "ema"}},
}


@pytest.mark.parametrize("case", list(BAD_SPECS))
def test_spec_schema_flags_what_an_editor_should(case: str) -> None:
    doc = {"taskset": "reverse-text", "model": "m", "method": {"type": "grpo"}} | BAD_SPECS[case]
    assert errors("spec", doc), f"{case}: the schema accepted {doc}"
    with pytest.raises(SpecError):  # and whileai itself rejects it too
        build(RunSpec, doc)


def test_spec_schema_has_no_null() -> None:
    """TOML cannot write null: unset is an absent key, so the schema offers no null branch."""
    assert "null" not in json.dumps(generate("spec"))
    assert errors("spec", {"taskset": "reverse-text", "model": "m", "method": {"type": "grpo"},
                           "monitor": None})


def test_every_spec_table_rejects_unknown_keys() -> None:
    """extra="forbid" on every model → additionalProperties false on every table but overrides."""
    spec = generate("spec")
    tables = [spec, *spec["$defs"].values()]
    assert len(tables) == 13  # RunSpec, Stage, Source, OPD, OPSD, GRPO, SFT, Endpoint, Eval,
    # Checkpoint, Monitor, Inspect, Slurm
    for node in tables:
        assert node["additionalProperties"] is False, node.get("title", node.get("description"))
    assert spec["properties"]["overrides"]["additionalProperties"] is True  # checked per target


def test_spec_schema_accepts_both_teacher_forms() -> None:
    for teacher in ("vllm:Qwen/Qwen3-8B@http://localhost:8001/v1",
                    {"url": "http://localhost:8001/v1", "model": "Qwen/Qwen3-8B", "api_key_env": "KEY"}):
        doc = {"taskset": "reverse-text", "model": "m", "method": {"type": "opd", "teacher": teacher},
               "$schema": "../schemas/spec.schema.json", "overrides": {"trainer.optim.lr": 1e-5}}
        assert errors("spec", doc) == []
        build(RunSpec, doc)


def reports() -> list[tuple[str, dict[str, Any]]]:
    from whileai.tasksets.builtin import BUILTIN, name_of

    runs = [(p.stem, load_spec(p)) for p in EXAMPLES] + list(sample_runs().items())
    # TRL trains from files: a taskset it cannot generate locally needs `data` (it says so); a
    # mixture is prime-rl's only (TRL refuses it in one line: tests/targets/prime_rl/test_mixtures.py)
    return [(f"{name}/{b}", wai.compile(r, b).to_dict()) for name, run in runs for b in backends()
            if (r := for_backend(run, b)) is not None
            and (b != "trl" or ((run.data is not None or name_of(run.taskset) in BUILTIN)
                                and not run.sources))]


def test_every_report_matches_the_model_and_the_schema() -> None:
    seen = reports()
    assert len(seen) >= 3
    for name, doc in seen:
        assert set(doc) == set(Report.model_fields), name
        Report.model_validate(doc)
        assert errors("report", doc) == [], name


def test_cli_json_report_validates() -> None:
    """Several spec files: a JSON array of reports, in the order given; one: the report itself."""
    result = CliRunner().invoke(app, ["compile", *map(str, EXAMPLES[:3]), "--json"])
    assert result.exit_code == 0, result.output
    docs = json.loads(result.output)
    assert isinstance(docs, list) and len(docs) == 3
    for doc in docs:
        assert errors("report", doc) == []
    one = CliRunner().invoke(app, ["compile", str(EXAMPLES[0]), "--json"])
    assert one.exit_code == 0, one.output
    doc = json.loads(one.output)
    assert isinstance(doc, dict) and errors("report", doc) == [] and doc["main"] == docs[0]["main"]


def test_report_schema_flags_a_changed_shape() -> None:
    doc = wai.compile(load_spec(EXAMPLES[0])).to_dict()
    assert errors("report", doc | {"extra": 1})
    assert errors("report", {k: v for k, v in doc.items() if k != "reads"})
    assert errors("report", doc | {"reads": [{"field": "steps", "path": "max_steps"}]})


def test_report_is_version_2_and_refuses_version_1() -> None:
    """Version 2 names the target `target` and the pin `pin`; version 1 (unversioned) said
    `backend` and `target`: the schema tells them apart (docs/guide.md, "The --json report")."""
    c = wai.compile(load_spec(EXAMPLES[0]))
    doc = c.to_dict()
    assert (doc["schema_version"], doc["target"], doc["pin"]) == (2, c.target, c.pin)
    assert list(doc)[:3] == ["schema_version", "target", "pin"] and "backend" not in doc
    old = {"backend": c.target, "target": c.pin} | {k: v for k, v in doc.items()
                                                     if k not in ("schema_version", "target", "pin")}
    assert errors("report", old)
    assert errors("report", doc | {"schema_version": 1})


def test_report_rows_are_the_records_a_compile_returns() -> None:
    """One type per record: the report model's rows are the very classes a compile builds, and a
    record's to_dict() is pydantic's JSON of the same object, key order included."""
    from pydantic import TypeAdapter

    c = wai.compile(load_spec(ROOT / "examples" / "opd.toml"))
    rows: dict[str, tuple[Any, ...]] = {"reads": c.reads, "ignores": c.ignores, "fixed": c.fixed,
                                        "warnings": c.warnings, "teachers": c.teachers}
    for key, got in rows.items():
        (row,) = get_args(Report.model_fields[key].annotation)
        assert got and all(type(x) is row for x in got), key
        dumped = TypeAdapter(list[row]).dump_python(list(got), mode="json")  # type: ignore[valid-type]
        assert json.dumps([x.to_dict() for x in got]) == json.dumps(dumped), key
    assert c.cost is not None and type(c.cost) in get_args(Report.model_fields["cost"].annotation)
    cost = TypeAdapter(type(c.cost)).dump_python(c.cost, mode="json")
    assert json.dumps(c.cost.to_dict()) == json.dumps(cost)
    assert c.teacher is not None and type(c.teacher) in get_args(Report.model_fields["teacher"].annotation)


# -- field maps against the pinned catalogues ---------------------------------------------
def target_paths(c: wai.Compiled) -> list[str]:
    """Keys of the file (`<...>` rows name no key: a command, a table left out)."""
    return [x.path for x in [*c.reads, *c.fixed] if not x.path.startswith("<")]


def in_prime_rl(path: str) -> bool:
    """`a.b[0].c` exists in the catalogue (keys under an open table, such as a source's env,
    which prime-rl passes through, are present)."""
    return bool(prime_rl_catalog().lookup(re.sub(r"\[(\d+)\]", r".\1", path)))


def test_prime_rl_field_map_names_only_catalogue_paths() -> None:
    assert not in_prime_rl("orchestrator.algo.no_such_key")
    for name, run in sample_runs().items():
        if (r := for_backend(run, "prime-rl")) is None:
            continue
        c = wai.compile(r, "prime-rl")
        for stage in c.stages or (c,):  # a two-stage run: each stage's file
            for path in target_paths(stage):
                assert in_prime_rl(path), f"{name}: prime-rl's catalogue has no {path}"


def test_trl_field_map_names_only_catalogue_paths() -> None:
    trl = trl_backend()
    if trl is None:
        pytest.skip("whileai.targets.trl.compile is not present yet")
    try:
        from whileai.targets.trl import catalog as trl_catalog
    except ModuleNotFoundError:
        pytest.skip("whileai.targets.trl.catalog (the TRL catalogue) is not present yet")
    assert not trl_catalog.has("grpo", "no_such_key")
    for name, run in sample_runs().items():
        if run.sources:  # a mixture: TRL refuses it (tests/targets/prime_rl/test_mixtures.py)
            continue
        c = wai.compile(for_backend(run, "trl"), "trl")  # without what TRL refuses (task reward)
        for stage in c.stages or (c,):  # a two-stage run: each stage's directory
            command = trl.command_name(stage.run)
            for path in target_paths(stage):
                if path.startswith("<"):  # not a YAML key: the command, a dataset column
                    continue
                assert trl_catalog.has(command, path), f"{name}: TRL {command} accepts no {path}"


def test_compile_json_for_one_and_several_specs_validates_against_schema_report() -> None:
    """`compile A B --json` (an array) and `compile A --json` (an object) both validate against
    what `whileai schema report` prints (issue 40, item 6)."""
    printed = CliRunner().invoke(app, ["schema", "report"])
    assert printed.exit_code == 0, printed.output
    validator = Draft202012Validator(json.loads(printed.output))
    for specs in (EXAMPLES[:2], EXAMPLES[:1]):
        res = CliRunner().invoke(app, ["compile", *map(str, specs), "--json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.output)
        assert isinstance(doc, list if len(specs) > 1 else dict)
        assert [e.message for e in validator.iter_errors(doc)] == [], specs
    assert list(validator.iter_errors([]))  # an empty array is no report
