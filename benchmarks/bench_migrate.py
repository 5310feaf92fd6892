"""`whileai migrate` on all 131 fixture files in one call: wall time, median of rounds (a benchmark,
not a timed test; the test tests/targets/prime_rl/test_migrate.py checks what it writes).

    python benchmarks/bench_migrate.py [--rounds 5]

The promise (docs/migrate.md): under 2 s for the whole history in one call. Prints each round's
wall time and the time migrate reports for itself, the median of both against the target, and the
load average before and after (/proc/loadavg: a shared machine's runs are slower). Exits 1 when
the median wall time is over the target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-history.json"
TARGET_S = 2.0


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def one_round(pairs: list[dict[str, str]]) -> tuple[float, float]:
    """(wall seconds, the seconds migrate's own summary line reports)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, p in enumerate(pairs):
            (folder / f"{i:03d}.toml").write_text(p["old_toml"])
        files = sorted(map(str, folder.glob("*.toml")))
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "whileai", "migrate", *files, "-o", str(folder / "new"),
                               "--allow-drops", "--force"], capture_output=True, text=True,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            sys.exit(f"migrate failed: {done.stderr[-2000:]}")
        said = float(" ".join(done.stdout.split()).rsplit(" in ", 1)[1].split()[0])
        return wall, said


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    pairs = json.loads(FIXTURE.read_text())
    before = load()
    rounds = [one_round(pairs) for _ in range(args.rounds)]
    for i, (wall, said) in enumerate(rounds, 1):
        print(f"round {i}: {wall:.2f} s wall, {said:.2f} s by migrate's own count")
    wall = statistics.median(w for w, _ in rounds)
    print(f"{len(pairs)} files in one call: median {wall:.2f} s wall (target < {TARGET_S} s), "
          f"{statistics.median(s for _, s in rounds):.2f} s by migrate's count; load {before} before, "
          f"{load()} after")
    sys.exit(0 if wall < TARGET_S else 1)


if __name__ == "__main__":
    main()
