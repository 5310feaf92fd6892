"""The README's figures about the test suite, measured, never typed by hand.

    python scripts/measure_suite.py               # count the tests, run the whole suite once, time it
    python scripts/measure_suite.py --count-only  # count only (seconds): after adding or removing tests
    python scripts/measure_suite.py --check       # exit 1 when the README's count is not the suite's

In CI (.ci/run) the suite runs with WHILEAI_VERL_PYTHON set; run this the same way (verl's Python:
`python scripts/verl_env.py DIR`) so that the verl tests count as run, not skipped.

It rewrites the block of README.md between the two `measured` markers: the number of tests
`python -m pytest --collect-only -q` collects and, unless --count-only, the wall time of one
`python -m pytest -q` (a fresh tiny-model cache, as a fresh clone has), with the machine's cores,
its 1-minute load average before and after, the outcome line and the date, so a reader can judge
the number. The tests that run against the real tools (marker `real_tool`, set in tests/conftest.py:
TRL's trainer and parser, verl's own code, bash and Hydra's grammar, chromium, the replays of
prime-rl's loader and verl's check) are counted apart, and in a timed run how many of them passed
and how many skipped (each skip names why: `python -m pytest -rs -m real_tool` lists them).
With --count-only the last timed run's sentence stays as it was (it names its count).
tests/test_docs.py checks that the README's count is the suite's.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN = "<!-- measured by scripts/measure_suite.py: do not edit by hand -->"
END = "<!-- end of measured -->"
COUNT = re.compile(r"The suite holds \*\*([\d,]+) tests\*\*")
REAL = re.compile(r"\*\*([\d,]+)\*\* of them against the real tools")
REAL_TOOLS = ("TRL's trainer and parser, verl 0.9.1's own code, bash and Hydra's override grammar, "
              "chromium, and prime-rl's loader and verl's check replayed from their recorded verdicts")


def _env(cache: str | None = None) -> dict[str, str]:
    paths = [str(ROOT), *[p for p in [os.environ.get("PYTHONPATH")] if p]]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    if cache is not None:
        env["WHILEAI_CACHE"] = cache
    return env


def collected(marker: str | None = None) -> tuple[int, str]:
    """(tests collected, pytest's last line): `python -m pytest --collect-only -q [-m marker]`."""
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *(["-m", marker] if marker else [])],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
    )
    last = (p.stdout.strip().splitlines() or [""])[-1]
    m = re.match(r"(\d+)(?:/\d+)? tests? collected", last)
    if p.returncode != 0 or m is None:
        raise SystemExit(f"error: pytest --collect-only failed: {last or p.stderr.strip()[-300:]}")
    return int(m.group(1)), last


def timed_run(count: int) -> tuple[str, int]:
    """One run of the whole suite: its sentence for the README, and pytest's exit code."""
    cache = tempfile.mkdtemp(prefix="whileai-measure-")
    outcomes = Path(cache) / "real-tool-outcomes.json"
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    try:
        env = _env(cache) | {"WHILEAI_MEASURE_OUT": str(outcomes)}
        env["PYTHONPATH"] += os.pathsep + str(ROOT / "scripts")
        p = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "measure_plugin"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        real = json.loads(outcomes.read_text()) if outcomes.exists() else {}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    wall, load1 = time.perf_counter() - t0, os.getloadavg()[0]
    outcome = re.sub(r"=+|\bin [\d.]+s.*", "", (p.stdout.strip().splitlines() or ["?"])[-1]).strip()
    sentence = (
        f"Its last full run, of {count:,} tests (`python -m pytest`, TRL tiny-model training "
        f"included), took **{wall:,.0f} s** on {os.cpu_count()} CPU cores, load {load0:.1f} before "
        f"and {load1:.1f} after ({outcome}), {datetime.date.today().isoformat()}. Against the real "
        f"tools: {split(real)}."
    )
    return sentence, p.returncode


def split(outcomes: dict[str, str]) -> str:
    """`12 passed, 3 skipped` of the real-tool tests' outcomes (measure_plugin.py writes them)."""
    counts = {o: list(outcomes.values()).count(o) for o in ("passed", "failed", "skipped")}
    return ", ".join(f"{n:,} {o}" for o, n in counts.items() if n) or "none ran"


def block(count: int, real: int, timing: str) -> str:
    return (
        f"{BEGIN}\nThe suite holds **{count:,} tests** (`python -m pytest --collect-only -q`), "
        f"**{real:,}** of them against the real tools (`-m real_tool`: {REAL_TOOLS}). "
        f"{timing}\n{END}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--count-only", action="store_true", help="count the tests; keep the last timing")
    how.add_argument("--check", action="store_true", help="compare the README's count; write nothing")
    a = ap.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"error: README.md has no block between {BEGIN!r} and {END!r}")
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    count, last = collected()
    real, _ = collected("real_tool")
    if a.check:
        m, r = COUNT.search(old), REAL.search(old)
        shown = int(m.group(1).replace(",", "")) if m else None
        shown_real = int(r.group(1).replace(",", "")) if r else None
        print(f"README: {shown} tests, {shown_real} against the real tools; pytest: {last}, {real} real_tool")
        return 0 if (shown, shown_real) == (count, real) else 1
    if a.count_only:
        before = re.search(r"Its last full run.*", old, flags=re.S)
        timing = (
            before.group(0).strip() if before else "Not timed yet: run `python scripts/measure_suite.py`."
        )
    else:
        timing, code = timed_run(count)
    README.write_text(head + block(count, real, timing) + tail, encoding="utf-8")
    print(block(count, real, timing))
    return 0 if a.count_only else code  # a failing suite is written down, and exits non-zero


if __name__ == "__main__":
    sys.exit(main())
