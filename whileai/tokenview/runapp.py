"""`whileai inspect --run OUTPUT_DIR`: read a prime-rl run's token exports, write the page and
JSON, print a summary.

    whileai inspect --run outputs/my-run --steps 0:200:10 --tokenizer Qwen/Qwen3-0.6B -o view/

The tokenizer is local only: a folder holding tokenizer.json, or a model id already in the
local Hugging Face cache (whileai.vocab.files; nothing is downloaded). The `tokenizers` package is
imported only when one is given. Bad input (no exports, a bad --steps, an unknown tokenizer)
is one line, exit code 2, before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from whileai.errors import SpecError, missing_argument
from whileai.tokenview.exports import parse_steps
from whileai.tokenview.page import num, pct, shown
from whileai.tokenview.runmodel import RunReport
from whileai.tokenview.runsummary import Decoder, ids_only, summarise

FILES = ("inspect-run.html", "inspect-run.json")


def decoder(name: str | None) -> Decoder:
    if name is None:
        return ids_only()
    from whileai.vocab.files import locate

    where = locate(name)
    if where is None:
        raise SpecError("--tokenizer", name, "a local folder holding tokenizer.json, or a model id "
                        "already in the local Hugging Face cache (nothing is downloaded)")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise SpecError("--tokenizer", name, "the tokenizers package installed (pip install "
                        "tokenizers), or no --tokenizer: ids only") from None
    try:
        tok = Tokenizer.from_file(str(where / "tokenizer.json"))
    except Exception as e:  # a malformed file: tokenizers raises its own Exception type
        raise SpecError("--tokenizer", name, f"a readable tokenizer.json ({str(e)[:80]})") from None
    size = tok.get_vocab_size(with_added_tokens=True)

    def token(i: int) -> str:
        return tok.decode([i], skip_special_tokens=False) if 0 <= i < size else f"⟨{i}⟩"

    def text(ids: list[int]) -> str:
        return tok.decode([i for i in ids if 0 <= i < size], skip_special_tokens=False)

    return Decoder(name, token, text)


def run_inspect_run(run: Path, *, steps: str | None, tokenizer: str | None, out: Path | None,
                    force: bool, console: Console, show_step: int | None = None) -> list[str]:
    from whileai.files.write import Output, check_out, write
    from whileai.tokenview.runpage import render

    window = parse_steps(steps)
    dec = decoder(tokenizer)
    target = check_out(out if out is not None else Path(f"inspect-run-{run.resolve().name}"), "--out")
    err = Console(stderr=True, width=console.width)
    with err.status("reading token exports"):
        report = summarise(run, window=window, decoder=dec, show_step=show_step)
    files = {FILES[0]: render(report), FILES[1]: report.model_dump_json(indent=1) + "\n"}
    write([Output(target, files)], force=force)
    paths = [str(target / name) for name in files]
    print_run_summary(report, paths, console)
    return paths


def print_run_summary(report: RunReport, paths: list[str], console: Console) -> None:
    rd = report.reading
    console.print(Text(f"inspect --run: {report.run}", style="bold"),
                  Text(f"  ({len(rd.steps_read)} steps, {rd.records} sequences, "
                       f"{rd.bytes_read / 1e6:.1f} MB, {report.timings['read']:.1f}s)", style="dim"))
    t = Table(box=None, pad_edge=False)
    for col in ("step", "trained tokens", "mean signal", "top 1% share", "masked", "mismatch KL", "entropy"):
        t.add_column(col, justify="right")
    rows = report.steps if len(report.steps) <= 12 else [*report.steps[:6], None, *report.steps[-5:]]
    for s in rows:
        if s is None:
            t.add_row("...", "", "", "", "", "", "")
            continue
        t.add_row(str(s.step), str(s.trained_tokens), num(s.mean_signal), pct(s.top1_share_signal),
                  pct(s.masked_fraction), num(s.mean_mismatch_kl, 4), num(s.mean_entropy))
    console.print(t)
    console.print(Text("  signal", style="bold"),
                  Text(f" ({report.signal_name}) = {report.signal_definition}"), sep="")
    high = ", ".join(f"'{shown(r.text)}' ({r.steps_high} steps)" for r in report.top_tokens[:5])
    if high:
        console.print(Text("  stays high: ", style="bold"), Text(high), sep="")
    for n in report.notes:
        console.print(Text("  note: ", style="yellow"), Text(n), sep="")
    for p in paths:
        console.print(Text("  wrote ", style="cyan"), Text(p), sep="")


def run_cli(spec: Path | None, run: Path | None, **kw: Any) -> list[str]:
    """The CLI's entry: exactly one of a spec and --run."""
    if run is None:
        raise missing_argument("SPEC", "a spec file to inspect before training, or --run OUTPUT_DIR "
                               "for a prime-rl run's token exports")
    if spec is not None:
        raise SpecError("--run", str(run), "either a spec or --run, not both")
    return run_inspect_run(run, **kw)
