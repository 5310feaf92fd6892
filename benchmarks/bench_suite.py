"""Wall time of the whole test suite (a benchmark, not a timed test).

    python benchmarks/bench_suite.py [--rounds 3] [--marks "not trl"] [--slowest 10]

Runs `python -m pytest` over the whole suite (TRL tiny-model training included) `rounds`
times, each in a fresh process with a fresh tiny-model cache (as CI does), and prints each
round's wall and CPU seconds and the 1-minute load average before and after, the median
against the target (< 300 s), and the slowest tests of the first round. The machine is
shared: read the load next to each number.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 300.0


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--marks", default=None, help="a pytest -m expression (default: everything)")
    ap.add_argument("--slowest", type=int, default=10)
    args = ap.parse_args()
    walls = []
    for n in range(1, args.rounds + 1):
        cache = Path(tempfile.mkdtemp(prefix="whileai-bench-suite-"))
        env = dict(os.environ, WHILEAI_CACHE=str(cache), PYTHONPATH=os.pathsep.join(
            [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                f"--durations={args.slowest}"] + (["-m", args.marks] if args.marks else [])
        load0, cpu0, t0 = os.getloadavg()[0], children_cpu(), time.perf_counter()
        p = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
        shutil.rmtree(cache, ignore_errors=True)
        walls.append(wall)
        summary = (p.stdout.strip().splitlines() or ["?"])[-1]
        print(f"round {n}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, load {load0:.2f} -> "
              f"{os.getloadavg()[0]:.2f}: {summary}", flush=True)
        if n == 1:
            slow = [line for line in p.stdout.splitlines() if re.match(r"^\d+\.\d+s (call|setup)", line)]
            first = slow
    print(f"median {statistics.median(walls):.1f} s over {len(walls)} rounds "
          f"(min {min(walls):.1f}); target < {TARGET:.0f} s; cpus: {os.cpu_count()}")
    print("slowest in round 1:\n  " + "\n  ".join(first))


if __name__ == "__main__":
    main()
