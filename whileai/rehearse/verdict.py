"""One verdict from a rehearsal's folder: `ok` with per-step facts, or the first failure quoted
from the log it came from (file and line).

    v = read(where, steps=2, rc=0, policy_ports={8000, 8100}, teacher_ports={8001})
    v.ok, v.steps, v.cause          # cause: Cause(file, line, text) or None

Where a failure is looked for, first to last: the trainer stand-in's check, then the exception
prime-rl raised in the orchestrator, an env server, the launcher, the inference or teacher
stand-in, then an error line of the launcher, then (after the deadline) the last warning of the
orchestrator, the thing it was waiting for. Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai.errors import clean

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
EXC = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Timeout)(?::\s*(?P<msg>.*))?$")
TRAINER_CHECK = "whileai rehearse: trainer check failed:"
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
        return Cause(_rel(path, where), i + 1, " ".join([text, *more])[:600])
    return None


def box_error(path: Path, where: Path) -> Cause | None:
    """An error prime-rl's config loader prints in a box (`╭─ Config file error ─╮`), as one line."""
    lines = lines_of(path)
    for i, raw in enumerate(lines):
        if raw.lstrip().startswith("╭") and "error" in raw.lower():
            inner = []
            for x in lines[i + 1:]:
                if x.lstrip().startswith("╰"):
                    break
                text = x.strip().strip("│").strip()
                if text and set(text) - set("─"):
                    inner.append(text)
            return Cause(_rel(path, where), i + 1, " ".join(inner)[:600])
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
    return Cause(_rel(path, where), i + 1, text.strip()[:600])


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
    return Cause(_rel(path, where), i + 1, text.strip()[:600])


def _rel(path: Path, where: Path) -> str:
    try:
        return str(path.relative_to(where))
    except ValueError:
        return str(path)


def run_logs(where: Path) -> Path | None:
    found = sorted((where / "outputs").glob("*/logs/latest"))
    return found[0] if found else None


def step_facts(where: Path, policy_ports: set[int], teacher_ports: set[int]) -> list[dict[str, Any]]:
    """The trainer stand-in's facts per step, with the calls the servers saw up to that step."""
    steps = [json.loads(x) for x in lines_of(where / "trainer-steps.jsonl") if x.strip()]
    calls = []
    for f in sorted((where / "calls").glob("*.jsonl")):
        calls += [json.loads(x) for x in lines_of(f) if x.strip()]
    calls.sort(key=lambda c: c["t"])
    prev = 0.0
    for s in steps:
        mine = [c for c in calls if prev < c["t"] <= s["t"]]
        prev = s["t"]
        s["adapters_loaded"] = sum(
            1
            for c in mine
            if c["route"].endswith("load_lora_adapter") and "unload" not in c["route"] and c["status"] == 200
        )
        s["weight_updates"] = sum(1 for c in mine if c["route"] == "/update_weights" and c["status"] == 200)
        s["teacher_calls"] = sum(
            1 for c in mine if c["port"] in teacher_ports and c["route"] == "/inference/v1/generate"
        )
        s["policy_generations"] = sum(
            1 for c in mine if c["port"] in policy_ports and c["route"] == "/inference/v1/generate"
        )
        s.pop("t", None)
    return steps


def read(
    where: Path,
    *,
    steps: int,
    rc: int | None,
    seconds: float,
    policy_ports: set[int],
    teacher_ports: set[int],
) -> Verdict:
    facts = step_facts(where, policy_ports, teacher_ports)
    v = Verdict(ok=False, seconds=seconds, steps=facts, timed_out=rc is None)
    if rc == 0 and len(facts) >= steps:
        v.ok = True
        v.summary = f"ok: {steps} steps in {seconds:.0f} s"
        if facts and facts[0].get("plan"):  # the batch arithmetic the trainer stand-in checked
            got = ", ".join(str(f.get("samples")) for f in facts)
            v.summary += f"; samples per step {got} for {facts[0]['plan']}"
        return v
    logs = run_logs(where)
    order: list[tuple[Path, str]] = []
    if logs is not None:
        order.append((logs / "trainer.log", "check"))
        order.append((logs / "orchestrator.log", "exc"))
        order += [(p, "exc") for p in sorted((logs / "envs").glob("*/*.log"))]
    order.append((where / "rl.log", "exc"))
    if logs is not None:
        order.append((logs / "inference.log", "exc"))
    order += [(p, "exc") for p in sorted(where.glob("teacher-*.log"))]
    order.insert(0, (where / "rl.log", "box"))
    for path, kind in order:
        if kind == "box":
            cause = box_error(path, where)
        elif kind == "check":
            cause = line_with(path, where, TRAINER_CHECK)
        else:
            cause = first_exception(path, where)
        if cause is not None:
            break
    else:
        cause = level_line(where / "rl.log", where, "ERROR", skip=("Terminating all processes",))
        if cause is None and logs is not None:
            cause = level_line(logs / "orchestrator.log", where, "WARNING", last=True)
    v.cause = cause
    why = f"no verdict within the timeout ({seconds:.0f} s)" if rc is None else f"rl exited {rc}"
    if rc == 0:
        why = f"rl exited 0 after {len(facts)} of {steps} steps"
    v.summary = f"failed: {why}" + (f": {cause.quote()}" if cause else "")
    return v
