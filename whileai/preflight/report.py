"""Preflight results as data: one `Check` per probe (ok, FAIL, skip, or note: a difference the run
does not trip on, with its one-line reason), and the report that prints one line per check or
JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from whileai.errors import clean

Status = Literal["ok", "FAIL", "skip", "note"]


@dataclass(frozen=True)
class Check:
    name: str  # e.g. "teacher Qwen/Qwen3-8B @ http://localhost:8001/v1: scoring route"
    status: Status
    detail: str  # the one-line reason: what was measured, or what is wrong and what to do
    seconds: float | None = None
    command: str | None = None  # a shell line the detail ends with (the teacher's serve line)

    def line(self) -> str:
        took = f" [{self.seconds:.2f} s]" if self.seconds is not None else ""
        return clean(f"{self.status:<4} {self.name}: {self.detail}{took}")

    def text(self, cols: int) -> list[str]:
        """The check wrapped to `cols`: its prose at spaces, then the command it ends with on lines
        of its own, broken only between shell words with ` \\` (it pastes and runs as printed)."""
        from whileai.report.wrap import command, fit

        cmd = self.command
        if not cmd or not self.detail.endswith(cmd):
            return fit([self.line()], cols, hang=" " * 5)
        prose = Check(self.name, self.status, self.detail[: -len(cmd)].rstrip(), self.seconds).line()
        return fit([prose], cols, hang=" " * 5) + command(clean(cmd), cols, indent=" " * 7)

    def to_dict(self) -> dict[str, Any]:
        return {"name": clean(self.name), "status": self.status, "detail": clean(self.detail),
                "seconds": None if self.seconds is None else round(self.seconds, 3),
                **({"command": clean(self.command)} if self.command else {})}


def ok(name: str, detail: str, seconds: float | None = None) -> Check:
    return Check(name, "ok", detail, seconds)


def fail(name: str, detail: str, seconds: float | None = None, command: str | None = None) -> Check:
    """A check that failed; `command`: the shell line its detail ends with (what fixes it), added
    to the detail unless it already ends with it."""
    whole = detail if not command or detail.endswith(" " + command) else f"{detail} {command}"
    return Check(name, "FAIL", whole, seconds, command)


def skip(name: str, detail: str) -> Check:
    return Check(name, "skip", detail)


def note(name: str, detail: str, seconds: float | None = None) -> Check:
    """A difference the run does not trip on: said, never failed."""
    return Check(name, "note", detail, seconds)


@dataclass
class PreflightReport:
    spec: str
    target: str  # the target's name (its JSON key "target"; "backend" before the report's version 2)
    timeout: float
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0  # the whole preflight, compiling the spec included
    probe_seconds: float = 0.0  # the probes alone: from the first request to the last answer

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "FAIL"]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def summary(self) -> str:
        counts = {s: sum(c.status == s for c in self.checks) for s in ("ok", "FAIL", "skip", "note")}
        verdict = "not ready: fix each FAIL before the run" if self.failed else "ready"
        return (f"preflight {self.spec} ({self.target}): {counts['ok']} ok, {counts['FAIL']} FAIL, "
                f"{counts['skip']} skip{f', {n} note' if (n := counts['note']) else ''} in "
                f"{self.seconds:.1f} s: {verdict}")

    def lines(self) -> list[str]:
        return [c.line() for c in self.checks] + [clean(self.summary())]

    def text(self, cols: int) -> list[str]:
        """The report for a terminal or a log: each check wrapped to `cols`, its command whole."""
        from whileai.report.wrap import fit

        return [x for c in self.checks for x in c.text(cols)] + fit([clean(self.summary())], cols,
                                                                  hang=" " * 5)

    def to_dict(self) -> dict[str, Any]:
        return {"spec": clean(self.spec), "target": self.target, "timeout": self.timeout,
                "seconds": round(self.seconds, 3), "probe_seconds": round(self.probe_seconds, 3),
                "ok": not self.failed,
                "checks": [c.to_dict() for c in self.checks]}


__all__ = ["Check", "PreflightReport", "Status", "fail", "note", "ok", "skip"]
