"""Record verl 0.9.1's own verdicts on the mistakes verl users make, and on whileai's verl runs.

    python scripts/gen_verl_fixture.py --verl-python /work/envs/verl/bin/python \
        [--battery FILE] [--out FILE] [--spec SPEC.toml ...] [--run RUN.sh ...]

Runs with whileai's own Python from this checkout; verl's check runs in `--verl-python`, a Python
with verl 0.9.1 (the install lines are in scripts/verl_check.py and docs/verl.md), through
scripts/verl_check.py. Writes tests/fixtures/verl/lax.json, which the default suite replays
offline (tests/targets/verl/test_verl_own_check.py):

- `variants`: each variant of tests/fixtures/verl/battery.toml (a mistake applied to a valid
  base run) with the overrides sent, what the battery expects of verl (`expect`: accepts,
  refuses, raw) and verl's verdict (`verl`: accepted, step, error);
- `compiled`: whileai's verl runs: each spec (default: the bundled examples) compiled with
  `whileai compile SPEC -b verl -o DIR` (whileai's verdict; a spec whileai refuses, or a
  checkout without the verl target, is recorded as such), then every command of DIR/run.sh
  checked by verl; `--run` adds run.sh files written elsewhere;
- `meta`: verl's version, its import time and the mean seconds per config on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whileai.targets.verl.runsh import read  # noqa: E402  (stdlib only)

FIXTURES = ROOT / "tests" / "fixtures" / "verl"
BATTERY = FIXTURES / "battery.toml"
OUT = FIXTURES / "lax.json"
CHECK = ROOT / "scripts" / "verl_check.py"
COMPILED = FIXTURES / "compiled.json"
SPECS = ["examples/grpo.toml", "examples/opd.toml", "examples/sft.toml", "examples/opsd.toml",
         "examples/own-data/grpo.toml", "examples/scale/grpo-32b-2nodes.toml",
         "examples/scale/opd-32b-2nodes.toml",
         # hidden-style specs: other models, own data, 2 nodes, OPD with a 4-GPU teacher pool
         *sorted(p.relative_to(ROOT).as_posix() for p in (FIXTURES / "specs").glob("*.toml"))]


def key_of(override: str) -> str:
    """An override's key: `+a.b=1` and `a.b=1` both set `a.b`."""
    return override.split("=", 1)[0].lstrip("+~")


def apply(overrides: list[str], sets: list[str], drops: list[str]) -> list[str]:
    """`sets` replace the override of their key (or are added at the end); `drops` remove keys."""
    out = [o for o in overrides if key_of(o) not in drops]
    for s in sets:
        at = [i for i, o in enumerate(out) if key_of(o) == key_of(s)]
        if at:
            out[at[0]] = s
        else:
            out.append(s)
    return out


