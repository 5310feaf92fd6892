"""Every interruption and every empty result says what happened: Ctrl-C in preflight and inspect is
one line and exit code 130; an interrupted tiny-model build leaves no temporary folder, and a later
build removes those of processes that died; `inspect --run` on a folder with nothing finished
exits 1 naming what is missing and writes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.app import app

runner = CliRunner()


def _interrupt(*_: Any, **__: Any) -> Any:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    "where,args",
    [
        ("whileai.preflight.run.preflight", ["preflight", str(EXAMPLES / "opd.toml")]),
        (
            "whileai.tokenview.app.run_inspect",
            ["inspect", str(EXAMPLES / "opd.toml"), "--local-student", "x"],
        ),
        ("whileai.tokenview.runapp.run_cli", ["inspect", "--run", "somewhere"]),
    ],
)
def test_ctrl_c_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, where: str, args: list[str]
) -> None:
    module, _, name = where.rpartition(".")
    monkeypatch.setattr(__import__(module, fromlist=[name]), name, _interrupt)
    r = runner.invoke(app, args)
    assert r.exit_code == 130, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("interrupted: whileai "), r.stderr
    assert r.stdout == ""


def test_an_interrupted_tiny_build_leaves_no_temporary_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch")
    from whileai.vocab import tiny

    def build(folder: Path, **_: Any) -> Any:
        (folder / "student").mkdir(parents=True)  # half a build, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(tiny, "build", build)
    with pytest.raises(KeyboardInterrupt):
        tiny.cached(["a b c"], [("a", "b")], {}, root=tmp_path)
    assert list((tmp_path / "tiny").iterdir()) == []  # once .<key>.<pid>.tmp stayed for good


def test_a_later_build_removes_the_temporary_folders_of_dead_processes(tmp_path: Path) -> None:
    from whileai.vocab.tiny import sweep_stale

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead = tmp_path / f".0123456789abcdef.{done.stdout.strip()}.tmp"
    alive = tmp_path / f".0123456789abcdef.{__import__('os').getpid()}.tmp"
    for d in (dead, alive):
        (d / "student").mkdir(parents=True)
    assert sweep_stale(tmp_path) == [dead]
    assert not dead.exists() and alive.exists()  # a build still running keeps its folder


def _run_folder(root: Path, steps: dict[int, tuple[str, bool]]) -> Path:
    """A run folder whose token_exports hold `steps`: step → (rank file text, STABLE marker)."""
    for step, (text, stable) in steps.items():
        d = root / "token_exports" / f"step_{step}"
        d.mkdir(parents=True)
        (d / "rank_0.jsonl").write_text(text)
        if stable:
            (d / "STABLE").touch()
    return root


@pytest.mark.parametrize(
    "steps,missing",
    [
        (
            {0: ("junk\n", True)},
            "the finished step 0 holds no valid sequence (first: step_0/rank_0.jsonl:1: not JSON",
        ),
        ({0: ("", False), 1: ("", False)}, "steps 0, 1 have no STABLE marker yet"),
    ],
)
def test_inspect_run_with_nothing_finished_exits_1_naming_what_is_missing(
    tmp_path: Path, steps: dict[int, tuple[str, bool]], missing: str
) -> None:
    run = _run_folder(tmp_path / "run", steps)
    out = tmp_path / "out"
    r = runner.invoke(app, ["inspect", "--run", str(run), "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith(f"error: --run {run}: no finished step to read: {missing}"), r.stderr
    assert r.stderr.count("\n") == 1 and ": 0\n" not in r.stderr and not out.exists()


def test_the_note_on_unfinished_steps_names_them_as_steps(tmp_path: Path) -> None:
    from whileai.tokenview.runsummary import steps_text, summarise

    assert steps_text([0]) == "step 0" and steps_text(list(range(12))).endswith("8, 9, ...")
    run = _run_folder(tmp_path / "run", {0: ("", False)})
    note = next(n for n in summarise(run).notes if "STABLE" in n)
    assert note.endswith("mid-step): step 0"), note  # once "...: 0"


def test_ctrl_c_in_a_hot_command_is_one_line_and_exit_130(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.cli import main
    from whileai.cli.commands import HOT

    monkeypatch.setitem(HOT, "compile", (HOT["compile"][0], _interrupt))
    monkeypatch.setattr(sys, "argv", ["whileai", "compile", str(EXAMPLES / "opd.toml")])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 130 and capsys.readouterr().err == "interrupted: whileai compile stopped\n"


def test_ctrl_c_during_compile_check_names_the_files_written_and_not_checked(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`compile A B -o DIR --check`: the files are written, then checked; Ctrl-C during the check
    leaves them (as a failed check does) and its one line names each as written and not checked."""
    from whileai.cli import main
    from whileai.targets import registry

    kind = type(registry.get("prime-rl"))

    def verify(self: Any, compiled: list[Any]) -> list[tuple[bool, str]]:
        if compiled:  # the check itself (an empty list: whether it can run here)
            raise KeyboardInterrupt
        return []

    monkeypatch.setattr(kind, "verify", verify)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["whileai", "compile", str(EXAMPLES / "opd.toml"),
                                      str(EXAMPLES / "grpo.toml"), "-o", str(out), "--check", "--json"])
    with pytest.raises(SystemExit) as done:
        main()
    err = capsys.readouterr().err
    assert done.value.code == 130 and err.count("\n") == 1, err
    assert err.startswith("interrupted: whileai compile stopped during --check; written and not checked: ")
    for name in ("opd.toml", "grpo.toml"):
        assert (out / name).is_file() and str(out / name) in err
