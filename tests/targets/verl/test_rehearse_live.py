"""`whileai rehearse -t verl` with verl's own Python (WHILEAI_VERL_PYTHON): the bundled examples
place their pools, a teacher pool larger than the node ends in verl's own message, and nothing
the rehearsal started is left running. Skipped without it; the setup command: docs/rehearse.md,
"verl" (or `whileai rehearse --setup DIR -t verl`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PYTHON = os.environ.get("WHILEAI_VERL_PYTHON")
STEPS = ("pools", "data", "reward", "loss")
BUILT = all((ROOT / "whileai" / "targets" / "verl" / "rehearse" / f"{s}.py").is_file() for s in STEPS)

pytestmark = pytest.mark.skipif(
    not PYTHON, reason="WHILEAI_VERL_PYTHON names no Python with verl 0.9.1 (set it up with the "
    "command in docs/rehearse.md, 'verl', or `whileai rehearse --setup DIR -t verl`)")

OPD8 = """taskset = "reverse-text"
model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
steps = 100
prompts = 64
gpus = 8
[accept]
teacher-ceiling = "a test spec"
needs-grpo-arm = "a test spec"
[method]
type = "opd"
teacher = "vllm:PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://localhost:8001/v1"
"""


def rehearse(spec: Path, keep: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai", "rehearse", str(spec), "-t", "verl",
                           "--keep", str(keep), *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)


def left_running(keep: Path) -> list[str]:
    """Processes (not zombies) whose command line (whole: -ww) names a Ray session this rehearsal
    started."""
    temps = [p.read_text().strip() for p in keep.glob("*/scratch/ray-temp")]
    assert temps, "the pools step records where Ray kept its session"
    out = subprocess.run(["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines()
            if not line.lstrip().startswith("Z") and any(t in line for t in temps)]


@pytest.mark.parametrize("example", ["opd.toml", "grpo.toml"])
def test_the_bundled_examples_place_their_pools(example: str, tmp_path: Path) -> None:
    p = rehearse(ROOT / "examples" / example, tmp_path / "keep")
    assert "    pools: ok" in p.stdout, p.stdout + p.stderr
    assert "ran: verl.single_controller.ray.base.ResourcePoolManager.create_resource_pool" in p.stdout
    if example == "opd.toml":
        assert "ran: verl.experimental.teacher_loop.teacher_model.MultiTeacherModelManager" in p.stdout
    assert p.returncode == (0 if BUILT else 1), p.stdout + p.stderr
    assert not left_running(tmp_path / "keep")


def test_a_teacher_pool_larger_than_the_node_fails_with_verls_message(tmp_path: Path) -> None:
    spec = tmp_path / "opd8.toml"
    spec.write_text(OPD8)
    p = rehearse(spec, tmp_path / "keep", "--set", "distillation.n_gpus_per_node=4")
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("rehearsing opd: verl's main_ppo on 8 logical GPU(s)")
    assert "failed: opd: pools: ValueError: Total available GPUs 8.0 is less than total desired GPUs" \
        in p.stdout
    assert "cause (verl/single_controller/ray/base.py:240)" in p.stdout
    assert not left_running(tmp_path / "keep")


def test_a_rehearsal_stopped_while_ray_runs_leaves_nothing_running(tmp_path: Path) -> None:
    """SIGTERM to `whileai rehearse` once Ray's processes are up: every one of them is stopped."""
    import signal
    import time

    keep = tmp_path / "keep"
    p = subprocess.Popen([sys.executable, "-m", "whileai", "rehearse", str(ROOT / "examples" / "opd.toml"),
                          "-t", "verl", "--keep", str(keep)], cwd=ROOT, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    end = time.monotonic() + 300
    while time.monotonic() < end and p.poll() is None:
        if list(keep.glob("*/scratch/ray-temp")) and left_running(keep):
            break
        time.sleep(0.2)
    assert p.poll() is None, "the rehearsal ended before Ray's processes were seen"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "interrupted: every process the rehearsal started was stopped" in err
    assert not left_running(keep)


def test_a_rehearsal_past_its_timeout_fails_saying_so(tmp_path: Path) -> None:
    p = rehearse(ROOT / "examples" / "opd.toml", tmp_path / "keep", "--timeout", "3")
    assert p.returncode == 1 and "failed: opd: timed out after" in p.stdout, p.stdout + p.stderr
    assert "cause (0-opd/inside.log:" in p.stdout and "the rehearsal's --timeout came first" in p.stdout
    if list((tmp_path / "keep").glob("*/scratch/ray-temp")):
        assert not left_running(tmp_path / "keep")
