"""verl 0.9.1's own verdict on run.sh files (or override lists): one JSON line per verl command.

    $WHILEAI_VERL_PYTHON scripts/verl_check.py RUN.sh [DIR ...] [--overrides FILE --kind main_ppo]
    $WHILEAI_VERL_PYTHON scripts/verl_check.py --cases CASES.json   # scripts/gen_verl_fixture.py

Runs INSIDE a Python that has verl (it imports whileai's stdlib-only pieces from this checkout:
whileai/targets/verl/runsh.py reads the script, whileai/targets/verl/verl_check.py runs the same
check `whileai check` and `compile --check` run in-process). Each line: file, line, kind,
accepted, step, error (verl's first line), seconds; the first line says how long `import verl`
and its config code took, and each file ends with its total. Exit 0 when every command is
accepted, 1 when verl refuses one, 2 on bad usage.

The environment (Python 3.11, CPU only; ~1.8 GB, about 1-2 minutes from the registry's cache):
the commands `whileai rehearse --setup VENV -t verl` prints (whileai/targets/verl/rehearse/env.py,
SETUP; docs/rehearse.md shows them too), then WHILEAI_VERL_PYTHON=VENV/bin/python.

(`transformers` inside verl's own range: a newer one pulls `kernels`, which fails at import.)
`pip install 'whileai[verl]'` installs verl with its own dependencies instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whileai.targets.verl import check as verl_check  # noqa: E402  (stdlib-only; verl is imported when checking)
from whileai.targets.verl.runsh import read  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, help="run.sh files or run directories")
    ap.add_argument("--overrides", type=Path, help="a file of Hydra overrides, one a line")
    ap.add_argument("--kind", default="main_ppo", choices=sorted(verl_check.CONFIGS))
    ap.add_argument("--cases", type=Path, help='JSON: {"name": {"kind": ..., "overrides": [...]}}')
    args = ap.parse_args(argv)
    if not args.paths and args.overrides is None and args.cases is None:
        ap.error("give run.sh paths, --overrides FILE or --cases FILE")
    if not verl_check.available():
        print(f"error: {verl_check.NEEDS}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    verl_check.check_overrides("main_ppo", [])  # imports verl, Hydra and the checks' modules once
    if "sft_trainer" in _kinds(args):
        verl_check.check_overrides("sft_trainer", [])
    print(json.dumps({"verl": verl_check.installed_version(),
                      "import_seconds": round(time.perf_counter() - start, 2)}))
    refused = False
    for path in args.paths:
        start = time.perf_counter()
        env = {**os.environ, "PWD": str(path.resolve().parent)}
        commands = read(path, env)
        for cmd in commands:
            v = verl_check.check_command(cmd)
            refused |= not v.accepted
            print(json.dumps({"file": str(path), **_rounded(v.to_dict()), "unknown": list(cmd.unknown)}))
        print(json.dumps({"file": str(path), "commands": len(commands),
                          "seconds": round(time.perf_counter() - start, 2)}))
    if args.overrides is not None:
        lines = [ln.strip() for ln in args.overrides.read_text().splitlines()]
        v = verl_check.check_overrides(args.kind, [ln for ln in lines if ln and not ln.startswith("#")])
        refused |= not v.accepted
        print(json.dumps({"file": str(args.overrides), **_rounded(v.to_dict())}))
    if args.cases is not None:
        for name, case in json.loads(args.cases.read_text()).items():
            v = verl_check.check_overrides(case["kind"], case["overrides"], case.get("config_name"))
            refused |= not v.accepted
            print(json.dumps({"name": name, **_rounded(v.to_dict())}))
    return 1 if refused else 0


def _kinds(args: argparse.Namespace) -> set[str]:
    kinds = {args.kind} if args.overrides is not None else set()
    if args.cases is not None:
        kinds |= {c["kind"] for c in json.loads(args.cases.read_text()).values()}
    for path in args.paths:
        kinds |= {c.kind for c in read(path)}
    return kinds


def _rounded(d: dict[str, object]) -> dict[str, object]:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in d.items()}


if __name__ == "__main__":
    sys.exit(main())
