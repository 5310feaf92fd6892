"""verl's rehearsal of one arm, the bundled OPD example: median of three runs, in seconds after
verl's import (a benchmark, not a test). Needs verl's Python (docs/rehearse.md, "verl"):

    WHILEAI_VERL_PYTHON=/path/to/verl-venv/bin/python python benchmarks/bench_verl_rehearse.py [--runs 3]

Each run is the real command in a fresh process, `whileai rehearse examples/opd.toml -t verl
--json`; `import verl` in verl's Python is timed once beside them, and each run's wall time less
that import is the figure held to the target (120 s). Prints, per run, the wall time, each step's
seconds and verdict, and the load average before and after (/proc/loadavg: a shared machine's
runs are slower). A step not built yet counts as a failed step; its seconds are still measured.

Measured: see docs/rehearse.md, "verl" (the numbers and the machine they came from).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 120.0


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ", 1)[0]
    except OSError:
        return "?"


def import_seconds(python: str, runs: int = 3) -> float:
    """`import verl` in a fresh process of verl's Python: the median of `runs`."""
    took = []
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run([python, "-c", "import verl"], capture_output=True, check=True)
        took.append(time.monotonic() - t0)
    return statistics.median(took)


def once(arm: Path) -> tuple[float, dict[str, object]]:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "whileai", "rehearse", str(arm), "-t", "verl", "--json"],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - t0
    try:
        return wall, dict(json.loads(r.stdout))
    except ValueError:
        raise SystemExit(f"no JSON from whileai rehearse: {(r.stderr or r.stdout)[-800:]}") from None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--arm", type=Path, default=ROOT / "examples" / "opd.toml")
    a = ap.parse_args()
    python = os.environ.get("WHILEAI_VERL_PYTHON")
    if not python:
        print("error: WHILEAI_VERL_PYTHON names no Python with verl 0.9.1 (docs/rehearse.md, 'verl')",
              file=sys.stderr)
        return 2
    imported = import_seconds(python)
    print(f"import verl: {imported:.1f} s (median of 3)")
    walls = []
    for i in range(a.runs):
        before = load()
        wall, found = once(a.arm)
        walls.append(wall)
        stages = found.get("stages") or []
        steps = [s for st in stages if isinstance(st, dict) for s in st.get("steps", [])]
        said = ", ".join(f"{s['name']} {'ok' if s['ok'] else 'failed'} {s['seconds']:.1f} s" for s in steps)
        print(f"run {i + 1}: {wall:.1f} s wall, {wall - imported:.1f} s after verl's import; "
              f"ok={found.get('ok')}; {said}; load {before} -> {load()}")
    median = statistics.median(walls) - imported
    print(f"median after verl's import: {median:.1f} s (target {TARGET_S:.0f} s): "
          f"{'met' if median <= TARGET_S else 'NOT met'}")
    return 0 if median <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
