"""A two-step rehearsal of the bundled OPD arm: wall time and where it goes (a benchmark, not a
test). Needs the rehearsal environment (docs/rehearse.md; not built by whileai):

    WHILEAI_REHEARSE_PYTHON=/path/to/prime-rl/.venv/bin/python python benchmarks/bench_rehearse.py [--runs 1]

Runs the real command in a fresh process, `whileai rehearse examples/opd.toml --steps 2 --json`,
and prints, per run, the wall time and the `phases` of its JSON (whileai.rehearse.timing:
environment, tiny model, rows, launcher, first step, steps). Target: at most 150 s on an idle
2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 150.0


def once() -> tuple[float, dict[str, float], bool]:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "whileai", "rehearse", str(ROOT / "examples" / "opd.toml"),
                        "--steps", "2", "--json"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - t0
    try:
        found = json.loads(r.stdout)
    except ValueError:
        raise SystemExit(f"no JSON from whileai rehearse: {(r.stderr or r.stdout)[-800:]}") from None
    return wall, found.get("phases", {}), bool(found.get("ok"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    if not os.environ.get("WHILEAI_REHEARSE_PYTHON"):
        print("set WHILEAI_REHEARSE_PYTHON to the rehearsal environment's python (docs/rehearse.md)")
        return 2
    worst = 0.0
    for i in range(a.runs):
        wall, phases, ok = once()
        worst = max(worst, wall)
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in phases.items())
        print(f"run {i + 1}: {'ok' if ok else 'FAILED'} in {wall:.1f} s ({parts})")
    verdict = "met" if worst <= TARGET_S else "missed"
    print(f"worst {worst:.1f} s against the {TARGET_S:.0f} s target: {verdict}")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
