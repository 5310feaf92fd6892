"""The first screen of a report: what a person needs before the field-by-field detail.

Derived from a compiled run's record fields only (like whileai.report.text), the same for every
target, in this order, each a short line wrapped to the terminal:

- shape: the GPUs and nodes the run holds and where each model runs (the target's own layout);
- time: the cost estimate's wall hours and GPU-hours held, and its slowest part: the pool the
  target names as slowest (verl's OPD pools note), else the stage with the most GPU-hours;
- teacher: each teacher and where it is served (its record's mode and GPUs);
- one line per error-level warning (whileai.rules.base.SINKS: a rule whose firing sinks the run),
  then the count and ids of the other warnings; every one is told in full further down.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from whileai.rules.base import severity
from whileai.words import counted

if TYPE_CHECKING:
    from whileai.report.records import Teacher

SLOWEST = "pools: the slowest is "  # the verl target's pools note (whileai.targets.verl.cost)


def overview(c: Any) -> list[str]:
    """The first screen's lines, unwrapped (a Compiled, or any object with its record fields)."""
    lines = [_shape(c), _time(c)]
    teachers = list(c.teachers or ((c.teacher,) if c.teacher else ()))
    lines += [f"teacher {t.model}: {where(t)}" for t in teachers]
    found = [w for w in c.warnings if w.accepted is None]
    errors = [w for w in found if severity(w.rule) == "error"]
    lines += [f"error [{w.rule}]: {_short(w.message)}" for w in errors]
    rest = [w.rule for w in found if w not in errors]
    accepted = sum(1 for w in c.warnings if w.accepted is not None)
    told = [*([f"{len(rest)} open ({', '.join(rest)})"] if rest else []),
            *([f"{accepted} accepted"] if accepted else [])]
    lines.append(f"{'other ' if errors else ''}warnings: " + (", ".join(told) + "; each in full below"
                                                            if told else "none"))
    return lines


def _shape(c: Any) -> str:
    """`shape: 2 GPUs on 1 node (1 inference GPU, 1 trainer GPU); student M`: the GPUs held
    (the cost's, a teacher's own included), then the target's layout without its own count."""
    cost, run = c.cost, c.run
    gpus = cost.gpus + (cost.teacher_gpus or 0) if cost is not None else c.facts.gpus or run.gpus
    nodes = cost.nodes if cost is not None else (run.nodes or 1)
    layout = c.facts.layout or run.layout.text()
    model = c.facts.model or run.model
    if not gpus:
        return f"shape: {layout}; student {model}"
    rest = re.sub(r"^\d+ GPUs?(?: on \d+ nodes?)?", "", layout).strip()
    rest = rest if rest.startswith(("(", "x ")) else f"({rest})" if rest else ""
    return f"shape: {counted(gpus, 'GPUs')} on {counted(nodes, 'nodes')} {rest}".rstrip() + \
        f"; student {model}"


def _time(c: Any) -> str:
    """`time: ≈ 1.1 h on 2 GPUs = 2.3 GPU-hours held; slowest: ...`, or why there is none."""
    cost = c.cost
    if cost is None and c.stages and all(s.cost is not None and s.cost.wall_hours is not None
                                         for s in c.stages):  # a two-stage run: one after the other
        each = [s.cost.wall_hours for s in c.stages]
        held = sum(w * (s.cost.gpus + (s.cost.teacher_gpus or 0))
                   for w, s in zip(each, c.stages, strict=True))
        return (f"time: ≈ {_num(sum(each))} hours in {len(each)} stages, one after the other ("
                + " + ".join(_num(w) for w in each) + f") = {_num(held)} GPU-hours held")
    if cost is None:
        return "time: no estimate for this run (docs/cost.md)"
    if cost.gpu_hours is None or cost.wall_hours is None:
        return f"time: no GPU-hour estimate: {cost.unknown or 'unknown'} (docs/cost.md)"
    held = cost.gpus + (cost.teacher_gpus or 0)
    head = (f"time: ≈ {_num(cost.wall_hours)} hours on {counted(held, 'GPUs')} = "
            f"{_num(cost.wall_hours * held)} GPU-hours held")
    pool = next((n[len(SLOWEST):].split(", ≈", 1)[0] for n in c.notes if n.startswith(SLOWEST)), None)
    if pool is not None:
        return f"{head}; slowest: {pool}"
    h = cost.gpu_hours
    stages = {s: v for s in ("train", "sample", "teacher", "eval") if (v := getattr(h, s))}
    if not stages:
        return head
    top = max(stages, key=lambda s: stages[s])
    return f"{head}; most GPU-hours: {top} ({_num(stages[top])} of {_num(h.total)})"


def where(t: Teacher) -> str:
    """Where a teacher runs, in a few words (its record's mode and GPUs)."""
    gpus = t.held_gpus or t.gpus
    return {
        "share": "served beside the policy on GPU 0",
        "local": f"served on {counted(gpus, 'GPUs')} of its own on the run's node",
        "job": f"its own SLURM job ({counted(gpus, 'GPUs')})" if gpus else "its own SLURM job",
        "endpoint": f"already served at {t.url} (its GPUs are not counted)",
        "in-process": "loaded into every training process",
        "verl pool": f"verl's own pool of {counted(gpus, 'GPUs')}" if gpus else "verl's own pool",
    }.get(t.mode, t.mode)


def _short(message: str, room: int = 140) -> str:
    """A warning's first clause, at most `room` characters (cut between words): the whole is below."""
    head = message.split("; ", 1)[0]
    if len(head) <= room:
        return head + (" (more below)" if head != message else "")
    return head[:room].rsplit(" ", 1)[0] + " ... (in full below)"


def _num(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


__all__ = ["overview", "where"]
