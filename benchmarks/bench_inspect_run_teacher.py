"""`whileai inspect --run` scoring 1,000 samples of 1,000 tokens against a stand-in teacher: wall
time and peak memory, median of three (a benchmark, not a test).

    python benchmarks/bench_inspect_run_teacher.py [--runs 3] [--data /tmp/whileai-bench-teacher]

Writes (once; reused) 10 steps x 2 ranks x 50 sequences of 100 prompt + 900 completion tokens
in prime-rl 559b447's layout (tests/tokenview/token_export_gen.py) into /tmp, never the
repository; starts the stand-in teacher (tests/fake_teacher.py: prime-rl's
/inference/v1/generate with prompt_logprobs, a real HTTP server on 127.0.0.1) in a process of
its own; then runs, each in a fresh process,

    whileai inspect --run DATA --teacher-endpoint vllm:stand-in/teacher@URL --pick all -o OUT --force

(every one of the 1,000 samples scored, top-5 alternatives per token) and, for comparison, the
same command without a teacher (reading alone). Reported: wall and peak resident memory of each
(the child's ru_maxrss), the median of --runs. Targets: scoring (the difference) at most 30 s,
the whole command at most 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tokenview"))
STEPS, RANKS, SEQUENCES, PROMPT, COMPLETION = 10, 2, 50, 100, 900
PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")


def make(data: Path) -> None:
    from token_export_gen import write_run

    stamp = data / "bench.json"
    want = [STEPS, RANKS, SEQUENCES, PROMPT, COMPLETION]
    if stamp.is_file() and json.loads(stamp.read_text()) == want:
        return
    write_run(data, steps=STEPS, ranks=RANKS, sequences=SEQUENCES, prompt=PROMPT, completion=COMPLETION,
              vocab=151_000, seed=2)
    stamp.write_text(json.dumps(want))


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one fresh process."""
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "whileai", *args],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    kib, rc = done.stdout.split()[-2:]
    if rc != "0":
        raise SystemExit(f"failed: {done.stderr[-2000:]}")
    return wall, int(kib) / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "whileai-bench-teacher")
    args = ap.parse_args(argv)
    make(args.data)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake_teacher.py"), "-", "1800"],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = (server.stdout.readline() if server.stdout else "").strip()
        out = Path(tempfile.mkdtemp(prefix="whileai-bench-teacher-view-"))
        base = ["inspect", "--run", str(args.data), "-o", str(out), "--force"]
        teacher = [*base, "--teacher-endpoint", f"vllm:stand-in/teacher@{url}", "--pick", "all"]
        runs = {"read only": [timed(base, env) for _ in range(args.runs)],
                "with teacher": [timed(teacher, env) for _ in range(args.runs)]}
    finally:
        server.terminate()
        server.wait(timeout=30)
    report = json.loads((out / "inspect-run.json").read_text())["teacher"]
    print(f"{len(report['samples'])} samples, {report['overall']['tokens']:,} scored tokens "
          f"({STEPS} steps x {RANKS} ranks x {SEQUENCES} sequences of {PROMPT + COMPLETION} tokens)")
    med = {k: (statistics.median(w for w, _ in v), max(m for _, m in v)) for k, v in runs.items()}
    for k, v in runs.items():
        print(f"  {k:>12}: wall {', '.join(f'{w:.1f}' for w, _ in v)} s (median {med[k][0]:.1f}), "
              f"peak RSS {', '.join(f'{m:.0f}' for _, m in v)} MB")
    scoring = med["with teacher"][0] - med["read only"][0]
    print(f"  scoring (median with teacher - median read only): {scoring:.1f} s (target <= 30 s); "
          f"peak RSS {med['with teacher'][1]:.0f} MB (target <= 300 MB)")
    ok = scoring <= 30 and med["with teacher"][1] <= 300
    print("  ok" if ok else "  OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
