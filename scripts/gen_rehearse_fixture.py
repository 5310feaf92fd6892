"""Regenerate tests/fixtures/rehearse/: the request/response shapes prime-rl's orchestrator,
verifiers and the renderers sent the stand-in servers in real rehearsals, and the lines each
broken case's cause was quoted from. Needs the rehearsal environment (docs/rehearse.md):

    WHILEAI_REHEARSE_PYTHON=/path/to/prime-rl/.venv/bin/python python scripts/gen_rehearse_fixture.py
    python scripts/gen_rehearse_fixture.py --from KEPT   # the folders the real tests kept
                                                         # (WHILEAI_REHEARSE_KEEP=KEPT)

Runs `whileai rehearse` on the OPD arm (LoRA, a teacher, evals) and the GRPO+OPD mixture (full
weights: /update_weights), then the broken cases of tests/rehearse/test_rehearse_real.py; keeps, per
(server, route, status), the first request body (long lists cut to 16 items) and the response's
shape, and per broken case the quoted cause with the log it was quoted from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "rehearse"
sys.path.insert(0, str(ROOT / "tests" / "rehearse"))

from rehearse_cases import BROKEN  # noqa: E402


def run(args: list[str], keep: Path) -> dict:  # type: ignore[type-arg]
    cmd = [sys.executable, "-m", "whileai", "rehearse", *args, "--keep", str(keep), "--json"]
    r = subprocess.run(
        cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    if not r.stdout.strip():
        raise SystemExit(f"{' '.join(cmd)} printed nothing: {r.stderr[-2000:]}")
    found: dict = json.loads(r.stdout)  # type: ignore[type-arg]
    return found


def calls(keep: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    out: dict[str, dict] = {}  # type: ignore[type-arg]
    for f in sorted(keep.glob("*/calls/*.jsonl")):
        for line in f.read_text().splitlines():
            e = json.loads(line)
            if "example" in e:
                key = f"{e['port']} {e['route']} {e['status']}"
                out.setdefault(
                    key, {k: e[k] for k in ("port", "route", "status", "example", "request", "response")}
                )
    return out


def excerpt(keep: Path, cause: dict) -> dict:  # type: ignore[type-arg]
    """The cause with the whole log it was quoted from (colour codes dropped)."""
    import re

    stage = next(p for p in keep.iterdir() if (p / cause["file"]).exists())
    text = (stage / cause["file"]).read_text(errors="replace")
    return {**cause, "log": re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).splitlines()}


def main(argv: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    shapes: dict[str, dict] = {}  # type: ignore[type-arg]
    steps: dict[str, list] = {}  # type: ignore[type-arg]
    kept = Path(argv[argv.index("--from") + 1]) if "--from" in argv else None

    def rehearse(args: list[str], keep: Path) -> dict:  # type: ignore[type-arg]
        if kept is not None:
            found: dict = json.loads((kept / keep.name / "verdict.json").read_text())  # type: ignore[type-arg]
            return found
        return run(args, keep)

    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in (("opd", "examples/opd.toml"), ("mixture", "examples/mixtures/grpo-opd.toml")):
            keep = (kept or Path(tmp)) / name
            v = rehearse([spec], keep)
            if not v["ok"]:
                raise SystemExit(f"{spec}: the rehearsal failed: {v}")
            shapes.update(calls(keep))
            steps[name] = [s["steps"] for s in v["stages"]]
        causes = {}
        for case in BROKEN:
            keep = (kept or Path(tmp)) / case.name
            v = rehearse(case.args(Path(tmp)), keep)
            stage = v["stages"][-1]
            if v["ok"] or not stage["cause"]:
                raise SystemExit(f"{case.name}: expected a failure with a cause, got {v}")
            causes[case.name] = {**excerpt(keep, stage["cause"]), "summary": stage["summary"]}
    (OUT / "calls.json").write_text(json.dumps(shapes, indent=1) + "\n")
    (OUT / "steps.json").write_text(json.dumps(steps, indent=1) + "\n")
    (OUT / "causes.json").write_text(json.dumps(causes, indent=1) + "\n")
    print(f"wrote {len(shapes)} routes, {len(causes)} causes to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
