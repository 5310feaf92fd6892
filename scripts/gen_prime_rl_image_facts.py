"""Record what prime-rl's Modal image must fetch and install, read from prime-rl's own files at the
pin: tests/fixtures/prime-rl/image-facts.json.

    python scripts/gen_prime_rl_image_facts.py --git-dir GIT_DIR           # write the fixture
    python scripts/gen_prime_rl_image_facts.py --git-dir GIT_DIR --check   # exit 1 if it differs

GIT_DIR is a git directory holding prime-rl's history (a bare clone or mirror of
PrimeIntellect-ai/prime-rl); only `git show <commit>:<path>` is run, at the commit of
whileai/targets/prime_rl/pin.py. Recorded, and nothing more: the submodules (.gitmodules: path ->
url), the `[tool.uv.sources]` that are local paths, the uv workspace's members and excludes, the
workspace members uv.lock lists (package -> editable path: `uv sync --locked` refuses when a
member it lists is missing), `[project.optional-dependencies]` (extra -> the distributions it
names), `[tool.uv] required-version`, the `uv sync` lines of Dockerfile.cuda, and the source of
`resolve_auto_attn` and of `setup_model`'s flash-attention-3 check in src/prime_rl/trainer/model.py
(which attention the trainer picks per GPU, and what it raises without flash_attn_3).
tests/launch/test_images.py checks whileai's image steps against these facts.
"""

from __future__ import annotations

import argparse
import configparser
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from whileai.targets.prime_rl.pin import COMMIT  # noqa: E402  (stdlib only)

OUT = ROOT / "tests" / "fixtures" / "prime-rl" / "image-facts.json"
MODEL = "src/prime_rl/trainer/model.py"


def show(git_dir: Path, path: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{COMMIT}:{path}"],
                          capture_output=True, text=True, check=True).stdout


def dist_name(requirement: str) -> str:
    """'flash-attn @ https://... ; marker' -> 'flash-attn' (PEP 503 normalised)."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert name, requirement
    return re.sub(r"[-_.]+", "-", name.group(1)).lower()


def function_source(text: str, name: str) -> dict[str, Any]:
    """The lines of a top-level function, with its first line number."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()
                and not lines[i].startswith(")")), len(lines))
    return {"line": start + 1, "source": "\n".join(lines[start:end]).rstrip() + "\n"}


def build(git_dir: Path) -> dict[str, Any]:
    py = tomllib.loads(show(git_dir, "pyproject.toml"))
    lock = tomllib.loads(show(git_dir, "uv.lock"))
    mods = configparser.ConfigParser()
    mods.read_string(show(git_dir, ".gitmodules"))
    uv = py["tool"]["uv"]
    model = show(git_dir, MODEL)
    fa3 = next(i for i, line in enumerate(model.splitlines(), 1)
               if 'config.attn == "flash_attention_3" and not is_flash_attn_3_available()' in line)
    docker = show(git_dir, "Dockerfile.cuda")
    return {
        "commit": COMMIT,
        "gitmodules": {mods[s]["path"]: mods[s]["url"] for s in mods.sections()},
        "uv_source_paths": {k: v["path"] for k, v in sorted(uv["sources"].items())
                            if isinstance(v, dict) and "path" in v},
        "workspace_members": uv["workspace"]["members"],
        "workspace_exclude": uv["workspace"].get("exclude", []),
        "lock_workspace_members": {p["name"]: p["source"]["editable"] for p in lock["package"]
                                   if "editable" in p.get("source", {})
                                   and p["name"] in lock["manifest"]["members"]},
        "optional_dependencies": {k: sorted({dist_name(r) for r in v})
                                  for k, v in py["project"]["optional-dependencies"].items()},
        "required_uv": uv.get("required-version"),
        "dockerfile_sync": [" ".join(line.split()) for line in docker.replace("\\\n", " ").splitlines()
                            if "uv sync" in line],
        "resolve_auto_attn": function_source(model, "resolve_auto_attn"),
        "fa3_check": {"file": MODEL, "line": fa3,
                      "source": "\n".join(model.splitlines()[fa3 - 1:fa3 + 3]) + "\n"},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", type=Path, required=True, help="a git directory with prime-rl's history")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file on disk differs")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    text = json.dumps(build(args.git_dir), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print(f"{args.out.name}: {'up to date' if same else 'STALE'}")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
