"""Reports a person can read at 80, 100 and 120 columns: plain (a pipe, a log) and --rich, and
explain / methods / rules when piped. Every line fits; every read's field and value is there."""

from __future__ import annotations

import re

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.report.text import fmt, grouped_reads
from whileai.spec.load import load_spec

runner = CliRunner()
WIDTHS = [80, 100, 120]


def cli(width: int, *args: str) -> str:
    r = runner.invoke(app, list(args), env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.stderr
    return r.stdout


def fits(text: str, width: int) -> None:
    long = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not long, f"{len(long)} line(s) wider than {width}: {long[0]!r}"


def squeeze(text: str) -> str:
    """The text with every run of whitespace (a wrap, a hanging indent) as one space."""
    return re.sub(r"\s+", " ", text)


def compiled(name: str):  # type: ignore[no-untyped-def]
    from whileai.api import compile

    return compile(load_spec(EXAMPLES / name), "prime-rl")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["opd.toml", "grpo.toml", "sft.toml", "opsd.toml"])
def test_plain_report_fits_with_one_read_per_line(width: int, name: str) -> None:
    text = cli(width, "compile", str(EXAMPLES / name), "--plain")
    fits(text, width)
    lines = text.splitlines()
    assert lines[0].startswith("prime-rl config: ") and lines[1].startswith(f"  method {name[:-5]}")
    assert "  reads:" in lines and not any(line.startswith("  reads: ") for line in lines)
    flat = squeeze(text)
    c = compiled(name)
    for r in grouped_reads(c.reads):  # each read starts its own line, its value is there
        assert any(line.startswith(f"    {r.field} -> ") for line in lines), r.field
        assert f"= {fmt(r.value)}" in flat, (r.field, r.value)
    for ig in c.ignores:
        assert any(line.startswith(f"    {ig.field}={fmt(ig.value)}: ") for line in lines)
    for w in c.warnings:
        assert f"warning [{w.rule}]: {squeeze(w.message)}" in flat


@pytest.mark.parametrize("width", WIDTHS)
def test_rich_report_keeps_field_path_and_value_visible(width: int) -> None:
    text = cli(width, "compile", str(EXAMPLES / "opd.toml"), "--rich")
    fits(text, width)
    assert "\\n" not in text  # a line break in a cell is a break, never a literal \n
    assert "…" not in text  # nothing cut: long names fold onto the next line instead
    table = text.split("\nreads", 1)[1].split("\nignores", 1)[0].splitlines()[1:]
    head = table[0]
    p, v = head.index("target path"), head.index("value")
    rows: list[list[str]] = []  # each read's three cells, their folded lines joined
    for line in table[1:]:
        if line[:p].strip():
            rows.append(["", "", ""])
        for i, cell in enumerate((line[:p], line[p:v], line[v:])):
            rows[-1][i] += cell.strip()
    c = compiled("opd.toml")
    reads = grouped_reads(c.reads)
    assert [row[0] for row in rows] == [r.field for r in reads]
    def bare(t: str) -> str:
        return re.sub(r"[\s,]+", "", t)

    for row, r in zip(rows, reads, strict=True):
        assert bare(row[2]) == bare(fmt(r.value)), (r.field, row[2])
        assert bare(row[1]) == bare(r.path + r.note), (r.field, row[1])
    segments = {s for r in reads for p in r.path.split(", ") for s in p.split(".")}
    split = [s for s in segments if not any(s in line for line in table)]
    assert not split, split  # a path breaks after a dot, never inside a key (source[0].nam / e)
    for line in text.splitlines()[:3]:  # the seed's first lines keep their form
        assert line.startswith(("prime-rl config: opd.toml", "  method opd, model", "    "))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("args", [["explain", str(EXAMPLES / "opd.toml")], ["methods"], ["rules"]])
def test_explain_methods_rules_fit_when_piped(width: int, args: list[str]) -> None:
    text = cli(width, *args)
    fits(text, width)
    assert "…" not in text


def test_plain_width_defaults_to_100_in_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai.report.wrap import width

    monkeypatch.delenv("COLUMNS", raising=False)
    assert width() == 100  # pytest's stdout is no terminal
    monkeypatch.setenv("COLUMNS", "87")
    assert width() == 87


def test_a_wrapped_command_still_runs_as_printed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from whileai.report.wrap import command

    cmd = ("printf '%s|' alpha 'two words' \"three 'quoted' words\" --flag=value-with-length "
           "&& echo done  # a comment")
    lines = command(cmd, 40)
    assert lines[0] == "    # a comment" and all(len(x) <= 40 for x in lines[1:])
    script = "\n".join(lines)
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    assert out == "alpha|two words|three 'quoted' words|--flag=value-with-length|done\n"
