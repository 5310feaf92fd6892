"""Record prime-rl's own loader verdicts on a battery of whileai outputs: the loader fixture.

    python scripts/gen_loader_fixture.py --loader-python $LOADER [--battery FILE] [--out FILE]

$LOADER is a Python with prime-rl-configs at 559b447 and the verifiers it pins (see
../shared/reference/prime-rl/README.md); this script runs with whileai's own Python from the
checkout (it imports nothing from prime-rl). For each variant of the battery
(tests/fixtures/prime-rl/battery.toml):

- kind "compile": a whileai spec (`spec`, a path from the repo root, or `spec_text`) plus `set`
  overrides is compiled with `python -m whileai compile SPEC -o OUT --set ...` (this checkout on
  PYTHONPATH). When whileai refuses, the document the user asked for is still built (the spec
  compiled without the overrides, then each override applied as a plain dotted assignment) so
  the loader can say whether refusing was right. A two-stage spec (`then`) writes one TOML per
  stage (`<name>-<n>-<method>.toml`): `stage = n` says which one the variant loads;
- kind "check": a raw prime-rl document (`doc`, `doc_file` from the repo root, or `base`: a named
  document of the battery's [base] table with `set` assignments applied) is checked with
  `python -m whileai check FILE --entry ENTRY` (`entry` of the variant, default rl; "auto" lets
  both whileai and the loader pick the entry point).

Every resulting document then goes through scripts/prime_rl_loader.py in one $LOADER process
(`entry` per variant, default rl; `args`, e.g. ["--dry-run"], are passed after `@ file` as the
command line would). A compile variant may name further files the compile writes beside the main
one, each with its entry point: `also = {"teacher.toml" = "inference"}` loads
`<name>.teacher.toml` with `uv run inference`'s parser (a suffix starting with '-' names
`<name><suffix>`, e.g. a two-stage run's `-1-sft.teacher.toml`); their verdicts are listed under `also`.
The fixture (tests/fixtures/prime-rl/loader-verdicts.json) lists per variant: name, kind, input,
compiled_toml_or_doc, whileai_verdict {accepted, error}, loader_accepted, loader_error,
loader_entry, loader_warnings, launch_error, agree, by_design, note. `loader_accepted` and `agree`
are null when no document exists (whileai refused the spec and there were no overrides to apply by
hand). `by_design` (from the battery) marks a case where whileai means to differ from the loader
(e.g. an unknown hub taskset passes through); `pending` one that another branch is to settle
(tests/targets/prime_rl/test_loader_fixture.py lets it differ).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
BATTERY = ROOT / "tests" / "fixtures" / "prime-rl" / "battery.toml"
OUT = ROOT / "tests" / "fixtures" / "prime-rl" / "loader-verdicts.json"
LOADER_SCRIPT = ROOT / "scripts" / "prime_rl_loader.py"


def whileai(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "whileai", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def first_lines(text: str, work: Path, n: int = 6) -> str:
    """The first lines of an error, without the temporary folder (the fixture is reproducible)."""
    text = text.replace(str(work) + "/", "").replace(str(work), "")
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[:n])


def parse_value(rhs: str) -> Any:
    try:
        return tomllib.loads(f"v = {rhs}")["v"]
    except tomllib.TOMLDecodeError:
        return rhs


def assign(doc: dict[str, Any], path: str, value: Any) -> None:
    """doc[a][b][0][c] = value for 'a.b.0.c' or 'a.b[0].c' (tables and list items made as needed)."""
    segs = [s for s in re.split(r"\.|\[(\d+)\]", path) if s]
    node: Any = doc
    for seg, nxt in zip(segs, segs[1:], strict=False):
        key: Any = int(seg) if seg.isdigit() and isinstance(node, list) else seg
        if isinstance(node, list):
            while len(node) <= key:
                node.append({})
            node = node[key]
            continue
        if key not in node or not isinstance(node[key], (dict, list)):
            node[key] = [] if nxt.isdigit() else {}
        node = node[key]
    last: Any = segs[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def dumps(doc: dict[str, Any]) -> str:
    import tomli_w

    return tomli_w.dumps(doc)


def run_compile(v: dict[str, Any], work: Path) -> dict[str, Any]:
    spec = work / f"{v['name']}.spec.toml"
    if "spec_text" in v:
        spec.write_text(v["spec_text"])
        spec_input = v["spec_text"]
    else:
        spec_input = (ROOT / v["spec"]).read_text()
        spec.write_text(spec_input)
    out = work / f"{v['name']}.toml"
    sets = list(v.get("set", []))
    args = ["compile", str(spec), "-o", str(out), "--plain", "--force"]
    for s in sets:
        args += ["--set", s]
    done = whileai(args, work)
    verdict = {"accepted": done.returncode == 0, "exit_code": done.returncode,
               "error": "" if done.returncode == 0 else first_lines(done.stderr or done.stdout, work)}
    if "stage" in v:  # a two-stage spec: one TOML per stage beside the named one
        found = sorted(p for p in work.glob(f"{v['name']}-{v['stage']}-*.toml")
                       if not p.name.endswith(".teacher.toml"))  # the stage's rl TOML, not its teacher's
        out = found[0] if found else out
    doc_text = out.read_text() if done.returncode == 0 and out.is_file() else None
    also = {suffix: (work / _beside(v['name'], suffix)).read_text() for suffix in v.get("also", {})
            if done.returncode == 0 and (work / _beside(v['name'], suffix)).is_file()}
    if doc_text is None and sets:
        base = work / f"{v['name']}.base.toml"
        plain = whileai(["compile", str(spec), "-o", str(base), "--plain", "--force"], work)
        if plain.returncode == 0:
            doc = tomllib.loads(base.read_text())
            for s in sets:
                key, _, rhs = s.partition("=")
                assign(doc, key.strip(), parse_value(rhs.strip()))
            doc_text = dumps(doc)
    return {"input": {"spec": spec_input, "set": sets}, "doc": doc_text, "whileai": verdict,
            "also": also}


def _beside(name: str, suffix: str) -> str:
    """A further file's name: `<name>.<suffix>`, or `<name><suffix>` for a suffix starting with
    '-' (a two-stage run's per-stage file, e.g. '-1-sft.teacher.toml')."""
    return f"{name}{suffix}" if suffix.startswith("-") else f"{name}.{suffix}"


def run_check(v: dict[str, Any], work: Path, bases: dict[str, str]) -> dict[str, Any]:
    if "base" in v:  # a named document of the battery's [base] table with `set` applied
        doc = tomllib.loads(bases[v["base"]])
        for s in v.get("set", []):
            key, _, rhs = s.partition("=")
            assign(doc, key.strip(), parse_value(rhs.strip()))
        text = dumps(doc)
    else:
        text = v["doc"] if "doc" in v else (ROOT / v["doc_file"]).read_text()
    path = work / f"{v['name']}.toml"
    path.write_text(text)
    entry = v.get("entry", "rl")
    done = whileai(["check", str(path), "--entry", entry], work)
    verdict = {"accepted": done.returncode == 0, "exit_code": done.returncode,
               "error": "" if done.returncode == 0 else first_lines(done.stderr or done.stdout, work)}
    source = ({"doc_file": v["doc_file"]} if "doc_file" in v else
              {"base": v["base"], "set": v.get("set", [])} if "base" in v else {"doc": text})
    return {"input": source, "doc": text, "whileai": verdict}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loader-python", required=True, help="the Python that has prime-rl's loader")
    ap.add_argument("--battery", type=Path, default=BATTERY)
    ap.add_argument("--out", type=Path, help=f"default: {OUT.relative_to(ROOT)}; with --only: stdout")
    ap.add_argument("--only", help="a regular expression: run the variants whose name matches")
    args = ap.parse_args()

    data = tomllib.loads(args.battery.read_text())
    battery, bases = data["variant"], data.get("base", {})
    names = [v["name"] for v in battery]
    if len(set(names)) != len(names):
        raise SystemExit(f"duplicate variant names in {args.battery}")
    if args.only:
        battery = [v for v in battery if re.search(args.only, v["name"])]
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="whileai-fixture-") as tmp:
        work = Path(tmp)
        for v in battery:
            results[v["name"]] = (run_compile(v, work) if v["kind"] == "compile"
                                  else run_check(v, work, bases))
            verdict = "accepts" if results[v["name"]]["whileai"]["accepted"] else "refuses"
            print(f"{v['name']}: whileai {verdict}", file=sys.stderr)
        by_name = {v["name"]: v for v in battery}
        docs = {n: {"toml": r["doc"], "entry": by_name[n].get("entry", "rl"),
                    "args": list(by_name[n].get("args", []))}
                for n, r in results.items() if r["doc"] is not None}
        for n, r in results.items():
            for suffix, text in r.get("also", {}).items():
                docs[f"{n}:{suffix}"] = {"toml": text, "entry": by_name[n]["also"][suffix], "args": []}
        (work / "docs.json").write_text(json.dumps(docs))
        loaded = subprocess.run([args.loader_python, str(LOADER_SCRIPT), "--json", str(work / "docs.json"),
                                 "--timing"], capture_output=True, text=True, timeout=1200)
        if loaded.returncode != 0:
            raise SystemExit(f"the loader failed:\n{loaded.stderr[-4000:]}")
        print(loaded.stderr.strip(), file=sys.stderr)
        verdicts = json.loads(loaded.stdout)

    fixture = []
    for v in battery:
        r, lv = results[v["name"]], verdicts.get(v["name"])
        loader_ok = lv["accepted"] if lv else None
        fixture.append({
            "name": v["name"],
            "kind": v["kind"],
            "note": v.get("note", ""),
            "input": r["input"],
            "compiled_toml_or_doc": r["doc"],
            "whileai_verdict": r["whileai"],
            "loader_entry": lv["entry"] if lv else None,
            "loader_accepted": loader_ok,
            "loader_error": lv["error"] if lv else "no document: the spec itself is invalid",
            "loader_warnings": lv.get("warnings", []) if lv else [],
            "launch_error": lv.get("launch_error", "") if lv else "",
            "agree": None if loader_ok is None else loader_ok == r["whileai"]["accepted"],
            "by_design": v.get("by_design", ""),
            **({"args": v["args"]} if v.get("args") else {}),
            **({"also": [{"file": _beside(v['name'], suffix), "entry": entry, "toml": r["also"].get(suffix),
                          "loader_accepted": verdicts.get(f"{v['name']}:{suffix}", {}).get("accepted"),
                          "loader_error": verdicts.get(f"{v['name']}:{suffix}", {}).get(
                              "error", "not written"),
                          "agree": verdicts.get(f"{v['name']}:{suffix}", {}).get("accepted") is True}
                         for suffix, entry in v["also"].items()]} if v.get("also") else {}),
            "pending": v.get("pending", ""),
        })
    meta = {"battery": args.battery.relative_to(ROOT).as_posix() if args.battery.is_relative_to(ROOT)
            else str(args.battery), "prime_rl": "559b44772e471d1538537b8805cc77f3824a5e64",
            "variants": len(fixture),
            "disagreements": sorted([f["name"] for f in fixture if f["agree"] is False]
                                    + [a["file"] for f in fixture for a in f.get("also", [])
                                       if not a["agree"]]),
            "no_document": sorted(f["name"] for f in fixture if f["agree"] is None),
            "by_design": sorted(f["name"] for f in fixture if f["by_design"]),
            "pending": sorted(f["name"] for f in fixture if f["pending"])}
    text = json.dumps({"meta": meta, "variants": fixture}, indent=1, sort_keys=True) + "\n"
    if args.out is None and args.only:
        sys.stdout.write(text)
        return 0
    out = args.out or OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}: {len(fixture)} variants, {len(meta['disagreements'])} disagreements",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
