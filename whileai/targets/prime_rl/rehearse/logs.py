"""prime-rl's logs and the stand-ins' records, read into a rehearsal's verdict (whileai.rehearse.verdict),
its phases (whileai.rehearse.timing) and its step lines.

    v = read(where, steps=2, rc=0, seconds=3.0, policy_ports={8000, 8100}, teacher_ports={8001})
    after_rl(phases, where, started, ended, ports)   # launcher, first step, steps, shutdown
    step_line(v.steps[0])                            # "    step 1: samples 8, ...; sources ..."

Where a failure is looked for, first to last: the box prime-rl's config loader prints, the trainer
stand-in's check, then the exception prime-rl raised in the orchestrator, an env server, the
launcher, the inference or teacher stand-in, then an error line of the launcher, then (after the
deadline) the last warning of the orchestrator, the thing it was waiting for. Standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from whileai.rehearse.timing import Phases
from whileai.rehearse.verdict import (
    Cause,
    Verdict,
    first_exception,
    level_line,
    line_with,
    lines_of,
    relative,
)

TRAINER_CHECK = "whileai rehearse: trainer check failed:"  # standins/trainer.py's PREFIX


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
            return Cause(relative(path, where), i + 1, " ".join(inner)[:600])
    return None



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


def after_rl(ph: Phases, where: Path, started: float, ended: float | None = None,
             ports: set[int] | None = None) -> None:
    """launcher, first step, steps and shutdown (whileai.rehearse.timing) from the calls the
    stand-ins logged and the trainer's steps (epoch seconds); `started`: time.time() when `rl` was
    started, `ended` when it exited (shutdown); `ports`: the policy's (calls/<port>.jsonl; None:
    every port). The launcher's phase holds the orchestrator's and env servers' imports and
    start-up; a teacher's stand-in, started before `rl` and asked as soon as `rl` starts, does not
    end it. Shutdown holds the orchestrator's evals at the last step, its draining and every
    process stopping: measured 22 s of the bundled OPD arm's 117 s."""
    calls = []
    for f in sorted((where / "calls").glob("*.jsonl")):
        if ports is None or (f.stem.isdigit() and int(f.stem) in ports):
            calls += [json.loads(x)["t"] for x in _lines(f)]
    steps = [json.loads(x)["t"] for x in _lines(where / "trainer-steps.jsonl")]
    first_call = min((t for t in calls if t >= started), default=None)
    if first_call is None:
        return
    ph.add("launcher", first_call - started)
    if steps:
        ph.add("first step", steps[0] - first_call)
        ph.add("steps", steps[-1] - steps[0])
        if ended is not None:
            ph.add("shutdown", ended - steps[-1])
    elif ended is not None:
        ph.add("first step", ended - first_call)


def _lines(f: Path) -> list[str]:
    try:
        return [x for x in f.read_text().splitlines() if x.strip()]
    except OSError:
        return []


def step_line(s: dict[str, Any]) -> str:
    """One step of the trainer stand-in's facts (step_facts), as the verdict's lines show it."""
    keys = (
        "samples",
        "tokens",
        "trained_tokens",
        "micro_batches",
        "policy_generations",
        "teacher_calls",
        "adapters_loaded",
        "weight_updates",
    )
    facts = ", ".join(f"{k.replace('_', ' ')} {s[k]}" for k in keys if k in s)
    envs = ", ".join(str(e) for e in s.get("envs", []))
    return f"    step {s['step']}: {facts}; sources {envs}"
