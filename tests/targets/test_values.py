"""No silent drops, by value: every field a row reads is found in the compiled FILES, at the row's
path, with the spec's value (or the row's stated transformation, its `value` function), for every
method x target; and a read whose row transforms the value changes when the field does.

tests/targets/test_coverage.py checks the bookkeeping (every set field is read or ignored); this
module checks the files: a row that says "read" while the file holds another value (the spec's seed
written as 0) fails here. The files are parsed as their consumer reads them: TOML (prime-rl), YAML
(TRL, accelerate), run.sh's bash words and Hydra values (verl), the commands' options.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from typing import Any

import pytest
import tomllib
import yaml
from test_coverage import _reverse_kl, variants

import whileai as wai
from whileai.catalogs.paths import get_path
from whileai.spec.run import METHODS, RunSpec
from whileai.targets import pipeline, registry
from whileai.targets.base import Options
from whileai.targets.compiled import Compiled
from whileai.targets.fieldmap import To, field_value, label, with_field
from whileai.targets.verl import runsh

_MISSING = object()
# read paths that are no key of any file: what the report alone says, a table's presence, a
# file's rows (the goldens hold each)
NOT_A_KEY = {
    "<this report's warnings>": "the report's own list",
    "<command>": "the command's name, the method",
    "<run.sh>": "verl's whole run.sh",
    "<data/test.jsonl rows>": "a count of written rows",
    "<convert.py prompts: the prompts>": "the rows a converter writes",
    "<privileged_context column>": "a data column",
    "<no [ckpt]>": "a table left out (its value is the spec's false)",
    "<no [orchestrator.eval]>": "a table left out (its value is the spec's false)",
    "<[orchestrator.eval] written>": "a table written (its value is the spec's true)",
    "<one node's GPUs: the trainer's and the OPD teacher's pool>": "a sum over two pools' keys",
    "<accelerate.yaml: distributed_type>": "the report names FSDP2; the file says FSDP and fsdp_version 2",
}

# a second non-default value per field: the file must change where a row transforms the field
OTHER: dict[str, Any] = {
    "seed": 11, "steps": 12, "prompts": 16, "prompt_tokens": 256, "max_off_policy_steps": 3,
    "method.learning_rate": 3e-5, "method.temperature": 0.7, "method.max_tokens": 512,
    "method.samples": 4, "method.top_k": 16, "eval.interval": 2, "eval.examples": 1,
    "checkpoint.interval": 2, "checkpoint.keep_last": 3, "output_dir": "runs/y",
    "monitor.project": "q", "monitor.entity": "f", "monitor.name": "m", "monitor.group": "h",
    "monitor.tags": ["u", "v"], "model": "Qwen/Qwen3-1.7B", "lora_rank": 4, "gpus": 2,
}
# (field, path) where the OTHER value leaves the file alone by the row's own rule, and why
STILL = {
    ("gpus", "deployment.num_infer_gpus"): "inference_gpus is set: gpus sizes inference only when unset",
    ("prompts", "gradient_accumulation_steps"): "8 and 16 prompts each fit one pass per GPU: 1",
}


def hydra_value(text: str) -> Any:
    """A Hydra override's value as verl receives it (the primitives whileai writes)."""
    if text in ("True", "true", "False", "false"):
        return text.lower() == "true"
    if text == "null":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text[:1] in "'\"" and text[-1:] == text[:1]:
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    if text.startswith("["):
        return json.loads(text)
    return text


# verl's SFT run.sh has two jobs: its map names each key by the job's prefix
JOBS = {"generate.": "main_generation_server", "sft.": "sft_trainer", "": "main_ppo"}


def _override(text: str, path: str) -> Any:
    """The value of a Hydra key on run.sh's verl command (a prefixed key: that job's command)."""
    prefix = next(p for p in JOBS if path.startswith(p))
    [cmd] = [c for c in runsh.parse(text, env={"PWD": "$PWD"}) if c.kind == JOBS[prefix]]
    keys = {k.lstrip("+"): v for k, _, v in (o.partition("=") for o in cmd.overrides)}
    key = path.removeprefix(prefix)
    return hydra_value(keys[key]) if key in keys else _MISSING


def _option(commands: tuple[str, ...], name: str) -> Any:
    for line in commands:
        words = shlex.split(line)
        if name in words:
            return words[words.index(name) + 1]
    return _MISSING


def _sbatch(text: str, name: str) -> Any:
    found = re.search(rf"^#SBATCH {re.escape(name)}=(.*)$", text, re.M)
    return found.group(1) if found else _MISSING


def _export(text: str, name: str) -> Any:
    found = re.search(rf"^export {name}=(.*)$", text, re.M)
    return shlex.split(found.group(1))[0] if found else _MISSING


def located(c: Compiled, path: str) -> Any:
    """The value the compiled files hold at a read's path, parsed as the consumer parses it."""
    folder, sep, rest = path.partition(": ")
    if sep and "/" in folder and not folder.startswith("<"):  # a stage's file: "2-grpo/config.yaml: key"
        return _in_file(c, folder, rest, tuple(x for x in c.commands))
    return _in_file(c, c.main, path, c.commands)


