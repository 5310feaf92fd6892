"""Wall time of the whole offline TRL recipe (a benchmark, not a timed test).

    python benchmarks/bench_trl_recipe.py [--rounds 3] [--keep] [-- RECIPE OPTIONS...]

Round 1 runs `recipes/04-train/trl/run.py` (every default arm, tiny models, CPU) with an empty
model cache, so it builds and warms up the tiny models; later rounds reuse that cache (what a
user's second run does) with a fresh run folder each. Prints each round's wall and CPU seconds
(the recipe and every process it started) and the 1-minute load average before and after,
then the cold time and the median of the warm rounds against the target (< 180 s). The machine
is shared: read the load next to each number.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "recipes" / "04-train" / "trl" / "run.py"
TARGET = 180.0


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one(work: Path, cache: Path, n: int, extra: list[str]) -> tuple[float, float, float, float, int]:
    env = dict(os.environ, WHILEAI_CACHE=str(cache), PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]), COLUMNS="120")
    load0, cpu0, t0 = os.getloadavg()[0], children_cpu(), time.perf_counter()
    p = subprocess.run([sys.executable, str(RECIPE), "--out", str(work / f"round{n}"), *extra],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    if p.returncode:
        print(f"round {n}: exit {p.returncode}\n{p.stderr[-2000:]}", file=sys.stderr)
    return wall, cpu, load0, os.getloadavg()[0], p.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3, help="1 cold + N-1 warm (cached models)")
    ap.add_argument("--keep", action="store_true", help="keep the run folders and the cache")
    ap.add_argument("extra", nargs="*", help="recipe options after --")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="whileai-bench-trl-"))
    cache = work / "cache"
    rows = []
    for n in range(1, args.rounds + 1):
        wall, cpu, l0, l1, code = one(work, cache, n, args.extra)
        kind = "cold" if n == 1 else "warm"
        rows.append((kind, wall))
        print(f"round {n} ({kind}): {wall:6.1f} s wall, {cpu:6.1f} s CPU, load {l0:.2f} -> {l1:.2f}"
              + (f", exit {code}" if code else ""), flush=True)
    cold = rows[0][1]
    warm = [w for k, w in rows if k == "warm"]
    print(f"cold (builds the tiny models): {cold:.1f} s; target < {TARGET:.0f} s")
    if warm:
        print(f"warm (cached models) median {statistics.median(warm):.1f} s over {len(warm)} "
              f"(min {min(warm):.1f}); target < {TARGET:.0f} s")
    print(f"cpus: {os.cpu_count()}")
    if args.keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
