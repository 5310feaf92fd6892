"""One write plan: targets, collisions, special files, ownership per path, all-or-nothing commit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, seed_run
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.files import write

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_readme_trl_command_recompiles_the_run_directory_in_place(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "opd"
    for _ in range(3):  # the README's command, run again and again
        code, _, err = cli("compile", str(EXAMPLES / "opd.toml"), "-b", "trl", "-o", str(out))
        assert code == 0, err
    assert not (out / "opd").exists()  # never runs/opd/opd
    assert sorted(tree(out)) == [write.LISTING, "README.md", "accelerate.yaml", "config.yaml",
                                 "data/test.jsonl", "data/train.jsonl"]
    listing = (out / write.LISTING).read_text()
    assert "config.yaml" in listing and listing.startswith("# written by whileai")
    r = subprocess.run(["sha256sum", "-c", write.LISTING], cwd=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr  # the listing is sha256sum's own format


def test_a_run_directory_drops_what_the_new_compile_no_longer_makes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    wai.compile(seed_run("grpo"), "trl", out=out)
    assert (out / "reverse_text.py").exists()
    (out / "notes.txt").write_text("mine")
    wai.compile(seed_run("opsd"), "trl", out=out)
    assert not (out / "reverse_text.py").exists() and (out / "train.py").exists()
    assert (out / "notes.txt").read_text() == "mine"  # never whileai's


def test_two_specs_with_one_stem_collide_before_anything_is_written(tmp_path: Path) -> None:
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "x.toml").write_text((EXAMPLES / "grpo.toml").read_text())
    for backend in ("prime-rl", "trl"):
        code, _, err = cli("compile", str(tmp_path / "a/x.toml"), str(tmp_path / "b/x.toml"),
                           "-b", backend, "-o", str(tmp_path / "out"))
        assert code == 2 and "same name 'x'" in err and err.count("\n") == 1
        assert not (tmp_path / "out").exists()


def test_one_toml_name_for_two_specs_is_refused(tmp_path: Path) -> None:
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opd.toml"), "-o",
                       str(tmp_path / "two.toml"))
    assert code == 2 and "a directory when compiling 2 specs" in err
    assert not (tmp_path / "two.toml").exists()


def test_a_file_that_merely_mentions_the_marker_is_not_whileais(tmp_path: Path) -> None:
    out = tmp_path / "cfg.toml"
    out.write_text("# written by whileai 0.1.0 for prime-rl -- and then my own edits\n")
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(out))
    assert code == 2 and "whileai did not write it" in err and "--force" in err
    assert out.read_text().endswith("my own edits\n")


def test_a_file_whileai_wrote_then_someone_edited_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "cfg.toml"
    assert cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(out))[0] == 0
    assert cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(out))[0] == 0  # unchanged: ours
    out.write_text(out.read_text() + "# tuned by hand\n")
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(out))
    assert code == 2 and "changed since whileai wrote it" in err
    assert out.read_text().endswith("# tuned by hand\n")
    assert cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(out), "--force")[0] == 0


def test_toml_files_of_several_runs_share_a_folder(tmp_path: Path) -> None:
    assert cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(tmp_path / "grpo.toml"))[0] == 0
    assert cli("compile", str(EXAMPLES / "opd.toml"), "-o", str(tmp_path / "opd.toml"))[0] == 0
    assert cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(tmp_path / "grpo.toml"))[0] == 0
    listing = (tmp_path / write.LISTING).read_text()
    assert "  grpo.toml\n" in listing and "  opd.toml\n" in listing  # one never drops the other


@pytest.mark.parametrize("kind", ["fifo", "symlink", "dir"])
def test_special_files_are_refused_and_never_opened(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "x.toml"
    target = tmp_path / "elsewhere.toml"
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "symlink":
        target.write_text("keep")
        out.symlink_to(target)
    else:
        out.mkdir()
        (out / "grpo.toml").mkdir()  # a folder where the file would go
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(out), "--force")
    assert code == 2 and err.count("\n") == 1
    assert kind != "symlink" or target.read_text() == "keep"


def test_a_fifo_as_output_never_hangs(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.toml")
    r = subprocess.run([sys.executable, "-m", "whileai", "compile", str(EXAMPLES / "grpo.toml"), "-o",
                        str(tmp_path / "x.toml")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_a_failure_halfway_through_the_commit_puts_everything_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    wai.compile(seed_run("grpo"), "trl", out=out)
    before = tree(out)
    real, calls = os.replace, []

    def flaky(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device", str(dst))
        real(src, dst)

    monkeypatch.setattr(write.os, "replace", flaky)
    with pytest.raises(wai.SpecError, match="No space left"):
        wai.compile(seed_run("grpo", steps=7), "trl", out=out)
    monkeypatch.setattr(write.os, "replace", real)
    assert tree(out) == before  # the old run directory, byte for byte: no config.yaml of the new one
    assert not [p for p in out.rglob(".*") if p.name != write.LISTING]  # no temporary files
    fresh = tmp_path / "fresh"
    monkeypatch.setattr(write.os, "replace", flaky)
    calls.clear()
    with pytest.raises(wai.SpecError):
        wai.compile(seed_run("grpo"), "trl", out=fresh)
    assert not fresh.exists()  # the folders it made are gone too


def test_a_bad_second_spec_leaves_the_first_unwritten(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text((EXAMPLES / "grpo.toml").read_text() + "steps = 0\n")
    for backend in ("prime-rl", "trl"):
        code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), str(bad), "-b", backend, "-o",
                           str(tmp_path / "out"))
        assert code == 2 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("out,words", [
    (123, "a path .str or os.PathLike."), ("a\x00b.toml", "control characters"),
    ("x" * 300 + ".toml", "at most 255 bytes"), (["o.toml"], "a path"), ("", "non-empty"),
])
def test_api_out_is_checked(chdir_tmp: Path, out: object, words: str) -> None:
    with pytest.raises(wai.SpecError, match=words):
        wai.compile(seed_run("grpo"), out=out)  # type: ignore[arg-type]
    assert list(chdir_tmp.iterdir()) == []


def test_api_writes_through_the_same_plan(chdir_tmp: Path) -> None:
    c = wai.compile(seed_run("grpo"), out="cfg.toml")
    assert c.out == "cfg.toml" and str(c).splitlines()[0] == "prime-rl config: cfg.toml"
    assert "cfg.toml" in (chdir_tmp / write.LISTING).read_text()
    with pytest.raises(wai.SpecError, match="one destination per spec"):
        wai.compile_all([seed_run("grpo"), seed_run("grpo", steps=3)], out="d")
    assert [c.out for c in wai.compile_all([seed_run("grpo"), seed_run("grpo", steps=3)],
                                           names=["a", "b"], out="d")] == ["d/a.toml", "d/b.toml"]