def cases(battery: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each variant's command kind and the overrides verl is sent (what lax.json records)."""
    bases = {}
    for name, base in battery["base"].items():
        cmd = read(FIXTURES / base["run"])[base.get("command", 0)]
        bases[name] = (cmd.kind, apply(list(cmd.overrides), base.get("set", []), []), list(cmd.launcher))
    out = {}
    for v in battery["variant"]:
        kind, overrides, launcher = bases[v["base"]]
        out[v["name"]] = {"kind": kind, "overrides": apply(overrides, v.get("set", []), v.get("drop", [])),
                          "launcher": launcher}
    return out


def verl_check(python: str, args: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run([python, str(CHECK), *args], capture_output=True, text=True, timeout=1200)
    if done.returncode not in (0, 1):
        raise SystemExit(f"scripts/verl_check.py failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def compiled(python: str, specs: list[str], runs: list[Path], work: Path) -> list[dict[str, Any]]:
    out = []
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    for spec in specs:
        folder = work / Path(spec).stem
        done = subprocess.run([sys.executable, "-m", "whileai", "compile", str(ROOT / spec), "-b", "verl",
                               "-o", str(folder), "--plain", "--force"], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)
        entry: dict[str, Any] = {"spec": spec, "whileai": {
            "accepted": done.returncode == 0,
            "error": "" if done.returncode == 0 else _first(done.stderr or done.stdout, work)}}
        script = folder / "run.sh"
        if done.returncode == 0 and script.is_file():
            entry["run_sh"] = script.read_text()
            lines = verl_check(python, [str(script)])
            entry["verl"] = _verdicts(lines)
            entry["seconds"] = round(sum(v["seconds"] for v in lines if "kind" in v), 2)
        out.append(entry)
    for run in runs:
        out.append({"run": str(run), "run_sh": run.read_text(),
                    "verl": _verdicts(verl_check(python, [str(run)]))})
    return out


def _verdicts(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v[k] for k in ("line", "kind", "accepted", "step", "error")}
            | ({"teachers": v["teachers"]} if len(v.get("teachers") or {}) > 1 else {})
            for v in lines if "kind" in v]


def _first(text: str, work: Path) -> str:
    lines = [ln for ln in text.replace(str(work) + "/", "").strip().splitlines() if ln.strip()]
    return lines[0] if lines else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verl-python", required=True, help="a Python with verl 0.9.1")
    ap.add_argument("--battery", type=Path, default=BATTERY)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--spec", action="append", help=f"specs to compile with -b verl (default: {len(SPECS)} "
                    "bundled examples)")
    ap.add_argument("--run", action="append", type=Path, default=[], help="run.sh files to check as well")
    ap.add_argument("--compiled-only", action="store_true", help=f"only the compiled runs, written to "
                    f"{COMPILED.relative_to(ROOT)} (lax.json untouched)")
    args = ap.parse_args()
    if args.compiled_only:
        return _compiled_only(args)

    battery = tomllib.loads(args.battery.read_text())
    sent = cases(battery)
    with tempfile.TemporaryDirectory(prefix="whileai-verl-") as tmp:
        work = Path(tmp)
        (work / "cases.json").write_text(json.dumps(sent))
        lines = verl_check(args.verl_python, ["--cases", str(work / "cases.json")])
        runs = compiled(args.verl_python, args.spec or SPECS, args.run, work)
    head = lines[0]
    verdicts = {v["name"]: v for v in lines if "name" in v}
    variants = []
    for v in battery["variant"]:
        got = verdicts[v["name"]]
        variants.append({"name": v["name"], "mistake": v["mistake"], "base": v["base"],
                         "set": v.get("set", []), "drop": v.get("drop", []),
                         "issues": v.get("issues", []), "expect": v["verl"],
                         "kind": sent[v["name"]]["kind"], "overrides": sent[v["name"]]["overrides"],
                         "launcher": sent[v["name"]]["launcher"],
                         "verl": {k: got[k] for k in ("accepted", "step", "error")}})
    meta = {"verl": head["verl"], "battery": args.battery.relative_to(ROOT).as_posix(),
            "import_seconds": round(head["import_seconds"], 1),
            "seconds_per_config": round(statistics.mean(v["seconds"] for v in verdicts.values()), 2),
            "variants": len(variants),
            "lax": sorted(v["name"] for v in variants  # the mistakes verl lets through or crashes on
                          if v["expect"] in ("accepts", "raw") and not v["name"].endswith("-base")),
            "unexpected": sorted(v["name"] for v in variants
                                 if v["verl"]["accepted"] != (v["expect"] == "accepts")),
            "compiled": len([r for r in runs if "verl" in r])}
    text = json.dumps({"meta": meta, "variants": variants, "compiled": runs}, indent=1, sort_keys=True) + "\n"
    args.out.write_text(text)
    print(f"wrote {args.out}: {len(variants)} variants ({len(meta['unexpected'])} unexpected), "
          f"{meta['compiled']} compiled runs checked; import {meta['import_seconds']} s, "
          f"{meta['seconds_per_config']} s a config", file=sys.stderr)
    return 0


def _compiled_only(args: argparse.Namespace) -> int:
    """whileai's compiled verl runs and verl's verdict on each command (compiled.json)."""
    with tempfile.TemporaryDirectory(prefix="whileai-verl-") as tmp:
        runs = compiled(args.verl_python, args.spec or SPECS, args.run, Path(tmp))
    checked = [r for r in runs if "verl" in r]
    commands = [v for r in checked for v in r["verl"]]
    meta = {"verl": "0.9.1", "specs": len(runs), "compiled": len(checked),
            "accepted": sum(all(v["accepted"] for v in r["verl"]) for r in checked),
            "commands": len(commands), "seconds_per_file": round(statistics.mean(
                r["seconds"] for r in checked), 2) if checked else 0.0}
    COMPILED.write_text(json.dumps({"meta": meta, "compiled": runs}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {COMPILED}: {meta['accepted']} of {meta['compiled']} compiled runs accepted by verl "
          f"({meta['commands']} commands, {meta['seconds_per_file']} s a file)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
