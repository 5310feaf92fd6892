"""Running verl's rehearsal: each stage as `python -m whileai.targets.verl.rehearse.inside ...` in
verl's own Python, a process group of its own under one deadline (whileai.rehearse.session), and
its JSON lines (context.StepRecord) read back as the stage's verdict."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.targets.verl.rehearse.env import root
from whileai.targets.verl.rehearse.stages import VerlStage

if TYPE_CHECKING:
    from whileai.rehearse.supervise import Supervisor
    from whileai.rehearse.verdict import Result, Verdict

MODULE = "whileai.targets.verl.rehearse.inside"


def rehearse(stages: list[VerlStage], *, python: str, timeout: float, keep: Path | None,
             say: Callable[[str], None]) -> Result:
    from whileai.rehearse.session import held
    from whileai.rehearse.verdict import Result

    result = Result(stages=[s.name for s in stages], subs=[[] for _ in stages])

    def body(root: Path, sup: Supervisor) -> None:
        for i, stage in enumerate(stages):
            node = (f"{stage.nodes} x {stage.gpus}" if stage.nodes > 1 else str(stage.gpus)) if stage.gpus \
                else "trainer.n_gpus_per_node x trainer.nnodes"
            say(f"rehearsing {stage.name}: verl's {stage.job} on {node} logical GPU(s)")
            v = run_stage(stage, root / f"{i}-{_safe(stage.name)}", python, sup)
            result.verdicts.append(v)
            result.phases.add("steps", v.seconds)
            if not v.ok:
                break

    return held(result, keep=keep, timeout=timeout, body=body)


def run_stage(stage: VerlStage, where: Path, python: str, sup: Supervisor) -> Verdict:


    where.mkdir(parents=True, exist_ok=True)
    if stage.files:
        for name, text in stage.files.items():
            (where / "run" / name).parent.mkdir(parents=True, exist_ok=True)
            (where / "run" / name).write_text(text)
        folder = (where / "run" / stage.script).parent
    else:
        folder = Path(stage.source)
    argv = [python, "-m", MODULE, "--folder", str(folder), "--job", stage.job, "--line", str(stage.line),
            "--gpus", str(stage.gpus), "--nodes", str(stage.nodes), "--scratch", str(where / "scratch")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        x for x in (root(), os.environ.get("PYTHONPATH", "")) if x), "PYTHONUNBUFFERED": "1",
        "RAY_USAGE_STATS_ENABLED": "0"}
    log = where / "inside.log"
    t0 = time.monotonic()
    rc = sup.run(stage.name, argv, env=env, log=log, cwd=folder)
    _drop_ray_temp(where / "scratch" / "ray-temp")
    return verdict(log, where.parent, rc, time.monotonic() - t0, stage.why, stage.gpus)


def verdict(log: Path, root: Path, rc: int | None, seconds: float, why: str = "", gpus: int = 0
            ) -> Verdict:
    """A stage's verdict from inside.py's log: its StepRecord lines, the first failing step's cause;
    ok only when every step of inside.py's STEPS (each of which it runs) has passed."""
    from whileai.rehearse.verdict import Cause, Verdict, lines_of, relative
    from whileai.targets.verl.rehearse.context import StepRecord
    from whileai.targets.verl.rehearse.inside import STEPS

    want = STEPS
    steps: list[tuple[int, StepRecord]] = []
    for i, text in enumerate(lines_of(log)):
        if text.startswith('{"name": '):
            try:
                steps.append((i + 1, StepRecord.from_json(text)))
            except (ValueError, TypeError):
                continue
    dicts = [_asdict(s) for _, s in steps]
    for d in dicts:
        d.setdefault("facts", {})
        if why and d["name"] == "pools":
            d["facts"].setdefault("node", f"{gpus or 'its own'} GPU(s): {why}")
    bad = next(((n, s) for n, s in steps if not s.ok), None)
    if rc is None:
        return Verdict(False, seconds, dicts, Cause(relative(log, root), len(lines_of(log)),
                       "the rehearsal's --timeout came first"), timed_out=True,
                       summary=f"failed: timed out after {seconds:.0f} s")
    if bad is not None:
        n, s = bad
        file, _, line = s.cause.rpartition(":")
        cause = (Cause(file, int(line), s.error) if file and line.isdigit()
                 else Cause(relative(log, root), n, s.error))
        return Verdict(False, seconds, dicts, cause, summary=f"failed: {s.name}: {s.error}")
    if rc != 0 or not steps:
        from whileai.rehearse.verdict import first_exception

        when = "after its last step" if steps else "before any step"
        cause = first_exception(log, root) or Cause(relative(log, root), len(lines_of(log)),
                                                      f"verl's python exited {rc} {when}")
        return Verdict(False, seconds, dicts, cause, summary=f"failed: exit {rc}: {cause.text}")
    missing = [name for name in want if name not in {s.name for _, s in steps}]
    if missing:  # exit 0 short of the steps inside.py runs: a verdict on part of the stage is none
        cause = Cause(relative(log, root), len(lines_of(log)),
                      f"verl's python exited 0 without the steps {', '.join(missing)}")
        return Verdict(False, seconds, dicts, cause, summary=f"failed: exit 0 after {len(steps)} of "
                       f"{len(want)} steps: {cause.text}")
    names = ", ".join(s.name for _, s in steps)
    return Verdict(True, seconds, dicts, summary=f"ok: {names} in {seconds:.0f} s")


def step_line(s: dict[str, Any]) -> str:
    """One step: its verdict and facts, then what ran for real and what stood in (one a line)."""
    head = f"    {s['name']}: {'ok' if s['ok'] else 'failed'} ({s.get('seconds', 0):.1f} s)"
    if not s["ok"] and s.get("error"):
        head += f": {s['error']}" + (f" ({s['cause']})" if s.get("cause") else "")
    facts = "; ".join(f"{k} {_fact(v)}" for k, v in (s.get("facts") or {}).items())
    out = [head + (f"; {facts}" if facts else "")]
    out += [f"      ran: {x}" for x in s.get("ran") or []]
    out += [f"      stood in: {x}" for x in s.get("stood_in") or []]
    return "\n".join(out)


def _fact(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (dict, list)) else str(v)


def _asdict(s: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(s)


def _drop_ray_temp(record: Path) -> None:
    """Ray's short session folder outside the stage's (pools.py), left by a stage that was killed."""
    import shutil
    import tempfile

    try:
        temp = Path(record.read_text().strip())
    except OSError:
        return
    if temp.parent == Path(tempfile.gettempdir()) and temp.name.startswith("wr-ray-"):
        shutil.rmtree(temp, ignore_errors=True)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "stage"

