"""Every command's long lines fit the terminal (issue 40, item 12): preflight and migrate wrap to
COLUMNS at spaces, a key never parted from its value; explain says when its table does not fit,
and keeps `--set` with its value in the rich table."""

from __future__ import annotations

import json
import re

import pytest
from helpers import EXAMPLES, ROOT
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.report.wrap import breaks, para

runner = CliRunner()
WIDTHS = [80, 120]
OLD = json.loads((ROOT / "tests/fixtures/prime-rl/migrate-history.json").read_text())[17]["old_toml"]


def run(width: int, *args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": str(width)})
    return r.exit_code, r.stdout


def fits(text: str, width: int) -> None:
    """Each line fits, or is a single word wider than the line (a URL stays whole)."""
    long = [line for line in text.splitlines()
            if len(line.rstrip()) > width and len(line.split()) > 1]
    assert not long, f"{len(long)} line(s) wider than {width}: {long[0]!r}"


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def unsplit_flags(text: str) -> None:
    """No line ends with a command-line flag whose value starts the next line (a shell command's
    ` \\` continuation included)."""
    lines = text.splitlines()
    for a, b in zip(lines, lines[1:], strict=False):
        a = a.rstrip().removesuffix(" \\")
        if re.search(r"\s--[\w.-]+$", a) and b.strip() and not b.strip().startswith("-"):
            raise AssertionError(f"a flag parted from its value: {a!r} / {b!r}")


@pytest.mark.parametrize("width", WIDTHS)
def test_preflight_wraps_to_the_terminal(width: int) -> None:
    code, out = run(width, "preflight", str(EXAMPLES / "opd.toml"), "--timeout", "1")
    assert code in (0, 1)
    fits(out, width)
    unsplit_flags(out)
    _, raw = run(width, "preflight", str(EXAMPLES / "opd.toml"), "--timeout", "1", "--json")
    joined = out.replace(" \\\n", " ")  # a shell command's continuations: the words as one line
    for check in json.loads(raw)["checks"]:  # every word of every check is there, whole
        assert squeeze(f"{check['name']}: {check['detail']}") in squeeze(joined)
    assert out.splitlines()[1].startswith("     ")  # a continuation hangs under the check's name


@pytest.mark.parametrize("width", WIDTHS)
def test_migrate_wraps_its_account_not_the_toml(width: int, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old = tmp_path / "old.toml"
    old.write_text(OLD)
    code, out = run(width, "migrate", str(old), "--allow-drops", "--force", "-o", str(tmp_path / "new.toml"))
    assert code == 0, out
    fits(out, width)
    assert any(line.startswith("      ") for line in out.splitlines())  # a change wrapped under itself
    code, wide = run(1000, "migrate", str(old), "--allow-drops", "--force", "-o", str(tmp_path / "n2.toml"))
    assert squeeze(wide.rsplit("wrote ", 1)[0]) == squeeze(out.rsplit("wrote ", 1)[0])  # words unchanged


def test_explain_says_when_its_table_does_not_fit() -> None:
    _, narrow = run(80, "explain", str(EXAMPLES / "opd.toml"), "--rich")
    assert narrow.splitlines()[1] == "(one key a line: the table does not fit 80 columns)"
    _, wide = run(200, "explain", str(EXAMPLES / "opd.toml"), "--rich")
    assert "one key a line" not in wide


@pytest.mark.parametrize("command", ["explain", "compile"])
def test_the_rich_table_keeps_set_with_its_value(command: str) -> None:
    """The teacher's serve line (`--vllm.max-model-len 10241`, ...) in a rich cell: no line ends
    in a flag whose value went to the next line."""
    import re

    _, out = run(120, command, str(EXAMPLES / "opd.toml"), "--rich")
    kept = "--vllm.max-model-len 10241" if command == "compile" else "inference.vllm.max_lora_rank = 32"
    assert kept in out
    flag = re.compile(r"-{1,2}[A-Za-z][\w.-]*")
    assert not [line for line in out.splitlines() if line.split() and flag.fullmatch(line.split()[-1])]
    fits(out, 120)


def test_a_flag_and_a_key_stay_with_their_values() -> None:
    text = "only vLLM sampling takes one, --set inference.vllm.seed=N and seq_len = 4096 here"
    for width in range(30, 60):
        lines = para(text, width, "", "  ")
        assert any("--set inference.vllm.seed=N" in line for line in lines), lines
        assert any("seq_len = 4096" in line for line in lines), lines
        broken = breaks(text, width)
        assert len(broken) == len(text) and "--set inference.vllm.seed=N" in broken
