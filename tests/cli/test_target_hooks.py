"""`whileai rehearse` and `whileai migrate` go through the target's hooks (whileai.targets.hooks):
a target without one says so in one line; prime-rl's hooks are light to import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.targets import registry

ROOT = Path(__file__).parents[2]
SPEC = ROOT / "examples" / "grpo.toml"
NOT_REHEARSABLE = [n for n in registry.names() if registry.get(n).rehearsal is None]
NOTHING_TO_MIGRATE = [n for n in registry.names() if registry.get(n).migration is None]


def test_the_hooks_are_where_the_targets_say() -> None:
    assert registry.get("prime-rl").rehearsal is not None and registry.get("prime-rl").migration is not None
    assert registry.get("verl").rehearsal is not None  # verl's own code on a CPU (targets/verl/rehearse/)
    assert "trl" in NOT_REHEARSABLE and {"trl", "verl"} <= set(NOTHING_TO_MIGRATE)


@pytest.mark.parametrize("name", NOT_REHEARSABLE)
def test_rehearse_refuses_a_target_without_a_rehearsal_in_one_line(name: str) -> None:
    r = CliRunner().invoke(app, ["rehearse", str(SPEC), "-b", name])
    assert r.exit_code == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.output
    assert r.stderr == (f"error: --target: {name} is not rehearsable; a rehearsal runs a target's own "
                        "launcher on the CPU; rehearsable: prime-rl, verl\n")
    r = CliRunner().invoke(app, ["rehearse", "--setup", str(ROOT), "-b", name])  # --setup too
    assert r.exit_code == 2 and f"{name} is not rehearsable" in r.stderr, r.output


@pytest.mark.parametrize("name", NOTHING_TO_MIGRATE)
def test_migrate_has_nothing_to_migrate_for_a_target_without_a_migration(name: str, tmp_path: Path) -> None:
    out = tmp_path / "new.toml"
    r = CliRunner().invoke(app, ["migrate", str(SPEC), "-b", name, "-o", str(out)], env={"COLUMNS": "1000"})
    assert r.exit_code == 0 and r.stderr == "", r.output
    assert r.stdout == (f"nothing to migrate for {name}: whileai writes its files for one release "
                        "(migrate carries older files of prime-rl to the pin)\n")
    assert not out.exists()


def test_an_unknown_target_is_one_line_for_both() -> None:
    for cmd in ("rehearse", "migrate"):
        r = CliRunner().invoke(app, [cmd, str(SPEC), "-b", "nope"])
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "one of prime-rl, trl" in r.stderr, r.output


def test_migrate_through_the_hook_still_refuses_a_spec() -> None:
    r = CliRunner().invoke(app, ["migrate", str(SPEC)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "this is a whileai spec" in r.stderr, r.output


def test_prime_rl_target_imports_its_hooks_without_their_work() -> None:
    code = ("import sys, whileai.targets.prime_rl.target as t; "
            "assert t.TARGET.rehearsal is not None and t.TARGET.migration is not None; "
            "print(sorted(m for m in sys.modules if m in {'tomlkit', 'whileai.errors', "
            "'whileai.targets.prime_rl.migrate.core', 'whileai.targets.prime_rl.rehearse.run', "
            "'whileai.targets.prime_rl.rehearse.env', 'whileai.rehearse.verdict'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"
