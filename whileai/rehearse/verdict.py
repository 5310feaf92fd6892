"""A rehearsal's verdict, whatever the target: per stage `ok` with per-step facts, or the first
failure quoted from the log it came from (file and line); the rehearsal's `Result`; and the
helpers that quote a log (a target's own reader says which logs to read, in what order).

    v = Verdict(False, 3.0, cause=first_exception(where / "run.log", where), summary="failed: ...")
    v.ok, v.steps, v.cause          # cause: Cause(file, line, text) or None
    result = Result(stages=["opd"], verdicts=[v]); result.ok, result.to_dict()

Standard library (and whileai's own line cleaning) only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai.errors import clean
from whileai.rehearse.timing import Phases

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
EXC = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Timeout)(?::\s*(?P<msg>.*))?$")
LEVEL = re.compile(r"^\S*\s+(ERROR|WARNING)\s+(.*)$")


@dataclass(frozen=True)
class Cause:
    file: str
    line: int
    text: str

    def __post_init__(self) -> None:  # a quoted log line never carries a secret into a report
        object.__setattr__(self, "text", clean(self.text))

    def quote(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


@dataclass
class Verdict:
    ok: bool
    seconds: float
    steps: list[dict[str, Any]] = field(default_factory=list)
    cause: Cause | None = None
    timed_out: bool = False
    summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 1),
            "timed_out": self.timed_out,
            "summary": self.summary,
            "steps": self.steps,
            "cause": None if self.cause is None else vars(self.cause),
        }


@dataclass
class Result:
    """A rehearsal: its stages by name, one verdict per stage rehearsed (it stops at the first
    failure), what each stage's copy replaced, the folder it ran in and its seconds per phase."""

    stages: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    subs: list[list[str]] = field(default_factory=list)
    folder: str = ""
    phases: Phases = field(default_factory=Phases)  # seconds per phase (whileai.rehearse.timing)

    @property
    def ok(self) -> bool:
        return (
            bool(self.verdicts)
            and all(v.ok for v in self.verdicts)
            and len(self.verdicts) == len(self.stages)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "folder": self.folder,
            "phases": self.phases.ordered(),
            "stages": [
                {"name": n, "substitutions": s, **v.to_dict()}
                for n, s, v in zip(self.stages, self.subs, self.verdicts, strict=False)
            ],
        }


def lines_of(path: Path) -> list[str]:
    try:
        return [ANSI.sub("", x).rstrip() for x in path.read_text(errors="replace").splitlines()]
    except OSError:
        return []


def first_exception(path: Path, where: Path) -> Cause | None:
    """The message of the first exception a log shows (its last, most specific line)."""
    lines = lines_of(path)
    for i, raw in enumerate(lines):
        text = raw.strip()
        m = EXC.match(text)
        if not m or text.startswith(("Traceback", "During handling")):
            continue
        more = (
            [x.strip() for x in lines[i + 1 : i + 4] if x.strip()]
            if ("validation error" in text or text.endswith(":"))
            else []
        )
        if "Timeout" in text.split(":", 1)[0] and (warned := last_warning_before(path, i + 1)):
            more.append(f"(the last warning before it: {warned})")  # what it was waiting for
        return Cause(relative(path, where), i + 1, " ".join([text, *more])[:600])
    return None


def last_warning_before(path: Path, line: int) -> str | None:
    found = [m.group(2) for x in lines_of(path)[: line - 1] if (m := LEVEL.match(x.strip()))
             and m.group(1) == "WARNING"]
    return found[-1] if found else None


def line_with(path: Path, where: Path, needle: str, *, last: bool = False) -> Cause | None:
    found = [(i, x) for i, x in enumerate(lines_of(path)) if needle in x]
    if not found:
        return None
    i, text = found[-1] if last else found[0]
    return Cause(relative(path, where), i + 1, text.strip()[:600])


def level_line(
    path: Path, where: Path, level: str, *, last: bool = False, skip: Iterable[str] = ()
) -> Cause | None:
    found = [
        (i, m.group(2))
        for i, x in enumerate(lines_of(path))
        if (m := LEVEL.match(x.strip())) and m.group(1) == level and not any(s in x for s in skip)
    ]
    if not found:
        return None
    i, text = found[-1] if last else found[0]
    return Cause(relative(path, where), i + 1, text.strip()[:600])


def relative(path: Path, where: Path) -> str:
    try:
        return str(path.relative_to(where))
    except ValueError:
        return str(path)


