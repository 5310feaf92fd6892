"""`whileai inspect --run` on a large export: wall time and peak memory (a benchmark, not a test).

    python benchmarks/bench_inspect_run.py [--mb 300] [--steps 30] [--data /tmp/whileai-bench-exports]

Writes (once; reused while its size and step count match) an export of about --mb megabytes
over --steps steps in prime-rl 559b447's layout with tests/tokenview/token_export_gen.py, into /tmp, never
the repository: 2 ranks per step, sequences of 200 prompt + 630 completion tokens, two envs.
Then runs the real command in a fresh process,

    whileai inspect --run DATA -o OUT --force

and reports its wall time and peak resident memory (the child's ru_maxrss, as /usr/bin/time -v
reports it). Targets: under 60 s and under 600 MB for 300 MB of 30 steps.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tokenview"))
BYTES_PER_TOKEN = 190  # whileai.cost.estimate.EXPORT_BYTES_PER_TOKEN
PROMPT, COMPLETION, RANKS = 200, 630, 2


def make(data: Path, mb: int, steps: int) -> int:
    from token_export_gen import write_run

    stamp = data / "bench.json"
    want = {"mb": mb, "steps": steps, "prompt": PROMPT, "completion": COMPLETION, "ranks": RANKS}
    if stamp.is_file() and json.loads(stamp.read_text()) == want:
        return sum(p.stat().st_size for p in data.rglob("*.jsonl"))
    per_step = mb * 1e6 / steps / BYTES_PER_TOKEN / (PROMPT + COMPLETION)
    sequences = max(1, round(per_step / RANKS))
    t = time.perf_counter()
    write_run(data, steps=steps, ranks=RANKS, sequences=sequences, prompt=PROMPT,
              completion=COMPLETION, envs=("reverse-text", "gsm8k"), vocab=151_000, seed=1)
    stamp.write_text(json.dumps(want))
    size = sum(p.stat().st_size for p in data.rglob("*.jsonl"))
    print(f"wrote {size / 1e6:.0f} MB ({steps} steps x {RANKS} ranks x {sequences} sequences) "
          f"in {time.perf_counter() - t:.0f}s to {data}", file=sys.stderr)
    return size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=300)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "whileai-bench-exports")
    args = ap.parse_args(argv)
    size = make(args.data, args.mb, args.steps)
    out = Path(tempfile.mkdtemp(prefix="whileai-bench-view-"))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "whileai", "inspect", "--run", str(args.data), "-o",
                           str(out), "--force"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return 1
    report = json.loads((out / "inspect-run.json").read_text())
    rd = report["reading"]
    print(f"inspect --run: {rd['bytes_read'] / 1e6:.0f} MB ({size / 1e6:.0f} MB on disk), "
          f"{len(rd['steps_read'])} steps, {rd['records']} sequences, "
          f"{sum(s['tokens'] for s in report['steps']):,} tokens")
    print(f"  wall {wall:.1f}s (target < 60s), peak RSS {peak_mb:.0f} MB (target < 600 MB), "
          f"page {(out / 'inspect-run.html').stat().st_size / 1e6:.1f} MB, "
          f"json {(out / 'inspect-run.json').stat().st_size / 1e6:.1f} MB")
    ok = wall < 60 and peak_mb < 600
    print("  ok" if ok else "  OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
