"""Plant small bugs in the core one at a time and say which the tests catch (a mutation check).

Usage:

    python scripts/mutants.py                  # every mutant (scripts/mutants_list.py)
    python scripts/mutants.py --changed main   # the mutants of files changed since main (and
                                               #   of their tests), uncommitted changes included
    python scripts/mutants.py --only seed-written-as-0 --only upward-import
    python scripts/mutants.py --list           # the mutants, each file and its tests; nothing run

Run before each stop on what changed (docs/mutants.md). The working tree is copied once (tracked
files and untracked ones git does not ignore) into a temporary folder; each mutant is planted there,
its few tests run (`pytest -x`, in the order listed, with the copy first on PYTHONPATH), and the file
put back. The worktree itself is never written. First the mutants' tests run on the unmutated copy:
a mutant caught by a test that fails anyway proves nothing. Exit 0 when every mutant is caught; 1
when one survives or is stale (its snippet is not in its file exactly once); 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants_list import MUTANTS, Mutant  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAILED = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", re.M)


def stale(m: Mutant, root: Path = ROOT) -> str | None:
    """Why the mutant cannot be planted in `root`'s tree, or None."""
    path = root / m.file
    if not path.is_file():
        return f"{m.file} is not there"
    n = path.read_text(encoding="utf-8").count(m.original)
    if n != 1:
        return f"its original snippet is in {m.file} {n} times, not once"
    if m.original == m.mutated:
        return "its mutated snippet is its original"
    missing = [t for t in m.tests if not (root / t.split("::")[0]).exists()]
    return f"its tests are not there: {', '.join(missing)}" if missing else None


def changed(base: str) -> set[str]:
    """Files changed since `base` (committed or not), and files git does not know yet."""
    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"error: --changed: git {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout.splitlines()

    return set(git("diff", "--name-only", base)) | set(git("ls-files", "--others", "--exclude-standard"))


def select(only: Sequence[str], since: str | None) -> list[Mutant]:
    names = {m.name for m in MUTANTS}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise SystemExit(f"error: --only: {', '.join(unknown)}: not a mutant; one of "
                         f"{', '.join(sorted(names))}")
    picked = [m for m in MUTANTS if not only or m.name in only]
    if since is None:
        return picked
    files = changed(since)
    return [m for m in picked if m.file in files
            or any(f == t.split("::")[0] or f.startswith(t.rstrip("/") + "/")
                   for t in m.tests for f in files)]


def copy_tree(dest: Path) -> None:
    """The worktree's files as git sees them (tracked, and untracked not ignored) under `dest`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


MARK = "WHILEAI_MUTANTS_RUN"  # set in the tests' environment: what they start inherits it


def pytest(copy: Path, tests: Iterable[str], timeout: float) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(copy), str(copy / "tests"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "PYTHONDONTWRITEBYTECODE": "1", MARK: str(copy)}
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                            "--no-header", *tests], cwd=copy, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout:.0f} s"
    finally:
        left = leftovers(str(copy))
    out = r.stdout + r.stderr
    return r.returncode, out + (f"\nstopped {len(left)} process(es) the tests left: {left}" if left else "")


def leftovers(copy: str) -> list[int]:
    """Stop (SIGKILL) the processes a mutant's tests left running: those whose environment holds
    this run's mark (a planted bug may be one that leaves children behind). Linux's /proc only."""
    import signal

    needle = f"{MARK}={copy}".encode()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                os.kill(int(proc.name), signal.SIGKILL)
                found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return found


def run(mutants: list[Mutant], timeout: float, baseline: bool) -> int:
    bad = [(m, why) for m in mutants if (why := stale(m))]
    for m, why in bad:
        print(f"stale     {m.name}: {why}")
    todo = [m for m in mutants if m not in {b for b, _ in bad}]
    with tempfile.TemporaryDirectory(prefix="whileai-mutants-") as tmp:
        copy = Path(tmp)
        copy_tree(copy)
        if baseline and todo:
            tests = list(dict.fromkeys(t for m in todo for t in m.tests))
            rc, out = pytest(copy, tests, timeout * 3)
            if rc != 0:
                print(f"error: the mutants' tests fail with no mutant planted (exit {rc}):\n{out[-3000:]}")
                return 2
        survived = 0
        for m in todo:
            path = copy / m.file
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(m.original, m.mutated), encoding="utf-8")
            start = time.monotonic()
            try:
                rc, out = pytest(copy, m.tests, timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            took = time.monotonic() - start
            if rc in (1, 2):  # a test failed, or collecting one did (the mutant broke an import)
                found = FAILED.search(out)
                by = found.group(1) if found else "collection"
                print(f"killed    {m.name} ({took:.0f} s) by {by}")
            else:
                survived += 1
                why = "no test failed" if rc == 0 else f"pytest exit {rc}: {out.strip().splitlines()[-1:]}"
                print(f"SURVIVED  {m.name} ({took:.0f} s): {m.breaks}; {why} in {', '.join(m.tests)}")
    print(f"{len(todo) - survived} of {len(todo)} killed, {survived} survived, {len(bad)} stale")
    return 1 if survived or bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changed", metavar="BASE", help="only mutants of files changed since BASE")
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="this mutant (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant's tests")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    args = ap.parse_args(argv)
    mutants = select(args.only, args.changed)
    if args.list:
        for m in mutants:
            print(f"{m.name}: {m.file}: {m.breaks} [{', '.join(m.tests)}]")
        return 0
    if not mutants:
        print("no mutant in the files changed" if args.changed else "no mutant selected")
        return 0
    return run(mutants, args.timeout, not args.no_baseline)


if __name__ == "__main__":
    raise SystemExit(main())
