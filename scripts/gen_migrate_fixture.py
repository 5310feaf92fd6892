"""Build the `whileai migrate` fixture from prime-rl's own history, and record the loader's
verdicts on the migrated files.

    python scripts/gen_migrate_fixture.py [--repo GIT_DIR]                  # the history pairs
    python scripts/gen_migrate_fixture.py --verdicts --loader-python $LOADER  # + loader verdicts

For every `rl` config of the pin's `configs/` and `examples/` (the entry point the pin's loader
verdicts give it, else whileai's detection), the file is followed back through its renames
(`git log --follow`) to the name it had at each release tag (v0.6.0, v0.7.0, v0.8.0); where it
existed there, the pair (old text, the pin's text) is written to
tests/fixtures/prime-rl/migrate-history.json. With --verdicts, every old text is migrated with
this checkout's `whileai migrate --allow-drops --force` (in one call, so a file the
pin's checks refuse is judged by the loader too) and the outputs go through
scripts/prime_rl_loader.py (`--entry rl`) in the loader's Python; the verdicts, keyed
`<tag>:<pin path>`, are written to tests/fixtures/prime-rl/migrate-verdicts.json along with a
hash of each migrated text, so the test knows the verdict is about today's output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPO = Path("/work/.mirror/PrimeIntellect-ai+prime-rl/repo")
from whileai.targets.prime_rl.pin import COMMIT as PIN  # noqa: E402  (stdlib only)

TAGS = ("v0.6.0", "v0.7.0", "v0.8.0")
HISTORY = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-history.json"
VERDICTS = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-verdicts.json"
# the other entry points' files (sft, inference, orchestrator, trainer), each pair naming its entry
ENTRIES_HISTORY = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-entries.json"
ENTRIES_VERDICTS = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-entries-verdicts.json"


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=check)


def entry_files(repo: Path) -> dict[str, str]:
    """Every config of the pin's configs/ and examples/ and its entry point (whileai's
    detection: an rl file has a [trainer] or [orchestrator]); evals/env-server files are left out."""
    import tomllib

    from whileai.targets.prime_rl.check import detect

    names = git(repo, "ls-tree", "-r", "--name-only", PIN, "--", "configs", "examples").stdout.split()
    out = {}
    for name in sorted(n for n in names if n.endswith(".toml")):
        doc = tomllib.loads(git(repo, "show", f"{PIN}:{name}").stdout)
        entry = detect(doc)[0]
        if entry == "rl" and not ("trainer" in doc or "orchestrator" in doc):
            entry = "trainer" if "data" in doc else "rl"  # a trainer-only run file (debug/fake)
        if entry in ("rl", "sft", "inference", "orchestrator", "trainer"):
            out[name] = entry
    return out


def rl_files(repo: Path) -> list[str]:
    return [n for n, e in entry_files(repo).items() if e == "rl" and _has_sub(repo, n)]


def _has_sub(repo: Path, name: str) -> bool:
    import tomllib

    doc = tomllib.loads(git(repo, "show", f"{PIN}:{name}").stdout)
    return "trainer" in doc or "orchestrator" in doc


def name_at(repo: Path, path: str, tag: str) -> str | None:
    """The file's path at `tag`, following renames back from the pin (None: it did not exist)."""
    log = git(repo, "log", "--follow", "--format=C %H", "--name-only", PIN, "--", path,
              check=False).stdout  # old blobs may be missing from a partial mirror: stop there
    commit, current = "", path
    for line in log.splitlines():
        if line.startswith("C "):
            commit = line[2:]
            continue
        if not line.strip():
            continue
        current = line.strip()
        if git(repo, "merge-base", "--is-ancestor", commit, tag, check=False).returncode == 0:
            exists = git(repo, "cat-file", "-e", f"{tag}:{current}", check=False).returncode == 0
            return current if exists else None
    return None


def history(repo: Path, files: list[str] | None = None, entries: dict[str, str] | None = None
            ) -> list[dict[str, str]]:
    pairs = []
    for pin_path in files if files is not None else rl_files(repo):
        pin_text = git(repo, "show", f"{PIN}:{pin_path}").stdout
        for tag in TAGS:
            old = name_at(repo, pin_path, tag)
            if old is not None:
                pair = {"tag": tag, "old_path": old, "pin_path": pin_path,
                        "old_toml": git(repo, "show", f"{tag}:{old}").stdout, "pin_toml": pin_text}
                pairs.append(pair | ({"entry": entries[pin_path]} if entries else {}))
    return pairs


def digest(text: str) -> str:
    """The migrated document's digest: of its parsed content, so a change of layout alone (the
    blank lines between tables) leaves the loader's verdict on it current."""
    import tomllib

    doc = json.dumps(tomllib.loads(text), sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()[:16]


def verdicts(pairs: list[dict[str, str]], loader: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = []
        for i, p in enumerate(pairs):
            f = work / "old" / f"{i:03d}.toml"
            f.parent.mkdir(exist_ok=True)
            f.write_text(p["old_toml"])
            files.append(f)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "whileai", "migrate", *map(str, files), "-o",
                               str(work / "new"), "--allow-drops", "--force"],
                              capture_output=True, text=True, env=env)
        if done.returncode not in (0, 1):
            raise SystemExit(done.stderr)
        docs = {}
        for i, p in enumerate(pairs):
            out = work / "new" / f"{i:03d}.toml"
            if out.exists():
                docs[f"{p['tag']}:{p['pin_path']}"] = {"toml": out.read_text(), "entry": p.get("entry", "rl")}
        (work / "docs.json").write_text(json.dumps(docs))
        run = subprocess.run([loader, str(ROOT / "scripts" / "prime_rl_loader.py"), "--json",
                              str(work / "docs.json")], capture_output=True, text=True, check=True)
        loaded = json.loads(run.stdout)
    return {name: {"accepted": v["accepted"], "error": v["error"],
                   "migrated_doc_sha": digest(docs[name]["toml"])} for name, v in sorted(loaded.items())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="prime-rl's git dir (fetched)")
    ap.add_argument("--verdicts", action="store_true", help="also record the loader's verdicts")
    ap.add_argument("--loader-python", help="the Python that has prime-rl's loader")
    ap.add_argument("--keep-history", action="store_true", help="reuse the history file on disk")
    args = ap.parse_args()
    if args.keep_history:
        pairs = json.loads(HISTORY.read_text())
        others = json.loads(ENTRIES_HISTORY.read_text())
    else:
        pairs = history(args.repo)
        HISTORY.write_text(json.dumps(pairs, indent=1) + "\n")
        print(f"wrote {HISTORY.relative_to(ROOT)}: {len(pairs)} pairs")
        entries = {n: e for n, e in entry_files(args.repo).items() if e != "rl"}
        others = history(args.repo, sorted(entries), entries)
        ENTRIES_HISTORY.write_text(json.dumps(others, indent=1) + "\n")
        print(f"wrote {ENTRIES_HISTORY.relative_to(ROOT)}: {len(others)} pairs")
    if args.verdicts:
        if not args.loader_python:
            raise SystemExit("--verdicts needs --loader-python")
        for what, where in ((pairs, VERDICTS), (others, ENTRIES_VERDICTS)):
            where.write_text(json.dumps(verdicts(what, args.loader_python), indent=1) + "\n")
            print(f"wrote {where.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
