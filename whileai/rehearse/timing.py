"""Where a rehearsal's time goes, per phase (the `phases` of `--json`, benchmarks/bench_rehearse.py),
whatever the target; a target's rehearsal times the first three itself and reads the last four
from its stand-ins' own time stamps:

- environment: the offline copy of the config, the stand-in commands and the stage's environment;
- tiny model: building the stand-in model and tokenizer (once per rehearsal);
- rows: writing the local rows and caching them as the target's data loader reads them;
- launcher: from the target's launcher starting to the first call the policy's stand-in answers;
- first step: from that call to the trainer stand-in's first step (a run that never reaches
  one: to the launcher's exit, the failure's phase);
- steps: from the first step to the last;
- shutdown: from the last step to the launcher's exit.

    ph = Phases(); with ph("rows"): write_rows(...)
    ph.add("launcher", 12.5); ph.ordered()
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

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

    def ordered(self) -> dict[str, float]:
        return {k: self[k] for k in ORDER if k in self}


__all__ = ["ORDER", "Phases"]
