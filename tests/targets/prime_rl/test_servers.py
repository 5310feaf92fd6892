"""One plan per teacher server: compile's run line, preflight's fix line and the rehearsal's
stand-in are the same serve line, for every teacher of the bundled examples (one node, SLURM jobs,
mixtures, tasksets) and for a 70B teacher served from its own inference TOML; an override of a
teacher's model, URL or key variable is refused naming the spec field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

import whileai as wai
from whileai.errors import SpecError
from whileai.preflight.run import preflight
from whileai.spec.load import load_spec
from whileai.targets.prime_rl.rehearse import inputs

ROOT = Path(__file__).resolve().parents[3]
SPECS = sorted(ROOT.glob("examples/**/*.toml"))  # every bundled example: one node, SLURM, mixtures
BIG = """taskset = "gsm8k"
model = "Qwen/Qwen3-8B"
gpus = 4
gpus_per_node = 8
prompt_tokens = 1024
[method]
type = "opd"
max_tokens = 4096
teacher = "vllm:meta-llama/Llama-3.3-70B-Instruct@http://localhost:{port}/v1"
"""


def free_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def three_lines(run: wai.RunSpec) -> list[tuple[str, str, str]]:
    """(compile's run line, preflight's fix line, the rehearsal's stand-in line) per teacher."""
    c = wai.compile(run, "prime-rl")
    report = preflight(run, timeout=2.0)
    stages = inputs.from_compiled(c)
    out = []
    for t in c.teachers:
        ran = next(x for x in c.commands if t.url in x and "inference" in x)
        fix = next(ch.detail for ch in report.checks if t.model in ch.name and ch.status == "FAIL")
        stood = next(line for s in stages for line in s.lines if t.file and t.file in line
                     or t.model in line)
        out.append((ran.split(" &  #")[0].split("  # ")[0], re.split(r"serve it: ", fix)[1], stood))
    return out


def _prime_rl_teachers(p: Path) -> bool:
    """An example with a teacher that prime-rl compiles (one with `data` is TRL's: prime-rl refuses it)."""
    text = p.read_text()
    return "teacher =" in text and not re.search(r"^data\s*=", text, re.M)


@pytest.mark.parametrize("spec", [p for p in SPECS if _prime_rl_teachers(p)], ids=lambda p: p.stem)
def test_compile_preflight_and_rehearse_serve_each_bundled_teacher_alike(spec: Path, tmp_path: Path) -> None:
    # the example on a port nobody listens on: preflight's fix line is then its serve line
    moved = tmp_path / spec.name
    moved.write_text(spec.read_text().replace("localhost:8001", f"localhost:{free_port()}"))
    lines = three_lines(load_spec(moved))
    assert lines, spec
    for ran, fix, stood in lines:
        assert ran == fix == stood, (ran, fix, stood)


def test_a_70b_teacher_on_its_own_toml_is_served_by_one_line(tmp_path: Path) -> None:
    port = free_port()
    spec = tmp_path / "big.toml"
    spec.write_text(BIG.format(port=port))
    run = load_spec(spec)
    c = wai.compile(run, "prime-rl")
    (t,) = c.teachers
    assert t.mode == "local" and t.serve == "CUDA_VISIBLE_DEVICES=4,5,6,7 uv run inference @ opd.teacher.toml"
    assert t.max_model_len == 1024 + 4096 + 1 and "max_model_len = 5121" in c.files["opd.teacher.toml"]
    assert f"# run first: {t.serve}\n" in c.files["opd.teacher.toml"]  # the file says the same line
    ((ran, fix, stood),) = three_lines(run)
    assert ran == fix == stood == t.serve
    (stage,) = inputs.from_compiled(c)
    assert stage.files == {"opd.teacher.toml": c.files["opd.teacher.toml"]}


@pytest.mark.parametrize("key,field", [
    ("orchestrator.algo.teacher.base_url", "method.teacher.url"),
    ("orchestrator.algo.teacher.name", "method.teacher.model"),
    ("orchestrator.algo.teacher.api_key_var", "method.teacher.api_key_env"),
])
def test_an_override_of_a_teacher_the_plan_serves_is_refused(key: str, field: str) -> None:
    run = load_spec(ROOT / "examples" / "opd.toml")
    value = "http://localhost:8012/v1" if key.endswith("base_url") else "x"
    with pytest.raises(SpecError, match=f"set {re.escape(field)} in the spec instead"):
        wai.compile(run.model_copy(update={"overrides": {key: value}}), "prime-rl")


def test_a_client_override_reaches_the_plan_preflight_reads() -> None:
    run = load_spec(ROOT / "examples" / "opd.toml")
    c = wai.compile(run.model_copy(update={"overrides": {
        "orchestrator.algo.teacher.headers": {"X-Route": "r1"},
        "orchestrator.algo.teacher.skip_model_check": True}}), "prime-rl")
    assert c.teachers[0].client == {"headers": {"X-Route": "r1"}, "skip_model_check": True}


def test_a_longer_seq_len_override_beside_a_served_teacher_is_refused() -> None:
    run = load_spec(ROOT / "examples" / "opd.toml")
    with pytest.raises(SpecError, match="at most 10240 with a served teacher"):
        wai.compile(run.model_copy(update={"overrides": {"seq_len": 20000}}), "prime-rl")
    same = wai.compile(run.model_copy(update={"overrides": {"seq_len": 10240}}), "prime-rl")
    assert same.teachers[0].max_model_len == 10241  # room for every sequence, and one token more
    remote = run.method.teacher.model_copy(update={"url": "https://teacher.example.com/v1"})
    far = run.model_copy(update={"overrides": {"seq_len": 20000},
                                 "method": run.method.model_copy(update={"teacher": remote})})
    assert tomllib.loads(wai.compile(far, "prime-rl").text)["seq_len"] == 20000  # the user sizes it
