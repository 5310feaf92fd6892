"""The prime-rl recipe as a subprocess: --dry-run plans; without a token, launch exits 4; any spec
files are arms; bad options end in one line, exit 2, nothing written."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai.launch import load_manifest

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "04-train" / "prime-rl" / "run.py"
MINE = ROOT / "tests" / "data" / "arms"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_TOKEN")}
    return subprocess.run([sys.executable, str(RECIPE), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_recipe_dry_run_then_launch_without_token(tmp_path: Path) -> None:
    p = run("--dry-run", "--out", str(tmp_path), "--steps", "20", "--repeats", "2")
    assert p.returncode == 0, p.stderr
    m = load_manifest(tmp_path / "rt")
    assert sorted(m.arms) == ["grpo", "grpo@2", "opd", "opd@2", "opsd", "opsd@2", "sft", "sft@2"]
    opd = m.arms["opd"].spec
    assert opd.teacher and opd.teacher_port == 8001 and opd.argv[-2:] == ["@", "opd.toml"]
    assert (tmp_path / "rt" / "opd" / "opd.toml").exists() and m.meta["steps"] == 20
    assert m.meta["comparisons"] == [["opd", "grpo"], ["opsd", "grpo"], ["sft", "grpo"], ["opd", "sft"]]
    assert m.meta["baseline"] == "grpo"
    assert opd.per_step == {"rollouts": 256, "prompts": 64, "samples": 4, "max_tokens": 8192,
                            "teacher": "teacher", "gpus": 2, "seats": 1}
    sft = m.arms["sft"].spec  # the off-policy arm: its teacher is served like OPD's
    assert sft.teacher == opd.teacher and sft.teacher_port == 8001 and sft.argv[-2:] == ["@", "sft.toml"]
    assert sft.per_step == {"rollouts": 256, "prompts": 64, "samples": 4, "max_tokens": 4096,
                            "teacher": "sampler", "gpus": 2, "seats": 1}
    assert "warning: budgets differ 8.0x in rollouts" in p.stdout
    p = run("--out", str(tmp_path), "--arms", "grpo")
    if importlib.util.find_spec("modal") is None:  # a [dev] install: one line naming the extra
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert "error: --on: 'modal' is not allowed" in p.stderr and "'.[modal]'" in p.stderr
    else:
        assert p.returncode == 4 and "AuthError" in p.stderr
    assert {a.state for a in load_manifest(tmp_path / "rt").arms.values()} == {"planned"}


def test_recipe_dry_run_prints_reports_and_validate_runs_offline(tmp_path: Path) -> None:
    p = run("--dry-run", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    for kind in ("grpo", "opsd", "opd", "sft"):  # the reports name the files written
        assert f"prime-rl config: {tmp_path / 'rt' / kind / kind}.toml" in p.stdout
    assert "(not written)" not in p.stdout
    assert "64 prompts x 4 rollouts = 256 rollouts per step" in p.stdout
    p = run("--validate", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(": ok (prime-rl 559b447") == 4
    assert "orchestrator.algo.type                             'sft'" in p.stdout
    assert "trainer.model.name" in p.stdout and "(shared model.name)" in p.stdout
    assert "orchestrator.batch_size                            256" in p.stdout


def test_own_spec_files_with_a_matched_budget(tmp_path: Path) -> None:
    specs = [str(p) for p in sorted(MINE.glob("*.toml"))]
    p = run(*specs, "--baseline", "baseline", "--budget", "rollouts=8192", "--pair",
            "distill:self-distill", "--dry-run", "--out", str(tmp_path), "--tag", "mine")
    assert p.returncode == 2 and p.stderr.startswith("error: data: ")  # prime-rl: no task files
    specs = []  # the same arms on a taskset package of the user's (prime-rl trains on packages),
    (tmp_path / "pkg").mkdir()  # with reverse KL (prime-rl's only OPD loss: another is refused)
    for f in sorted(MINE.glob("*.toml")):
        lines = [x for x in f.read_text().splitlines()
                 if not x.startswith(("data =", "reward =", "divergence ="))]
        text = "\n".join(lines).replace('taskset = "backwards"', 'taskset = "acme/backwards@0.1"')
        specs.append(str(tmp_path / "pkg" / f.name))
        Path(specs[-1]).write_text(text + "\n")
    p = run(*specs, "--baseline", "baseline", "--budget", "rollouts=8192", "--pair",
            "distill:self-distill", "--dry-run", "--out", str(tmp_path), "--tag", "mine")
    assert p.returncode == 0, p.stderr
    m = load_manifest(tmp_path / "mine")
    spent = {n: a.spec.steps * a.spec.per_step["rollouts"] for n, a in m.arms.items()}  # type: ignore[operator]
    assert spent == {"baseline": 8192, "distill": 8192, "self-distill": 8192, "small-group": 8192}
    assert m.meta["budget"] == "rollouts=8192" and ["distill", "self-distill"] in m.meta["comparisons"]
    assert "budget matched" in p.stdout and "warning: budgets differ" not in p.stdout
    toml = (tmp_path / "mine" / "self-distill" / "self-distill.toml").read_text()
    assert "weight_decay = 0.0" in toml  # the prime-rl override reaches prime-rl


@pytest.mark.parametrize("args, words", [
    (["--arms", "grpo,dpo"], ["--arms", "'dpo'", "grpo, opd, opsd, sft"]),
    (["--steps", "-3"], ["--steps", "'-3'", "whole number >= 1"]),
    (["--repeats", "0"], ["--repeats", "'0'", ">= 1"]),
    (["--budget", "gpus=3"], ["--budget", "'gpus=3'", "rollouts=N or tokens=N"]),
    (["--collect", "--tag", "nonexistent"], ["--tag", "'nonexistent'", "a tag launched before"]),
    (["--collect"], ["--tag", "'rt'", "none yet"]),
    ([str(MINE / "distill.toml")], ["--baseline", "no GRPO arm", "docs/research.md R17"]),
    ([str(ROOT / "examples" / "grpo.toml"), str(MINE / "distill.toml")], ["arms:", "taskset", "student"]),
    (["--baseline", "ppo"], ["--baseline", "'ppo'", "an arm (grpo, opd, opsd, sft) or a spec file"]),
    (["--pair", "opd"], ["--pair", "'opd'", "A:B"]),
])
def test_bad_options_are_one_line_exit_2_nothing_written(tmp_path: Path, args: list[str],
                                                         words: list[str]) -> None:
    out = tmp_path / "runs"
    p = run(*args, "--out", str(out))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: ") and "Traceback" not in p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    assert not out.exists() and p.stdout == ""


def test_collect_before_any_launch_writes_nothing(tmp_path: Path) -> None:
    assert run("--dry-run", "--out", str(tmp_path)).returncode == 0
    before = sorted(p.name for p in (tmp_path / "rt").iterdir())
    p = run("--collect", "--out", str(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "none launched" in p.stderr and "'rt'" in p.stderr
    assert sorted(p.name for p in (tmp_path / "rt").iterdir()) == before  # no results.json
    manifest = json.loads((tmp_path / "rt" / "manifest.json").read_text())
    assert {a["state"] for a in manifest["arms"].values()} == {"planned"}


def test_recipe_rehearse_needs_local_validate_and_the_environment(tmp_path: Path) -> None:
    p = run("--rehearse", "--out", str(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--validate" in p.stderr, p.stderr
    env_less = {k: v for k, v in os.environ.items() if k != "WHILEAI_REHEARSE_PYTHON"}
    argv = [sys.executable, str(RECIPE), "--validate", "--rehearse", "--arms", "grpo", "--out", str(tmp_path)]
    p = subprocess.run(argv, capture_output=True, text=True, env=env_less, timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and "WHILEAI_REHEARSE_PYTHON" in p.stderr.splitlines()[-1], p.stderr


def test_validate_refuses_an_arm_its_modal_container_cannot_hold(tmp_path: Path) -> None:
    """An OPD arm on 4 GPUs with a teacher on GPUs of its own, in a recipe whose arms each run in
    a 2-GPU Modal container: --validate refuses it in one line naming the arm, the GPUs it needs
    and the container's (issue 40, item 9); a container list that holds it lets it through."""
    head = 'taskset = "reverse-text"\nmodel = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'
    (tmp_path / "grpo.toml").write_text(head + '[method]\ntype = "grpo"\n')
    (tmp_path / "big.toml").write_text(head + 'gpus = 4\n[method]\ntype = "opd"\n'
                                       'teacher = "vllm:Qwen/Qwen3-32B@http://localhost:8001/v1"\n')
    specs = [str(tmp_path / "grpo.toml"), str(tmp_path / "big.toml")]
    p = run(*specs, "--validate", "--out", str(tmp_path / "out"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "arm big needs 6 GPUs" in p.stderr and "the 2 GPUs of its Modal container" in p.stderr
    assert not (tmp_path / "out").exists()  # refused before anything is written
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_TOKEN")}
    ok = subprocess.run([sys.executable, str(RECIPE), *specs, "--validate", "--out", str(tmp_path / "o8")],
                        capture_output=True, text=True, env=env | {"WHILEAI_MODAL_GPUS": "H100:8"},
                        timeout=120)
    assert ok.returncode == 0, ok.stderr
    from whileai.launch.executor import container_gpus

    assert container_gpus(["H100:2", "H200:2", "A100-80GB:2"]) == 2
    assert container_gpus(["H100:8", "A100"]) == 1  # Modal may start any choice: the fewest
