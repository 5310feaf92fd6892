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
    assert lines[0].startswith("prime-rl config: ") and lines[1].startswith("  shape: ")  # the first screen
    detail = lines.index("  detail:")
    assert lines[detail + 1].startswith(f"  method {name[:-5]}")  # then the detail, as before
    assert "  reads:" in lines and not any(line.startswith("  reads: ") for line in lines)
    flat = squeeze(text)
    c = compiled(name)
    for r in grouped_reads(c.reads):  # each read starts its own line, its value is there
        # its `path = value` may start the next line, whole
        assert any(line.startswith(f"    {r.field} ->") for line in lines), r.field
        assert f"= {fmt(r.value)}" in flat, (r.field, r.value)
    for ig in c.ignores:
        assert any(line.startswith(f"    {ig.field}={fmt(ig.value)}: ") for line in lines)
    for w in c.warnings:  # one the spec accepts (examples/*.toml `accept`) says so, with why
        head = f"warning [{w.rule}]: " if w.accepted is None else f"warning [{w.rule}] accepted: "
        assert f"{head}{squeeze(w.message)}" in flat
        assert w.accepted is None or f"accepted because: {squeeze(w.accepted)}" in flat


def in_terminal(monkeypatch: pytest.MonkeyPatch, width: int, show) -> str:  # type: ignore[no-untyped-def]
    """What `show()` prints through a rich console in a terminal `width` columns wide (colour
    codes removed)."""
    import io

    from whileai.report import render

    buf = io.StringIO()
    monkeypatch.setattr(render, "console", lambda: render._Console(
        width=width, force_terminal=True, file=buf, highlight=False, soft_wrap=False))
    show()
    return re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())


def copyable(c) -> set[str]:  # type: ignore[no-untyped-def]
    """What a person copies from a report: every key path, every word of every value, the model
    names, URLs and every word of every command."""
    words = {p for r in c.reads for p in r.path.split(", ")}
    words |= {w for r in c.reads for w in fmt(r.value).split()}
    words |= {w for x in c.ignores for w in fmt(x.value).split()}
    words |= {c.run.model, *(w for cmd in c.commands for w in cmd.partition("  # ")[0].split())}
    if c.teacher is not None:
        words |= {c.teacher.model, c.teacher.url}
    return words


def split_words(text: str, words: set[str]) -> list[str]:
    return sorted(w for w in words if not any(w in line for line in text.splitlines()))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["opd.toml", "sft.toml", "opsd.toml"])
def test_rich_report_never_splits_a_key_a_name_or_a_url(monkeypatch: pytest.MonkeyPatch, width: int,
                                                         name: str) -> None:
    from whileai.report.render import print_report

    c = compiled(name)
    text = in_terminal(monkeypatch, width, lambda: print_report(c))
    assert not split_words(text, copyable(c))  # once 'PrimeIntellect/Qwen3-0.' / '6B-Reverse-Text-SFT'
    assert "…" not in text
    fits(text, width)  # a word wider than the terminal would run past it; none is here
    for r in grouped_reads(c.reads):
        assert r.field in text


@pytest.mark.parametrize("width", WIDTHS)
def test_explain_keeps_every_key_whole_in_a_terminal_and_piped(monkeypatch: pytest.MonkeyPatch,
                                                                width: int) -> None:
    from whileai.report.explain import explain_rows
    from whileai.report.render import print_explain

    c = compiled("opd.toml")
    keys = {k for k, _, _ in explain_rows(c)}
    values = {w for _, v, _ in explain_rows(c) for w in fmt(v).split()}
    rich = in_terminal(monkeypatch, width, lambda: print_explain(c))
    piped = cli(width, "explain", str(EXAMPLES / "opd.toml"))
    for text in (rich, piped):
        assert not split_words(text, keys | values)
    # `whileai explain SPEC | grep KEY` finds the key, its value on the same line
    hits = [line for line in piped.splitlines() if "orchestrator.max_off_policy_steps" in line]
    assert hits == ["orchestrator.max_off_policy_steps = 8  (spec max_off_policy_steps)"]
    assert piped == cli(width, "explain", str(EXAMPLES / "opd.toml"), "--plain")
    assert all(len(line) <= width or " " not in line.strip() for line in piped.splitlines())


def test_explain_json_lists_every_key_value_and_origin() -> None:
    import json

    from whileai.report.explain import explain_rows

    data = json.loads(cli(80, "explain", str(EXAMPLES / "opd.toml"), "--json"))
    c = compiled("opd.toml")
    assert [(k["key"], k["value"], k["produced_by"]) for k in data["keys"]] == explain_rows(c)
    assert data["target"] == "prime-rl" and data["stages"] == []
    assert [x["field"] for x in data["not_emitted"]] == [x.field for x in c.ignores]


def test_whole_table_answers_none_when_a_word_cannot_fit() -> None:
    from rich.text import Text

    from whileai.report.tables import whole_table, widths

    assert widths([["ab cd", "x" * 30]], 20) is None
    assert widths([["ab cd", "efgh"]], 40) == [5, 4]  # never wider than the longest line
    assert widths([["ab cdef", "x y z w"]], 9) == [5, 2]  # the spare room shared
    assert whole_table(("k", "v"), [[Text("a" * 50), Text("b")]], 40) is None


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
