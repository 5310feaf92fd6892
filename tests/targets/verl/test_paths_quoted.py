"""A run folder whose path holds a space and a quote: run.sh hands verl each path as one argument
Hydra reads back as that path, the real bash agrees with whileai's reader (runsh.py), and verl's
own check accepts whileai's own run.sh (WHILEAI_VERL_PYTHON: a Python with verl 0.9.1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers import EXAMPLES, verl_python

from whileai.spec.load import load_spec
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import read

ROOT = Path(__file__).resolve().parents[3]
# a stand-in for python3 and torchrun: each call's argv, NUL-separated, one call a line
STAND_IN = '#!/bin/sh\n{ printf "%s\\0" "$(basename "$0")" "$@"; printf "\\n"; } >> "$ARGV_LOG"\n'


def written(kind: str, folder: Path) -> Path:
    c = compile(load_spec(EXAMPLES / f"{kind}.toml"), out=str(folder))
    for name, text in c.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def bash_argv(folder: Path, tmp_path: Path) -> list[list[str]]:
    """`bash run.sh` for real, with python3 and torchrun replaced: the argv of each call."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    for name in ("python3", "torchrun"):
        (bin_ / name).write_text(STAND_IN)
        (bin_ / name).chmod(0o755)
    log = tmp_path / "argv.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "ARGV_LOG": str(log)}
    done = subprocess.run(["bash", str(folder / "run.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.split("\0")[:-1] for line in log.read_text().split("\n") if line]


@pytest.mark.parametrize("kind", ["grpo", "sft"])
def test_paths_in_a_folder_with_a_space_and_a_quote_reach_verl_as_one_value(kind, tmp_path):
    folder = written(kind, tmp_path / "it's my run")
    calls = [argv for argv in bash_argv(folder, tmp_path) if "-m" in argv and
             any(a.startswith("verl.") for a in argv)]
    assert len(calls) == (2 if kind == "sft" else 1)
    here = str(folder)
    for argv in calls:
        paths = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv
                 if a.split("=", 1)[0].lstrip("+") in ("data.train_files", "data.val_files",
                                                       "data.output_path", "trainer.default_local_dir")}
        assert paths and all(v.startswith(f'"{here}/') and v.endswith('"') for v in paths.values()), paths
    # whileai's reader (whileai check, the recipe) reads what bash hands over, word for word
    read_back = [list(c.overrides) for c in read(folder, {"PWD": here})]
    assert read_back == [argv[argv.index("-m") + 2:] for argv in calls]
    assert all(c.unknown == () for c in read(folder, {"PWD": here}))


@pytest.mark.slow
def test_live_verls_check_accepts_whileais_run_sh_in_such_a_folder(tmp_path):
    python = verl_python()
    for kind in ("grpo", "sft"):
        folder = written(kind, tmp_path / kind / "it's my run")
        done = subprocess.run([python, "-m", "whileai", "check", str(folder)], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, (kind, done.stdout[-2000:], done.stderr[-2000:])
        assert done.stdout.count("verl 0.9.1 accepts it") == (2 if kind == "sft" else 1)
