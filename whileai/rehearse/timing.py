"""Where a rehearsal's time goes, per phase (the `phases` of `--json`, benchmarks/rehearse_phases.py):

- environment: the offline copy of the config, the stand-in commands and the stage's environment;
- tiny model: building the stand-in model and tokenizer (once per rehearsal);
- rows: writing the local rows and caching them as the datasets library reads them;
- launcher: from `rl` starting to the first call the policy's stand-in answers (the launcher,
  the orchestrator's and env servers' imports and start-up, the stand-in's own); a teacher's
  stand-in, started before `rl` and asked as soon as `rl` starts, does not end it;
- first step: from that call to the trainer stand-in's first step (a run that never reaches
  one: to `rl`'s exit, the failure's phase);
- steps: from the first step to the last;
- shutdown: from the last step to `rl`'s exit (the orchestrator's evals at the last step, its
  draining, every process stopping): measured 22 s of the bundled OPD arm's 117 s.

    ph = Phases(); with ph("rows"): write_rows(...)
    ph.after_rl(where, started, ended)  # the last four, from the stand-ins' own time stamps
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ORDER = ("environment", "tiny model", "rows", "launcher", "first step", "steps", "shutdown")


class Phases(dict[str, float]):
    """Seconds per phase, summed over the stages."""

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - t0)

    def add(self, name: str, seconds: float) -> None:
        self[name] = round(self.get(name, 0.0) + max(0.0, seconds), 2)

    def after_rl(self, where: Path, started: float, ended: float | None = None,
                 ports: set[int] | None = None) -> None:
        """launcher, first step and steps from the calls the stand-ins logged and the trainer's
        steps (epoch seconds); `started`: time.time() when `rl` was started, `ended` when it
        exited (shutdown); `ports`: the policy's (calls/<port>.jsonl; None: every port)."""
        calls = []
        for f in sorted((where / "calls").glob("*.jsonl")):
            if ports is None or (f.stem.isdigit() and int(f.stem) in ports):
                calls += [json.loads(x)["t"] for x in _lines(f)]
        steps = [json.loads(x)["t"] for x in _lines(where / "trainer-steps.jsonl")]
        first_call = min((t for t in calls if t >= started), default=None)
        if first_call is None:
            return
        self.add("launcher", first_call - started)
        if steps:
            self.add("first step", steps[0] - first_call)
            self.add("steps", steps[-1] - steps[0])
            if ended is not None:
                self.add("shutdown", ended - steps[-1])
        elif ended is not None:
            self.add("first step", ended - first_call)

    def ordered(self) -> dict[str, float]:
        return {k: self[k] for k in ORDER if k in self}


def _lines(f: Path) -> list[str]:
    try:
        return [x for x in f.read_text().splitlines() if x.strip()]
    except OSError:
        return []


__all__ = ["ORDER", "Phases"]
