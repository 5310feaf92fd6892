"""Measure `whileai migrate` on every rl config of prime-rl's history, v0.3.0 to v0.8.0.

    python scripts/measure_migrate_history.py [--repo GIT_DIR] [--loader-python $LOADER]

Reads each release tag's configs/ and examples/ from prime-rl's git history (a file with a
[trainer] or [orchestrator] table is an rl config; identical texts of one release count once),
migrates all of them in one `whileai migrate` call (timed), and per file gives the outcome the
command gives it alone: written (exit 0) or refused (exit 1, with its reasons: a dropped key,
a key unknown at its own release, or the pin's checks). For each written file it checks that
the group size, the completion-token cap, the teacher, the checkpoints and the resume step of
the old file are still there; for every file that each old key is named (kept, moved,
converted, dropped ...); and that a planted typo (`orchestrator.batch_sise`) is named as
unknown. With --loader-python, prime-rl's own loader at the pin judges the written files.
Prints one JSON object; nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPO = Path("/work/.mirror/PrimeIntellect-ai+prime-rl/repo")
TAGS = ("v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0", "v0.7.0", "v0.8.0")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True,
                          check=True).stdout


def configs(repo: Path) -> list[dict[str, str]]:
    out, seen = [], set()
    for tag in TAGS:
        for name in git(repo, "ls-tree", "-r", "--name-only", tag, "--", "configs", "examples").split():
            if not name.endswith(".toml"):
                continue
            text = git(repo, "show", f"{tag}:{name}")
            try:
                doc = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                continue
            if ("trainer" in doc or "orchestrator" in doc) and (tag, text) not in seen:
                seen.add((tag, text))
                out.append({"tag": tag, "path": name, "toml": text})
    return out


def flat(node: Any, path: str = "") -> dict[str, Any]:
    """Dotted keys and values; an empty table is a value (an empty [ckpt] means something)."""
    if isinstance(node, dict) and node:
        return {k: v for key, val in node.items()
                for k, v in flat(val, f"{path}.{key}" if path else key).items()}
    if isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        return {k: v for i, x in enumerate(node) for k, v in flat(x, f"{path}[{i}]").items()}
    return {path: node}


def _first(doc: dict[str, Any], *suffixes: str) -> Any:
    return next((v for k, v in doc.items() for s in suffixes if k == s or k.endswith("." + s)), None)


def has(old: dict[str, Any]) -> list[str]:
    """Which of the meanings the issue names the old file sets."""
    found = {"group size": _first(old, "rollouts_per_example", "group_size") is not None,
             "completion cap": _first(old, "sampling.max_tokens",
                                      "sampling.max_completion_tokens") is not None,
             "teacher": any("teacher" in k for k in old),
             "checkpoints": any(k == "ckpt" or k.startswith("ckpt.") or ".ckpt" in k for k in old),
             "resume step": _first(old, "resume_step") is not None}
    return [k for k, v in found.items() if v]


def kept_meanings(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What a written file lost of the old one's group size, cap, teacher, checkpoints, resume."""
    lost = []
    group = _first(old, "rollouts_per_example", "group_size")
    if group is not None and _first(new, "group_size") != group:
        lost.append("group size")
    cap = _first(old, "sampling.max_tokens", "sampling.max_completion_tokens")
    if cap is not None and _first(new, "sampling.max_completion_tokens") != cap:
        lost.append("completion cap")
    if any("teacher" in k for k in old) and not any("teacher" in k or "sampling.source" in k for k in new):
        lost.append("teacher")
    if any(k == "ckpt" or k.startswith("ckpt.") or ".ckpt" in k for k in old) and not any(
            k == "ckpt" or k.startswith("ckpt") or ".ckpt" in k for k in new):
        lost.append("checkpoints")
    step = _first(old, "resume_step")
    if step not in (None, -1) and _first(new, "resume.step") != step:
        lost.append("resume step")
    return lost


def main() -> int:
    from whileai.targets.prime_rl.migrate.core import migrate
    from whileai.targets.prime_rl.migrate.hook import MIGRATION

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=REPO)
    ap.add_argument("--loader-python")
    args = ap.parse_args()
    files = configs(args.repo)
    per: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    written: dict[str, dict[str, str]] = {}
    lost: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(files):
            (Path(tmp) / f"{i:03d}.toml").write_text(f["toml"])
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "whileai", "migrate",
                               *sorted(map(str, Path(tmp).glob("*.toml"))), "-o", str(Path(tmp) / "new"),
                               "--allow-drops", "--force"], capture_output=True, text=True,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        wall = time.perf_counter() - t0
    for f in files:
        tag, name = f["tag"], f"{f['tag']}:{f['path']}"
        m = migrate(f["toml"])
        why = [f"{c.kind}: {c.old}" for c in m.decisions] + [f"pin: {p}" for p in MIGRATION.refused(m)]
        per[tag]["files"] += 1
        old = flat(tomllib.loads(f["toml"]))
        named = set(m.kept) | {c.old.split(" = ")[0] for c in m.changes}
        silent = [k for k in old if k not in named and not any(k.startswith(n + ".") for n in named)]
        per[tag]["keys"] += len(old)
        per[tag]["keys silently gone"] += len(silent)
        planted = migrate(f["toml"] + "\n[orchestrator.batch_sise_typo]\nx = 1\n")
        per[tag]["planted typo named"] += any(c.kind == "unknown" and "batch_sise_typo" in c.old
                                              for c in planted.changes)
        if why:
            per[tag]["refused (exit 1)"] += 1
            reasons.update({w.split(":")[0] + ": " + w.split(": ", 1)[1].split("[")[0][:70] for w in why})
            continue
        per[tag]["migrated (exit 0)"] += 1
        gone = kept_meanings(old, flat(tomllib.loads(m.text)))
        per[tag].update(f"written, sets {what}" for what in has(old))
        lost += [f"{name}: {g}" for g in gone]
        written[name] = {"toml": m.text, "entry": "rl"}
    result: dict[str, Any] = {"files": len(files), "one_call_wall_s": round(wall, 2),
                              "one_call_exit": done.returncode,
                              "per_release": {t: dict(per[t]) for t in TAGS},
                              "meanings_lost": lost, "refusal_reasons": dict(reasons.most_common(40))}
    if args.loader_python:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump(written, fh)
        run = subprocess.run([args.loader_python, str(ROOT / "scripts" / "prime_rl_loader.py"), "--json",
                              fh.name], capture_output=True, text=True, check=True)
        verdicts = json.loads(run.stdout)
        for name, v in verdicts.items():
            tag = name.split(":")[0]
            key = "loader accepts" if v["accepted"] else "loader refuses"
            per[tag][key] += 1
            if not v["accepted"]:
                reasons["loader: " + v["error"][:90]] += 1
        result["per_release"] = {t: dict(per[t]) for t in TAGS}
        result["loader_refusals"] = {k: n for k, n in reasons.items() if k.startswith("loader: ")}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