def _in_file(c: Compiled, fname: str, path: str, commands: tuple[str, ...]) -> Any:
    text = c.files[fname]
    if path.startswith("<accelerate.yaml: "):
        acc = fname.rsplit("/", 1)[0] + "/accelerate.yaml" if "/" in fname else "accelerate.yaml"
        return yaml.safe_load(c.files[acc]).get(path[len("<accelerate.yaml: "):-1], _MISSING)
    if path.startswith("<sample.py "):
        return _option(commands, path[len("<sample.py "):-1])
    if path.startswith("<convert.py prompts --"):  # verl's SFT: the converter's line of run.sh
        lines = [ln for ln in text.splitlines() if ln.startswith("python3 convert.py prompts ")]
        return _option(tuple(lines), path[len("<convert.py prompts "):-1])
    if path.startswith("<env "):
        return _export(text, path[len("<env "):-1])
    if path == "<sbatch script: first line>":
        body = [ln for ln in c.files["slurm.sh"].splitlines() if ln and not ln.startswith("#")]
        return body[1] if body[0].startswith("set ") else body[0]
    if path.startswith("<sbatch "):
        return _sbatch(c.files["slurm.sh"], path[len("<sbatch "):-1])
    if path.startswith("<"):
        raise AssertionError(f"{path}: a read path this test cannot find in the files; "
                             "find it (located) or say why it is no key (NOT_A_KEY)")
    if fname.endswith(".toml"):
        doc: Any = tomllib.loads(text)
    elif fname.endswith(".sh"):
        return _override(text, path)
    else:
        doc = yaml.safe_load(text)
    return get_path(doc, path, _MISSING)


def same(file_value: Any, value: Any) -> bool:
    """Equal as the consumer reads them: a shell word or an env variable is text."""
    if isinstance(value, dict) and isinstance(file_value, dict):  # a table: later rows fill it
        return all(k in file_value and same(file_value[k], v) for k, v in value.items())
    if isinstance(file_value, str) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return re.fullmatch(r"[-+0-9.e]+", file_value) is not None and float(file_value) == value
    if isinstance(file_value, str) and not isinstance(value, str):
        return file_value == (",".join(map(str, value)) if isinstance(value, list) else str(value))
    return bool(file_value == value)


def compile_with_rows(name: str, run: RunSpec) -> list[tuple[Compiled, list[Any]]]:
    """The compiled run (each stage of a two-stage one) and the rows its field map applied, a
    stage's extra rows included (the pipeline's own `apply`, watched)."""
    seen: list[tuple[RunSpec, list[Any]]] = []
    real = pipeline.apply

    def watched(rows: Any, r: RunSpec, extra: Any = ()) -> Any:
        seen.append((r, [*rows, *extra]))
        return real(rows, r, extra)

    pipeline.apply = watched  # type: ignore[assignment]
    try:
        c = registry.get(name).compile(run, name="x.toml", out=None, options=Options())
    finally:
        pipeline.apply = real  # type: ignore[assignment]
    out = []
    for one in c.stages or (c,):
        [rows] = [rows for r, rows in seen if r == one.run][-1:] or [[]]
        out.append((one, rows))
    return out


def stated(rows: list[Any], run: RunSpec, field: str, path: str) -> tuple[str, Callable[..., Any] | None]:
    """The spec field and the transformation (None: the value itself) of the row behind a read:
    the last `To` for that field and path whose condition holds (a later row wins)."""
    found = [r for r in rows
             if isinstance(r, To) and label(r.field) == field and r.path == path and r.when(run)]
    assert found, f"{field} -> {path}: no row of the field map reads it"
    return found[-1].field, found[-1].value


def runs(name: str, kind: str) -> list[RunSpec]:
    """The coverage test's runs this target compiles (a two-stage run's stages each)."""
    out = []
    for run in variants(kind):
        if name == "prime-rl":
            run = _reverse_kl(run.model_copy(update={"data": None, "reward": None}))
        try:
            registry.get(name).compile(run, name="x.toml", out=None, options=Options())
        except wai.SpecError:
            continue  # refused (test_coverage.py holds each refusal)
        out.append(run)
    return out


@pytest.mark.parametrize("name", list(registry.names()))
@pytest.mark.parametrize("kind", list(METHODS))
def test_every_read_value_is_in_the_files(name: str, kind: str) -> None:
    """Each read is found at its path in the compiled files with the spec's value, or with the
    value of the row's stated transformation."""
    checked, compiled = 0, runs(name, kind)
    if not compiled:
        pytest.skip(f"{name} refuses every {kind} run (test_coverage.py holds the refusal)")
    for c, rows in (one for run in compiled for one in compile_with_rows(name, run)):
        run = c.run
        for read in c.reads:
            if read.path in NOT_A_KEY:
                continue
            field, how = stated(rows, run, read.field, read.path)
            want = how(run) if how else field_value(run, field)
            got = located(c, read.path)
            assert got is not _MISSING, f"{name}/{kind}: {field} read at {read.path}, not in the files"
            assert same(got, want), (f"{name}/{kind}: {field}={field_value(run, field)!r} read at "
                                     f"{read.path} ({'transformed' if how else 'as is'}: {want!r}), "
                                     f"but the file holds {got!r}")
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("name", list(registry.names()))
@pytest.mark.parametrize("kind", list(METHODS))
def test_a_transformed_read_follows_its_field(name: str, kind: str) -> None:
    """Where a row transforms a field's value, the file's value at its path changes when the
    field alone does (OTHER): a row that writes a constant, or another field's value, fails."""
    [full] = runs(name, kind)[1:2] or [None]
    if full is None:
        pytest.skip(f"{name} refuses {kind}")
    [(c, rows)] = compile_with_rows(name, full)
    moved = 0
    for read in c.reads:
        if read.path in NOT_A_KEY:
            continue
        field, how = stated(rows, full, read.field, read.path)
        if field not in OTHER or (field, read.path) in STILL:
            continue
        other = registry.get(name).compile(with_field(full, field, OTHER[field]), name="x.toml",
                                           out=None, options=Options())
        before, after = located(c, read.path), located(other, read.path)
        assert before != after, (f"{name}/{kind}: {read.path} holds {before!r} whether {field} is "
                                 f"{field_value(full, field)!r} or {OTHER[field]!r}")
        moved += 1
    assert moved > 5
