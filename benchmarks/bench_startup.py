"""Start-up and compile speed, measured side by side (a benchmark, not a timed test).

    python benchmarks/bench_startup.py [--rounds 15] [--no-anchor] [--anchor-venv DIR] [--instructions]

Reports medians of interleaved rounds:
  floor      a minimal pydantic program: import pydantic, define one BaseModel, validate once
  compile    `whileai compile examples/opsd.toml -o DIR`, a fresh DIR each time
             (target: <= 1.5x the floor, as the median of paired rounds: compile, then the floor)
  compile-print  the same without -o (the report only)
  snippet    the seed snippet: three arms through the Python API, written to disk
  anchor     the same snippet with PyPI whileai==0.131 (the closest existing tool) in its own
             venv under benchmarks/.anchor-venv, "grpo" as a string (target: ours <= 0.6x it)

whileai is byte-compiled first, as `pip install .` leaves it: with PYTHONDONTWRITEBYTECODE set
(as on some CI machines) an editable checkout would otherwise recompile every module on every
run, which measures the environment, not whileai. Wall times on a shared VM are noisy;
--instructions also counts each case's instructions with valgrind's callgrind, the anchor
included (its venv's python by its own path, never the interpreter the link points to, so the
venv is the one that runs; PYTHONHASHSEED=0, so a count repeats to the digit), and prints both
ratios by instructions.
"""

from __future__ import annotations

import argparse
import compileall
import os
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


def anchor_python(venv: Path) -> Path | None:
    py = venv / "bin" / "python"  # by its own path: the venv's interpreter, not the one it links to
    if py.exists():
        return py
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "whileai==0.131"], capture_output=True)
    if r.returncode:
        shutil.rmtree(venv, ignore_errors=True)
        print("anchor: could not install whileai==0.131; skipped", file=sys.stderr)
        return None
    return py


def env_for(argv: list[str]) -> dict[str, str]:
    """The anchor runs its own venv's packages: no PYTHONPATH pointing at this checkout."""
    if argv[0] == sys.executable:
        return dict(os.environ)
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def instructions(argv: list[str], cwd: Path) -> int | None:
    if not shutil.which("valgrind"):
        return None
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                       cwd=cwd, capture_output=True, text=True, env=env_for(argv) | {"PYTHONHASHSEED": "0"})
    found = [line for line in r.stderr.splitlines() if "Collected :" in line]
    return int(found[-1].split()[-1]) if found else None


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=env_for(argv))
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-anchor", action="store_true")
    ap.add_argument("--anchor-venv", type=Path, default=ANCHOR_VENV,
                    help="the anchor's venv (made here with whileai==0.131 when missing)")
    ap.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    args = ap.parse_args()
    compileall.compile_dir(str(ROOT / "whileai"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="whileai-bench-"))
    cases = {
        "floor": [sys.executable, "-c", FLOOR],
        "compile": [sys.executable, "-m", "whileai", "compile", str(ROOT / "examples" / "opsd.toml"),
                    "-o", "out"],
        "compile-print": [sys.executable, "-m", "whileai", "compile",  # without -o: the report only
                          str(ROOT / "examples" / "opsd.toml")],
        "snippet": [sys.executable, "-c", SNIPPET.replace("GRPO", "wai.GRPO()")],
    }
    anchor = None if args.no_anchor else anchor_python(args.anchor_venv)
    if anchor:
        cases["anchor"] = [str(anchor), "-c", SNIPPET.replace("GRPO", '"grpo"')]

    def empty() -> Path:  # every run starts in an empty folder: nothing to overwrite
        return Path(tempfile.mkdtemp(dir=work))

    for argv in cases.values():  # warm caches (.pyc, page cache)
        timed(argv, empty())
    samples: dict[str, list[float]] = {k: [] for k in cases}
    order = ["compile", "floor", *[k for k in cases if k not in ("compile", "floor")]]
    for _ in range(args.rounds):
        for name in order:
            argv = cases[name]
            samples[name].append(timed(argv, empty()))
    med = {k: statistics.median(v) for k, v in samples.items()}
    for k, v in med.items():
        print(f"{k:8s} median {v * 1000:7.1f} ms  (min {min(samples[k]) * 1000:.1f}, n={args.rounds})")
    print(f"compile / floor = {med['compile'] / med['floor']:.2f}  (ratio of medians; target <= 1.5)")
    # as a person waits for it: each round runs compile, then the floor, in turn; the median of
    # those paired ratios is the number the target is held to (a shared VM's noise hits both)
    for case in ("compile", "compile-print"):
        paired = [c / f for c, f in zip(samples[case], samples["floor"], strict=True)]
        print(f"{case} / floor, median of {len(paired)} paired rounds = {statistics.median(paired):.2f}"
              "  (target <= 1.5)")
    if "anchor" in med:
        print(f"snippet / anchor = {med['snippet'] / med['anchor']:.2f}  (target <= 0.6)")
    if args.instructions:
        counts = {k: instructions(argv, empty()) for k, argv in cases.items()}
        known = {k: v for k, v in counts.items() if v is not None}
        if len(known) == len(counts):
            for k, v in known.items():
                print(f"{k:8s} {v / 1e6:8.0f} M instructions")
            print(f"compile / floor = {known['compile'] / known['floor']:.2f} (instructions; target <= 1.5)")
            if "anchor" in known:
                print(f"snippet / anchor = {known['snippet'] / known['anchor']:.2f} (instructions; "
                      "target <= 0.6)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
