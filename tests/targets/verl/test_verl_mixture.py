"""A teacher per source on verl 0.9.1 (whileai.targets.verl.mix): a two-teacher OPD mixture
compiles to one `distillation.teacher_models` entry per teacher, each keyed to its sources'
`data_source`, never the default `teacher_model` beside others (verl pops it then:
workers/config/distillation.py:309-310); what verl cannot express is refused in one line, and so
is a config verl would silently shorten to one teacher."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, verl_python

import whileai as wai
from whileai.spec.load import load_spec
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import parse
from whileai.tasksets import local

SPEC = ROOT / "tests" / "fixtures" / "verl" / "specs" / "mixture-two-teachers.toml"
MODELS = "distillation.teacher_models."
RECORD = json.loads((ROOT / "tests" / "fixtures" / "verl" / "compiled.json").read_text())


def overrides(c: wai.Compiled) -> dict[str, str]:
    [cmd] = parse(c.files["run.sh"], {"PWD": "/run"})
    return dict(o.split("=", 1) for o in cmd.overrides)


def spec(**changes: object) -> wai.RunSpec:
    run = load_spec(SPEC)
    data = run.model_dump(mode="python", by_alias=True, exclude_unset=True)
    return wai.RunSpec.model_validate(data | changes)


def test_two_teachers_each_keyed_to_their_rows_data_source():
    c = compile(load_spec(SPEC))
    got = overrides(c)
    assert got[f"+{MODELS}teacher_1.model_path"] == "Qwen/Qwen3-1.7B"
    assert got[f"+{MODELS}teacher_1.key"] == "reverse-text"
    assert got[f"+{MODELS}teacher_2.model_path"] == "Qwen/Qwen3-4B"
    assert got[f"+{MODELS}teacher_2.key"] == "mine"
    assert not [k for k in got if k.lstrip("+").startswith(MODELS + "teacher_model.")]
    rows = [json.loads(line) for line in c.files["data/train.jsonl"].splitlines()]
    sources = {r["data_source"] for r in rows}
    assert sources == {"reverse-text", "mine"}  # each row routed to one of the two keys
    mine = [r["extra_info"]["prompt"] for r in rows if r["data_source"] == "mine"]
    own = local.load(str(ROOT / "tests" / "data" / "tasks.jsonl")).train
    assert mine == [t["prompt"] for t in own]  # the source's own data file, its training rows


def test_the_teachers_pool_sums_their_replicas_and_the_report_counts_what_run_sh_starts():
    c = compile(load_spec(SPEC))
    got = {k.lstrip("+"): v for k, v in overrides(c).items()}
    pool = int(got["distillation.n_gpus_per_node"]) * int(got["distillation.nnodes"])
    tp = "inference.tensor_model_parallel_size"
    each = sum(int(got[f"{MODELS}{t}.num_replicas"]) * int(got[f"{MODELS}{t}.{tp}"])
               for t in ("teacher_1", "teacher_2"))
    assert pool == each == 2
    started = int(got["trainer.n_gpus_per_node"]) * int(got["trainer.nnodes"]) + pool
    assert c.cost is not None and c.cost.gpus + (c.cost.teacher_gpus or 0) == started == 4
    assert [t.model for t in c.teachers] == ["Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B"]


def test_one_teacher_over_several_sources_stays_verls_default_entry():
    teacher = {"type": "opd", "teacher": "vllm:Qwen/Qwen3-1.7B@http://teacher-a:8001/v1"}
    c = compile(spec(sources=[{"taskset": "reverse-text", "name": "again", "method": teacher}]))
    got = overrides(c)
    assert got[f"{MODELS}teacher_model.model_path"] == "Qwen/Qwen3-1.7B"
    assert not [k for k in got if k.lstrip("+").startswith(MODELS) and ".teacher_model." not in k]
    assert {json.loads(x)["data_source"] for x in c.files["data/train.jsonl"].splitlines()} == {
        "reverse-text", "again"}


@pytest.mark.parametrize(("change", "field"), [
    ({"sources": [{"taskset": "reverse-text", "name": "g", "method": {"type": "grpo"}}]},
     "sources[0].method.type"),
    ({"ratio": 2.0}, "ratio"),
    ({"sources": [{"taskset": "reverse-text", "name": "r", "ratio": 3.0}]}, "sources[0].ratio"),
    ({"sources": [{"taskset": "reverse-text", "name": "s", "method": {
        "type": "opd", "teacher": "vllm:Qwen/Qwen3-4B@http://b:1/v1", "samples": 8}}]},
     "sources[0].method.samples"),
    ({"sources": [{"taskset": "gsm8k", "method": {
        "type": "opd", "teacher": "vllm:Qwen/Qwen3-4B@http://b:1/v1"}}]}, "sources[0].data"),
    ({"method": {"type": "grpo"}, "sources": [{"taskset": "reverse-text", "name": "x"}]}, "sources"),
])
def test_what_verl_cannot_express_is_refused_in_one_line(change, field):
    run = spec(**change)  # a valid spec: verl's compile refuses it
    with pytest.raises(wai.SpecError) as info:
        compile(run)
    assert info.value.field == field and "\n" not in str(info.value)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai", "compile", *args, "-t", "verl", "-o",
                           str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)


@pytest.mark.parametrize("sets", [
    # teacher_model beside the mixture's named teachers: verl would keep only teacher_1, teacher_2
    [f"{MODELS}teacher_model.model_path=Qwen/Qwen3-8B"],
    # a named teacher beside a one-teacher run's teacher_model: verl would drop whileai's teacher
    [f"{MODELS}math.model_path=Qwen/Qwen3-8B", f"{MODELS}math.key=math"],
])
def test_a_config_verl_would_shorten_to_fewer_teachers_is_refused(tmp_path, sets):
    spec_file = str(SPEC) if "teacher_model" in sets[0] else str(ROOT / "examples" / "opd.toml")
    done = _cli(tmp_path, spec_file, *[a for s in sets for a in ("--set", s)])
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: overrides.{sets[0].split('=')[0]}:") and "309-310" in line
    assert not (tmp_path / "out").exists()


def test_verls_check_recorded_both_teachers_keyed():
    [entry] = [r for r in RECORD["compiled"] if r.get("spec", "").endswith("mixture-two-teachers.toml")]
    [verdict] = entry["verl"]
    assert verdict["accepted"] and verdict["step"] == "distillation"
    assert verdict["teachers"] == {"reverse-text": "Qwen/Qwen3-1.7B", "mine": "Qwen/Qwen3-4B"}


def test_verls_own_check_accepts_the_mixture_with_both_teachers_keyed(tmp_path):
    python = verl_python()
    c = compile(load_spec(SPEC))
    for name, text in c.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    done = subprocess.run([python, str(ROOT / "scripts" / "verl_check.py"), str(tmp_path / "run.sh")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [verdict] = [json.loads(x) for x in done.stdout.splitlines() if '"kind"' in x]
    assert verdict["accepted"] and verdict["teachers"] == {"reverse-text": "Qwen/Qwen3-1.7B",
                                                           "mine": "Qwen/Qwen3-4B"}
