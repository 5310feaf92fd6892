"""Start-up and compile speed, measured side by side (a benchmark, not a timed test).

    python benchmarks/bench_startup.py [--rounds 15] [--no-anchor] [--instructions]

Reports medians of interleaved rounds:
  floor      a minimal pydantic program: import pydantic, define one BaseModel, validate once
  compile    `whileai compile examples/opsd.toml -o DIR` (target: <= 1.5x the floor)
  snippet    the seed snippet: three arms through the Python API, written to disk
  anchor     the same snippet with PyPI whileai==0.131 (the closest existing tool) in its own
             venv under benchmarks/.anchor-venv, "grpo" as a string (target: ours no slower)

whileai is byte-compiled first, as `pip install .` leaves it: with PYTHONDONTWRITEBYTECODE set
(as on some CI machines) an editable checkout would otherwise recompile every module on every
run, which measures the environment, not whileai. Wall times on a shared VM are noisy;
--instructions also counts instructions with valgrind's callgrind (repeatable to the digit).
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANCHOR_VENV = ROOT / "benchmarks" / ".anchor-venv"
FLOOR = (
    "import pydantic\n"
    "class M(pydantic.BaseModel):\n    a: int\n"
    "M.model_validate({'a': 1})\n"
)
SNIPPET = """
import whileai as wai
teacher = wai.Endpoint(url="http://localhost:8001/v1", model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
arms = {"opd": wai.OPD(teacher), "opsd": wai.OPSD(privileged="answer"), "grpo": GRPO}
for name, m in arms.items():
    cfg = wai.prime_rl_config("reverse-text", m, model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT",
                              out=f"{name}.toml")
    str(cfg)
"""


def anchor_python() -> Path | None:
    py = ANCHOR_VENV / "bin" / "python"
    if py.exists():
        return py
    subprocess.run([sys.executable, "-m", "venv", str(ANCHOR_VENV)], check=True)
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "whileai==0.131"], capture_output=True)
    if r.returncode:
        shutil.rmtree(ANCHOR_VENV, ignore_errors=True)
        print("anchor: could not install whileai==0.131; skipped", file=sys.stderr)
        return None
    return py


def instructions(argv: list[str], cwd: Path) -> int | None:
    if not shutil.which("valgrind"):
        return None
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                       cwd=cwd, capture_output=True, text=True)
    found = [line for line in r.stderr.splitlines() if "Collected :" in line]
    return int(found[-1].split()[-1]) if found else None


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-anchor", action="store_true")
    ap.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    args = ap.parse_args()
    compileall.compile_dir(str(ROOT / "whileai"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="whileai-bench-"))
    (work / "ours").mkdir()
    (work / "anchor").mkdir()
    compile_argv = [sys.executable, "-m", "whileai",
                    "compile", str(ROOT / "examples" / "opsd.toml"), "-o", str(work / "out")]
    cases = {
        "floor": ([sys.executable, "-c", FLOOR], work),
        "compile": (compile_argv, work),
        "snippet": ([sys.executable, "-c", SNIPPET.replace("GRPO", "wai.GRPO()")], work / "ours"),
    }
    anchor = None if args.no_anchor else anchor_python()
    if anchor:
        cases["anchor"] = ([str(anchor), "-c", SNIPPET.replace("GRPO", '"grpo"')], work / "anchor")
    for argv, cwd in cases.values():  # warm caches (.pyc, page cache)
        timed(argv, cwd)
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.rounds):
        for name, (argv, cwd) in cases.items():
            samples[name].append(timed(argv, cwd))
    med = {k: statistics.median(v) for k, v in samples.items()}
    for k, v in med.items():
        print(f"{k:8s} median {v * 1000:7.1f} ms  (min {min(samples[k]) * 1000:.1f}, n={args.rounds})")
    print(f"compile / floor = {med['compile'] / med['floor']:.2f}  (target <= 1.5)")
    if "anchor" in med:
        print(f"snippet / anchor = {med['snippet'] / med['anchor']:.2f}  (target <= 1.0)")
    if args.instructions:
        counts = {k: instructions(argv, cwd) for k, (argv, cwd) in cases.items() if k != "anchor"}
        if all(counts.values()):
            for k, v in counts.items():
                print(f"{k:8s} {v / 1e6:8.0f} M instructions")
            print(f"compile / floor = {counts['compile'] / counts['floor']:.2f} (instructions)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
