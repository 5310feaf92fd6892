"""preflight's machine checks say where they ran (issue 40, item 8): a one-node run needs its
GPUs on this machine (no GPU here is a FAIL, unless --elsewhere says this machine only submits
it); on several nodes this is the login node, and the GPU and disk checks both say so; the disk
estimate names each target's own weight copies; a target without a checkout refuses --checkout."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.preflight.report import PreflightReport
from whileai.preflight.run import preflight


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with no GPU: no nvidia-smi on PATH (git stays reachable)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None if name == "nvidia-smi" else
                        "/usr/bin/" + name)


def grpo(tmp_path: Path, **fields: object) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-0.6B", output_dir=str(tmp_path),
                       method=wai.GRPO(), **fields)


def check(report: PreflightReport, name: str) -> tuple[str, str]:
    c = next(c for c in report.checks if c.name == f"machine: {name}")
    return c.status, c.detail


@pytest.mark.parametrize("target", ["prime-rl", "verl"])
def test_one_node_without_a_gpu_is_not_ready_unless_it_only_submits(tmp_path: Path, target: str) -> None:
    here = preflight(grpo(tmp_path, gpus=2), target=target, timeout=2)
    status, detail = check(here, "GPUs")
    assert status == "FAIL" and "no nvidia-smi here" in detail and "--elsewhere" in detail
    assert here.exit_code == 1
    away = preflight(grpo(tmp_path, gpus=2), target=target, timeout=2, where="elsewhere")
    status, detail = check(away, "GPUs")
    assert status == "skip" and detail.startswith("not checked here, on a machine that only submits")
    status, detail = check(away, "disk")
    assert status == "ok" and detail.startswith("checked here, on a machine that only submits")
    assert away.exit_code == 0, away.lines()


def test_the_cli_says_elsewhere(tmp_path: Path) -> None:
    spec = tmp_path / "grpo.toml"
    spec.write_text(f'taskset = "reverse-text"\nmodel = "Qwen/Qwen3-0.6B"\noutput_dir = "{tmp_path}"\n'
                    '[method]\ntype = "grpo"\n')
    assert CliRunner().invoke(app, ["preflight", str(spec), "--timeout", "2"]).exit_code == 1
    ok = CliRunner().invoke(app, ["preflight", str(spec), "--timeout", "2", "--elsewhere"])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("target", ["prime-rl", "verl"])
def test_several_nodes_every_machine_check_says_login_node(tmp_path: Path, target: str) -> None:
    there = preflight(grpo(tmp_path, nodes=2), target=target, timeout=2)  # the folder is here
    gpus, disk = check(there, "GPUs"), check(there, "disk")
    assert gpus[0] == "skip" and gpus[1].startswith("not checked here, on the login node"), gpus
    assert disk[0] == "ok" and disk[1].startswith("checked here, on the login node"), disk
    gone = preflight(grpo(tmp_path / "shared" / "runs", nodes=2), target=target, timeout=2)
    disk = check(gone, "disk")  # not here: this machine's / is no measure of the shared folder
    assert disk[0] == "skip" and disk[1].startswith("not checked here, on the login node"), disk
    assert gone.exit_code == 0, gone.lines()


def test_each_target_names_its_own_weight_copies_and_checkout(tmp_path: Path) -> None:
    def disk(target: str, **kw: object) -> str:
        report = preflight(grpo(tmp_path, gpus=2), target=target, timeout=2, where="elsewhere", **kw)
        assert target == "prime-rl" or not any("prime-rl" in c.name for c in report.checks)
        return check(report, "disk")[1]

    assert "2 weight broadcast(s)" in disk("prime-rl")
    trl = disk("trl", cpu=True)
    assert "1 final save(s)" in trl and "broadcast" not in trl
    verl = disk("verl")
    assert "broadcast" not in verl and "rollouts of 0" not in verl
    runner = CliRunner()
    spec = tmp_path / "grpo.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "Qwen/Qwen3-0.6B"\n[method]\ntype = "grpo"\n')
    bad = runner.invoke(app, ["preflight", str(spec), "-t", "verl", "--checkout", str(tmp_path)])
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert bad.stderr.startswith("error: --checkout") and "verl" in bad.stderr


def test_preflights_shared_code_names_no_target_in_what_it_prints() -> None:
    """What a check says of one target comes from that target (its `probes` and `machine`): no
    string the shared preflight code prints names prime-rl, TRL or verl (docstrings aside)."""
    import ast

    import whileai.preflight as pkg

    found = []
    for path in Path(pkg.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if any(w in node.value for w in ("prime-rl", "prime_rl", "TRL", "verl")):
                    found.append(f"{path.name}:{node.lineno}: {node.value[:60]}")
    assert found == []
