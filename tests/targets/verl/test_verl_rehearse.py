"""`whileai rehearse -t verl` without verl: the stages it reads, the verdict it makes of inside.py's
JSON lines, the pools step's packing arithmetic, and one clear line where verl's Python is missing.
(With verl's Python: tests/targets/verl/test_verl_rehearse_live.py.)"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from whileai.errors import SpecError
from whileai.rehearse.verdict import Result
from whileai.targets import registry
from whileai.targets.verl.rehearse import env as verl_env
from whileai.targets.verl.rehearse import hook, inside, run, stages
from whileai.targets.verl.rehearse.context import Context, StepRecord
from whileai.targets.verl.rehearse.pools import Unplaceable, _check_packing

ROOT = Path(__file__).resolve().parents[3]
HAS_VERL = importlib.util.find_spec("verl") is not None and \
    getattr(importlib.util.find_spec("verl"), "origin", None) not in (None, "namespace")


def compiled(spec: str, sets: list[str] | None = None):  # type: ignore[no-untyped-def]
    from whileai.api import compile_all
    from whileai.spec.load import load_spec, parse_sets

    path = ROOT / "examples" / spec
    return compile_all([load_spec(path, parse_sets(sets or []))], "verl", names=[path.stem])[0]


def test_verl_is_rehearsable_and_trl_still_is_not() -> None:
    assert registry.get("verl").rehearsal is hook.REHEARSAL
    p = subprocess.run([sys.executable, "-m", "whileai", "rehearse", "examples/grpo.toml", "-t", "trl"],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 2 and "trl is not rehearsable" in p.stderr and "prime-rl, verl" in p.stderr


def test_a_spec_is_one_stage_per_verl_command_on_the_node_it_gets() -> None:
    [opd] = hook.REHEARSAL.stages(compiled("opd.toml"))
    assert (opd.name, opd.job, opd.line, opd.script) == ("opd", "main_ppo", 7, "run.sh")
    assert {"run.sh", "reward.py", "data/train.jsonl"} <= set(opd.files)
    # one node of gpus_per_node (8 by default), where the compiler places the pools (knobs.node_gpus)
    assert (opd.gpus, opd.nodes) == (8, 1) and opd.why == "one node of the spec's gpus_per_node"
    gen, sft = hook.REHEARSAL.stages(compiled("sft.toml"))
    assert (gen.job, sft.job) == ("main_generation_server", "sft_trainer") and gen.line < sft.line
    assert gen.name == "sft: main_generation_server"
    [big] = hook.REHEARSAL.stages(compiled("scale/opd-32b-2nodes.toml"))  # what slurm.sh asks SLURM for
    # 2 nodes of trainer and a node of its own for the teacher pool (knobs.pool)
    assert (big.gpus, big.nodes, big.why) == (8, 3, "slurm.sh's #SBATCH --nodes and --gpus-per-node")


def test_slurm_sh_says_the_nodes_the_cluster_gives() -> None:
    assert stages.sbatch("#!/bin/bash\n#SBATCH --nodes=3\n#SBATCH --gpus-per-node=4\n")[:2] == (4, 3)
    assert stages.sbatch("#SBATCH --nodes=3\n") is None and stages.sbatch("") is None


def test_a_run_folder_is_read_in_place_and_flags_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    c = compiled("sft.toml")
    for name, text in c.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    never = lambda: pytest.fail("a run folder is not compiled")  # noqa: E731
    stages = hook.REHEARSAL.read(tmp_path, serve=None, sets=None, compile=never)
    assert [s.job for s in stages] == ["main_generation_server", "sft_trainer"]
    assert all(s.source == str(tmp_path.resolve()) and not s.files and s.gpus == 0 for s in stages)
    assert hook.REHEARSAL.read(tmp_path / "run.sh", serve=None, sets=None, compile=never) == stages
    with pytest.raises(SpecError, match="--set"):
        hook.REHEARSAL.read(tmp_path, serve=None, sets=["a=1"], compile=never)
    with pytest.raises(SpecError, match="--serve"):
        hook.REHEARSAL.read(tmp_path, serve=["inference x"], sets=None, compile=never)
    (tmp_path / "run.sh").write_text("echo no verl here\n")
    with pytest.raises(SpecError, match="a run.sh with a verl command"):
        hook.REHEARSAL.read(tmp_path, serve=None, sets=None, compile=never)


def test_a_run_compiled_for_another_target_is_refused() -> None:
    from whileai.api import compile_all
    from whileai.spec.load import load_spec

    c = compile_all([load_spec(ROOT / "examples" / "grpo.toml", [])], "prime-rl", names=["grpo"])[0]
    with pytest.raises(SpecError, match="--target"):
        hook.REHEARSAL.stages(c)


CREATE = "verl.single_controller.ray.base.ResourcePoolManager.create_resource_pool"
REFUSED = StepRecord("pools", False, ran=[CREATE],
               stood_in=["the node -> Ray on this CPU with 8 logical GPUs (ray.init(num_gpus=...))"],
               facts={"pools": {"global_pool": [8], "teacher_pool": [2]}, "declared_gpus": 8},
               error="ValueError: Total available GPUs 8.0 is less than total desired GPUs 10",
               cause="verl/single_controller/ray/base.py:240", seconds=11.2)


def log_of(tmp_path: Path, *steps: StepRecord, noise: str = "Token authentication is enabled\n") -> Path:
    where = tmp_path / "0-opd"
    where.mkdir(parents=True, exist_ok=True)
    log = where / "inside.log"
    log.write_text(noise + "".join(s.to_json() + "\n" for s in steps))
    return log


def test_the_verdict_quotes_verls_own_message_at_verls_own_line(tmp_path: Path) -> None:
    ok_data = StepRecord("data", True, ran=["verl.utils.dataset.rl_dataset.RLHFDataset"], seconds=2.0)
    log = log_of(tmp_path, REFUSED, ok_data)
    v = run.verdict(log, tmp_path, 1, 14.0, "the spec's gpus (one node)", 8)
    assert not v.ok and v.summary == f"failed: pools: {REFUSED.error}"
    assert v.cause is not None and (v.cause.file, v.cause.line) == ("verl/single_controller/ray/base.py", 240)
    assert v.cause.text == REFUSED.error
    assert [s["name"] for s in v.steps] == ["pools", "data"]
    lines = hook.REHEARSAL.lines(Result(["opd"], [v], [[]], str(tmp_path)))
    text = "\n".join(lines)
    assert lines[0] == f"failed: opd: pools: {REFUSED.error}"
    assert f"      ran: {CREATE}" in lines
    assert "      stood in: the node -> Ray on this CPU with 8 logical GPUs (ray.init(num_gpus=...))" in lines
    assert "node 8 GPU(s): the spec's gpus (one node)" in text
    assert "    data: ok (2.0 s)" in lines


def test_an_ok_stage_names_its_steps_and_a_killed_one_its_timeout(tmp_path: Path) -> None:
    log = log_of(tmp_path, StepRecord("pools", True, seconds=9.0), StepRecord("data", True, seconds=1.0),
                 StepRecord("reward", True), StepRecord("loss", True))
    v = run.verdict(log, tmp_path, 0, 12.0)
    assert v.ok and v.summary == "ok: pools, data, reward, loss in 12 s" and v.cause is None
    v = run.verdict(log_of(tmp_path, StepRecord("pools", True)), tmp_path, None, 30.0)
    assert not v.ok and v.timed_out and v.cause is not None and "--timeout" in v.cause.text


def test_a_python_that_dies_before_any_step_is_quoted_from_its_log(tmp_path: Path) -> None:
    log = log_of(tmp_path, noise="Traceback (most recent call last):\n  File x\nModuleNotFoundError: "
                 "No module named 'hydra'\n")
    v = run.verdict(log, tmp_path, 1, 1.0)
    assert not v.ok and v.cause is not None and v.cause.line == 3 and "hydra" in v.cause.text


def test_a_step_not_built_and_a_step_that_raises_are_failed_steps_with_their_cause(tmp_path: Path) -> None:
    ctx = Context(tmp_path, "main_ppo", [], 8, 1, tmp_path / "scratch")
    gone = inside.run_step("nosuchstep", ctx)
    assert not gone.ok and gone.error.startswith("not built: whileai/targets/verl/rehearse/nosuchstep.py")
    source = tmp_path / "reward.py"
    source.write_text("def run(ctx):\n    raise KeyError('extra_info')\n")
    module = types.ModuleType("whileai.targets.verl.rehearse.fakestep")
    exec(compile(source.read_text(), str(source), "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    try:
        step = inside.run_step("fakestep", ctx)
    finally:
        del sys.modules[module.__name__]
    assert not step.ok and step.error == "KeyError: 'extra_info'" and step.cause == "reward.py:2"


def test_several_nodes_are_packed_per_node_as_ray_would() -> None:
    _check_packing({"global_pool": [8, 8]}, 8, 2, StepRecord("pools", True))
    _check_packing({"global_pool": [6, 6], "teacher_pool": [2, 2]}, 8, 2, StepRecord("pools", True))
    with pytest.raises(Unplaceable, match=r"\[6, 6, 4\].*2 nodes of 8 GPUs"):
        _check_packing({"global_pool": [6, 6], "teacher_pool": [4]}, 8, 2, StepRecord("pools", True))


def test_sft_trainer_has_no_pools(tmp_path: Path) -> None:
    from whileai.targets.verl.rehearse import pools

    step = pools.run(Context(tmp_path, "sft_trainer", [], 8, 1, tmp_path))
    assert step.ok and step.facts["applies"] is False and "torchrun" in step.facts["why"]


@pytest.mark.skipif(HAS_VERL, reason="verl is importable here: the missing-verl path does not apply")
def test_without_verls_python_it_is_one_line_exit_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != verl_env.ENV} | {"PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "whileai", "rehearse", "examples/opd.toml", "-t", "verl"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "WHILEAI_VERL_PYTHON" in p.stderr and "setup command" in p.stderr
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       env=env | {verl_env.ENV: str(tmp_path / "nothing" / "python")})
    assert p.returncode == 2 and p.stderr.startswith("error: WHILEAI_VERL_PYTHON")
    assert "Traceback" not in p.stderr


@pytest.mark.skipif(HAS_VERL, reason="verl is importable here: the missing-verl path does not apply")
def test_validate_says_not_checked_where_verl_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.targets.verl.launch import rehearse_arms

    monkeypatch.delenv(verl_env.ENV, raising=False)
    assert rehearse_arms({"grpo": compiled("grpo.toml")}) == 0
    said = capsys.readouterr().out
    assert "grpo: rehearsal: not checked (no Python with verl here: set $WHILEAI_VERL_PYTHON" in said


def test_setup_names_the_command_where_there_is_no_python(tmp_path: Path) -> None:
    lines, ok = hook.REHEARSAL.setup(tmp_path / "venv", python=None, stages=None)
    assert not ok and lines[0].startswith("no python at")
    assert any("pip install --no-deps verl==0.9.1" in x for x in lines)
    assert lines[-1] == f"export WHILEAI_VERL_PYTHON={tmp_path / 'venv'}/bin/python"


def test_setup_says_what_a_python_without_verl_lacks(tmp_path: Path) -> None:
    if HAS_VERL:
        pytest.skip("this Python has verl")
    lines, ok = hook.REHEARSAL.setup(tmp_path, python=sys.executable, stages=None)
    assert not ok and "verl: not installed (the pin: 0.9.1)" in lines
    assert any(x.startswith("missing: verl") for x in lines)


def test_the_step_lines_round_trip_through_json() -> None:
    assert StepRecord.from_json(REFUSED.to_json()) == REFUSED
    assert json.loads(REFUSED.to_json())["cause"] == "verl/single_controller/ray/base.py:240"


def test_the_docs_show_the_setup_command_the_cli_prints() -> None:
    """One setup command: docs/rehearse.md shows verl_env.SETUP word for word, and every module it
    checks for (NEEDS) is installed by it."""
    docs = (Path(__file__).resolve().parents[3] / "docs" / "rehearse.md").read_text()
    assert verl_env.SETUP.replace("\\\\", "\\") in docs
    installed = verl_env.SETUP.replace("hydra-core", "hydra")
    assert [m for m in verl_env.NEEDS if m not in installed] == []


def test_a_python_without_verl_is_refused_before_any_folder_is_made(tmp_path: Path) -> None:
    """--python naming a Python that has no verl: one line naming it and the setup command, exit 2,
    and no rehearsal folder (whileai-rehearse-*) made."""
    import tempfile

    before = set(Path(tempfile.gettempdir()).glob("whileai-rehearse-*"))
    p = subprocess.run([sys.executable, "-m", "whileai", "rehearse", str(ROOT / "examples" / "grpo.toml"),
                        "-t", "verl", "--python", sys.executable if not _has_verl() else "/bin/false"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "--setup DIR -t verl" in p.stderr, p.stderr
    assert set(Path(tempfile.gettempdir()).glob("whileai-rehearse-*")) == before


def _has_verl() -> bool:
    return importlib.util.find_spec("verl") is not None
