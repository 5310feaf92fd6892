"""`whileai inspect --run OUTPUT_DIR`: read a prime-rl run's token exports, write the page and
JSON, print a summary.

    whileai inspect --run outputs/my-run --steps 0:200:10 --tokenizer Qwen/Qwen3-0.6B -o view/

The tokenizer is local only: a folder holding tokenizer.json, or a model id already in the
local Hugging Face cache (whileai.vocab.files; nothing is downloaded). The `tokenizers` package is
imported only when one is given. Bad input (no exports, a bad --steps, an unknown tokenizer)
is one line, exit code 2, before anything is written; exports with no finished step to read
(none has its STABLE marker, or none holds a valid sequence) are one line, exit code 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from rich.console import Console
from rich.table import Table

from whileai.errors import SpecError, missing_argument
from whileai.tokenview.exports import parse_steps
from whileai.tokenview.page import num, pct, shown
from whileai.tokenview.rundocument import RunReport
from whileai.tokenview.runsummary import Decoder, ids_only, steps_text, summarise
from whileai.tokenview.summary import hanging
from whileai.words import counted

FILES = ("inspect-run.html", "inspect-run.json")


class NothingFinished(Exception):
    """A run folder whose token exports hold no finished step to read: the CLI says what is
    missing and exits 1, having written nothing."""


def _nothing_read(run: Path, report: RunReport) -> NothingFinished | None:
    rd = report.reading
    if rd.records:
        return None
    if rd.steps_read:
        verb = "hold" if len(rd.steps_read) > 1 else "holds"
        why = (f"the finished {steps_text(rd.steps_read)} {verb} no valid sequence"
               + (f" (first: {rd.problem_examples[0]})" if rd.problem_examples else ""))
    elif rd.steps_unstable:
        why = (f"{steps_text(rd.steps_unstable)} {'have' if len(rd.steps_unstable) > 1 else 'has'} no "
               "STABLE marker yet (being written, or the trainer stopped mid-step)")
    else:
        why = f"none of its {rd.steps_found} step folder(s) lies inside --steps"
    return NothingFinished(f"--run {run}: no finished step to read: {why}; nothing written")


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


class TeacherFlags(NamedTuple):
    """With --run: the teacher to score the run's samples against (none given: no scoring)."""

    endpoint: str | None = None
    local: str | None = None
    own: bool = False  # --teacher: the run's own, from its configs/orchestrator.json
    key_env: str = "VLLM_API_KEY"
    pick: str | None = None  # unset: "surprise" (set without a teacher: refused)
    per_step: int | None = None  # unset: 8
    top_k: int = 5
    timeout: float = 120.0
    device: str = "auto"
    student: str | None = None  # --local-student: a checkpoint for the full-vocabulary KL (local teacher)

    @property
    def wanted(self) -> bool:
        return bool(self.endpoint or self.local or self.own)

    def settled(self) -> TeacherFlags:
        """The flags with their defaults; a scoring flag given without a teacher is refused (it
        would change nothing)."""
        if not self.wanted:
            for flag, value in (("--pick", self.pick), ("--per-step", self.per_step),
                                ("--local-student", self.student)):
                if value is not None:
                    raise SpecError(flag, value, "with --teacher, --teacher-endpoint or "
                                    "--local-teacher: it chooses what the teacher scores, and "
                                    "none was given")
        return self._replace(pick=self.pick or "surprise",
                             per_step=8 if self.per_step is None else self.per_step)


def run_inspect_run(run: Path, *, steps: str | None, tokenizer: str | None, out: Path | None,
                    force: bool, console: Console, show_step: int | None = None,
                    teacher: TeacherFlags | None = None) -> list[str]:
    from whileai.files.write import Output, check_folder, write
    from whileai.tokenview.runpage import render

    window = parse_steps(steps)
    dec = decoder(tokenizer)
    target = check_folder(out if out is not None else Path(f"inspect-run-{run.resolve().name}"),
                          "--out", "inspect writes inspect.html and inspect.json into it")
    err = Console(stderr=True, width=console.width)
    teacher = teacher.settled() if teacher is not None else None
    if teacher is not None and teacher.wanted:
        from whileai.tokenview.runteacherapp import score_run

        report, extra = score_run(run, window=window, dec=dec, tokenizer=tokenizer, flags=teacher,
                                  show_step=show_step, err=err)
    else:
        with err.status("reading token exports"):
            report = summarise(run, window=window, decoder=dec, show_step=show_step)
        extra = {}
    if (nothing := _nothing_read(run, report)) is not None:
        raise nothing
    files = {FILES[0]: render(report), FILES[1]: report.model_dump_json(indent=1) + "\n", **extra}
    write([Output(target, files)], force=force)
    paths = [str(target / name) for name in files]
    print_run_summary(report, paths, console)
    return paths


def print_run_summary(report: RunReport, paths: list[str], console: Console) -> None:
    rd = report.reading
    read = (f"   ({counted(len(rd.steps_read), 'steps')}, {counted(rd.records, 'sequences')}, "
            f"{rd.bytes_read / 1e6:.1f} MB, {report.timings['read']:.1f}s)")
    hanging(console, f"inspect --run: {report.run}", "bold", read)
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
    hanging(console, "  signal", "bold", f" ({report.signal_name}) = {report.signal_definition}")
    high = ", ".join(f"'{shown(r.text)}' ({counted(r.steps_high, 'steps')})" for r in report.top_tokens[:5])
    if high:
        hanging(console, "  stays high: ", "bold", high)
    for n in report.notes:
        hanging(console, "  note: ", "yellow", n)
    if report.teacher is not None:
        print_teacher(report, console)
    for p in paths:
        hanging(console, "  wrote ", "cyan", p)


def print_teacher(report: RunReport, console: Console) -> None:
    tr = report.teacher
    assert tr is not None
    o = tr.overall
    hanging(console, "  teacher: ", "bold", f"{tr.teacher.kind} {tr.teacher.model}"
            + (f" at {tr.teacher.url}" if tr.teacher.url else "")
            + f"; {counted(len(tr.samples), 'samples')} scored ({tr.pick}), {o.tokens} tokens, mean "
            f"signal {num(o.mean_signal)} (log p_student - log p_teacher), top 1% share "
            f"{pct(o.top1_share_signal)}, in teacher top-{tr.top_k} {pct(o.teacher_top_k_hit)}, on "
            f"filler {pct(tr.filler_share_signal)}; {tr.timings['score']:.1f}s")
    hanging(console, "  tokenizers: ", "bold", tr.tokenizer_note)


def run_cli(spec: Path | None, run: Path | None, **kw: Any) -> list[str]:
    """The CLI's entry: exactly one of a spec and --run."""
    if run is None:
        raise missing_argument("SPEC", "a spec file to inspect before training, or --run OUTPUT_DIR "
                               "for a prime-rl run's token exports")
    if spec is not None:
        raise SpecError("--run", str(run), "either a spec or --run, not both")
    return run_inspect_run(run, **kw)
