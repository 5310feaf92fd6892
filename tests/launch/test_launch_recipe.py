"""The prime-rl recipe as a subprocess: --dry-run plans; without a token, launch exits 4."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from whileai.launch import load_manifest

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "04-train" / "prime-rl" / "run.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_TOKEN")}
    return subprocess.run([sys.executable, str(RECIPE), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_recipe_dry_run_then_launch_without_token(tmp_path: Path) -> None:
    p = run("--dry-run", "--out", str(tmp_path), "--steps", "20", "--repeats", "2")
    assert p.returncode == 0, p.stderr
    m = load_manifest(tmp_path / "rt")
    assert sorted(m.arms) == ["grpo", "grpo@2", "opd", "opd@2", "opsd", "opsd@2"]
    opd = m.arms["opd"].spec
    assert opd.teacher and opd.teacher_port == 8001 and opd.argv[-2:] == ["@", "opd.toml"]
    assert (tmp_path / "rt" / "opd" / "opd.toml").exists() and m.meta["steps"] == 20
    p = run("--out", str(tmp_path), "--arms", "grpo")
    assert p.returncode == 4 and "AuthError" in p.stderr
    assert {a.state for a in load_manifest(tmp_path / "rt").arms.values()} == {"planned"}


def test_recipe_dry_run_prints_reports_and_validate_runs_offline(tmp_path: Path) -> None:
    p = run("--dry-run", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    for kind in ("grpo", "opsd", "opd"):
        assert f"prime-rl config: {kind}.toml" in p.stdout
    assert "64 prompts x 4 rollouts = 256 rollouts per step" in p.stdout
    p = run("--validate", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(": ok (prime-rl 559b447") == 3
    assert "trainer.model.name" in p.stdout and "(shared model.name)" in p.stdout
    assert "orchestrator.batch_size                            256" in p.stdout
