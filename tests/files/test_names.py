"""One name for every file whileai writes (whileai.files.names): the file a command's line names
is the file another command writes for the same spec (issue 40, item 2)."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from whileai.cli.app import app

# a teacher too big to share GPU 0: served from its own `uv run inference @ <file>` config
OPD = """taskset = "gsm8k"
model = "Qwen/Qwen3-0.6B"
steps = 10
prompts = 8
gpus = 2
[method]
type = "opd"
teacher = "vllm:Qwen/Qwen3-32B@http://localhost:8001/v1"
"""
GRPO = OPD.split("[method]")[0] + '[method]\ntype = "grpo"\n'


def _spec(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_preflight_names_the_teacher_file_compile_writes(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "opd-gsm8k.toml", OPD)
    pre = CliRunner().invoke(app, ["preflight", str(spec), "--timeout", "2"])
    served = re.findall(r"uv run inference @ (\S+)", pre.output)
    assert served == ["opd-gsm8k.teacher.toml"], pre.output
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["compile", str(spec), "-o", f"{out}/"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "opd-gsm8k.teacher.toml", "opd-gsm8k.toml"]
    assert (out / served[0]).is_file()


def test_arms_name_files_after_the_spec_as_compile_does(tmp_path: Path) -> None:
    opd = _spec(tmp_path, "opd-gsm8k.toml", OPD)
    grpo = _spec(tmp_path, "grpo-gsm8k.toml", GRPO)
    res = CliRunner().invoke(app, ["arms", str(grpo), str(opd), "--repeats", "2", "-o",
                                   str(tmp_path / "arms")])
    assert res.exit_code == 0, res.output
    for arm in ("opd-gsm8k", "opd-gsm8k@2"):
        folder = tmp_path / "arms" / arm
        assert sorted(p.name for p in folder.iterdir()) == ["opd-gsm8k.teacher.toml", "opd-gsm8k.toml"]
    assert sorted(p.name for p in (tmp_path / "arms" / "grpo-gsm8k").iterdir()) == ["grpo-gsm8k.toml"]
