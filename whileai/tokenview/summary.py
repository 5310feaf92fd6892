"""The terminal side of inspect: a progress bar while it works and a short rich summary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from whileai.tokenview.document import InspectReport
from whileai.tokenview.page import num, pct, shown
from whileai.words import counted


@contextmanager
def progress_bar(console: Console) -> Iterator[Any]:
    """A callback (phase, done, total) that drives one rich bar per phase, on stderr."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description:>9}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=False)
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(phase, total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        yield update


def hanging(console: Console, head: str, style: str, body: str) -> None:
    """`head` (in `style`) and `body` as one paragraph wrapped between words at the console's
    width, its continuation lines indented under the text (never back at column 0)."""
    from whileai.report.wrap import para

    lead = len(head) - len(head.lstrip())
    text = Text("\n".join(para(head.lstrip() + body, console.width, " " * lead, " " * (lead + 2))))
    text.stylize(style, 0, len(head))
    console.print(text, soft_wrap=True)


def print_summary(report: InspectReport, paths: list[str], console: Console) -> None:
    o, s = report.overall, report.settings
    hanging(console, f"inspect: {report.method.type} on {report.taskset}", "bold",
            f"  ({counted(s.prompts, 'prompts')} x {counted(s.samples, 'samples')}, {o.tokens} tokens, "
            "sampler: "
            f"{report.method.sampler})")
    for side in (report.student, report.teacher):
        where = side.model + (f" at {side.url}" if side.url else "")
        hanging(console, f"  {side.role}: ", "", f"{side.kind} {where} (log-probs: {side.logprobs})")
    t = Table(box=None, pad_edge=False)
    for col in ("", "tokens", "mean signal", "top 1% share", "mean full KL", "top 1% share (KL)",
                "in teacher top-k"):
        t.add_column(col, justify="right" if col else "left", no_wrap=not col)
    t.add_row("overall", str(o.tokens), num(o.mean_signal), pct(o.top1_share_signal),
              num(o.mean_full_kl), pct(o.top1_share_full_kl), pct(o.teacher_top_k_hit), style="bold")
    for i, c in enumerate(report.completions[:8]):
        x = c.stats
        t.add_row(f"#{i}", str(x.tokens), num(x.mean_signal), pct(x.top1_share_signal),
                  num(x.mean_full_kl), pct(x.top1_share_full_kl), pct(x.teacher_top_k_hit))
    if len(report.completions) > 8:
        t.add_row(f"+{len(report.completions) - 8} more", "", "", "", "", "", "")
    console.print(t)
    worst = ", ".join(f"'{shown(r.text)}' ({r.sum_signal:.2f} over {r.count})" for r in report.top_tokens[:5])
    if worst:
        hanging(console, "  most disagreed-with: ", "bold", worst)
    hanging(console, "  signal", "bold", " = log p_sampler(x_t) - log p_other(x_t) on the sampled token; "
            "full KL: " + report.definitions.full_kl_note)
    bad = "DIFFERENT" in report.tokenizer_note or (
        report.tokenizer_check is not None and report.tokenizer_check.verdict != "identical")
    hanging(console, "  tokenizers: ", "bold red" if bad else "bold", report.tokenizer_note)
    for n in report.notes:
        hanging(console, "  note: ", "yellow", n)
    tm = report.timings
    console.print(Text(f"  time: load {tm['load']:.1f}s, generate {tm['generate']:.1f}s, score "
                       f"{tm['score']:.1f}s, total {tm['total']:.1f}s", style="dim"))
    for p in paths:
        hanging(console, "  wrote ", "cyan", p)
