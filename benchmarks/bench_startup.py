"""Start-up and compile speed, measured side by side (a benchmark, not a timed test).

    python benchmarks/bench_startup.py [--rounds 15] [--no-anchor]

Reports medians of interleaved rounds:
  floor      a minimal pydantic program: import pydantic, define one BaseModel, validate once
  compile    `whileai compile examples/opsd.toml -o DIR` (target: <= 1.5x the floor)
  snippet    the seed snippet: three arms through the Python API, written to disk
  anchor     the same snippet with PyPI whileai==0.131 (the closest existing tool) in its own
             venv under benchmarks/.anchor-venv, "grpo" as a string (target: ours no slower)
"""

from __future__ import annotations

import argparse
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


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-anchor", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="whileai-bench-"))
    (work / "ours").mkdir()
    (work / "anchor").mkdir()
    cli = shutil.which("whileai")
    compile_argv = ([cli] if cli else [sys.executable, "-m", "whileai"]) + [
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
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
