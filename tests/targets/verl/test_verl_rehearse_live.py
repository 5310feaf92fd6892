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
    assert p.returncode == 0, p.stdout + p.stderr
    assert not left_running(tmp_path / "keep")


def test_a_teacher_pool_larger_than_the_node_fails_with_verls_message(tmp_path: Path) -> None:
    spec = tmp_path / "opd8.toml"
    spec.write_text(OPD8)
    # whileai carves the teacher's pool out of the node (trainer 4 + teacher 4): the trainer set
    # back to the whole node re-opens the fault of asking Ray for more GPUs than the node has
    p = rehearse(spec, tmp_path / "keep", "--set", "trainer.n_gpus_per_node=8")
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


STRICT = ("def verl_strict(data_source, solution_str, ground_truth):\n"
          "    return float(ground_truth in solution_str)\n")
# the planted faults, each re-opened on today's fixed main through --set (spec, sets, what
# the verdict must name: the failing step and verl's own words)
FAULTS = {
    "sft-switch-off-qwen3": ("examples/sft.toml", ["sft.data.ignore_input_ids_mismatch=false"],
                             "data: failed", "AssertionError"),
    "pool-larger-than-node": ("opd8", ["trainer.n_gpus_per_node=8"], "pools: failed",
                              "Total available GPUs 8.0 is less than total desired GPUs"),
    "reward-rejects-verl-keys": ("examples/grpo.toml", [
        "reward.custom_reward_function.path=$PWD/strict.py",
        "reward.custom_reward_function.name=verl_strict"],
        "reward: failed", "unexpected keyword argument 'extra_info'"),
    "rows-without-prompt-column": ("examples/grpo.toml", ["data.prompt_key=question"], "data: failed",
                                   "KeyError: 'question'"),
    "teacher-context-too-short": ("examples/opd.toml",
                                  ["distillation.teacher_models.teacher_model.inference.max_model_len=4096"],
                                  "loss: failed", "max_model_len"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_planted_fault_fails_the_rehearsal_naming_its_cause(fault: str, tmp_path: Path) -> None:
    spec, sets, step, words = FAULTS[fault]
    if spec == "opd8":
        (tmp_path / "opd8.toml").write_text(OPD8)
        path = tmp_path / "opd8.toml"
    else:
        path = ROOT / spec
    args = [a for s in sets for a in ("--set", s)]
    if fault == "reward-rejects-verl-keys":  # the user's module beside the run's reward.py
        keep = tmp_path / "keep"
        p = subprocess.run([sys.executable, "-m", "whileai", "compile", str(path), "-t", "verl", "-o",
                            str(tmp_path / "run"), *args], capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        assert p.returncode == 0, p.stderr
        (tmp_path / "run" / "strict.py").write_text(STRICT)
        p = subprocess.run([sys.executable, "-m", "whileai", "rehearse", str(tmp_path / "run"), "-t", "verl",
                            "--keep", str(keep)], capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    else:
        p = rehearse(path, tmp_path / "keep", *args)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"    {step}" in p.stdout and words in p.stdout, p.stdout
    assert "Traceback" not in p.stdout + p.stderr
    if list((tmp_path / "keep").glob("*/scratch/ray-temp")):  # Ray started (a teacher context too
        assert not left_running(tmp_path / "keep")  # short is refused by verl before Ray starts)
