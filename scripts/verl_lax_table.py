"""The tables of docs/verl.md on what verl 0.9.1 lets through and what whileai refuses, from lax.json.

    python scripts/verl_lax_table.py            # rewrite the tables in docs/verl.md
    python scripts/verl_lax_table.py --check    # exit 1 if docs/verl.md's tables differ

Each row is a variant of tests/fixtures/verl/battery.toml with verl's recorded verdict
(tests/fixtures/verl/lax.json) and the line whileai's own rules (whileai/targets/verl/lax.py)
give for the same overrides; tests/targets/verl/test_lax.py keeps docs/verl.md in step.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whileai.targets.verl import lax  # noqa: E402  (no verl needed)
from whileai.targets.verl.job import launcher_gpus  # noqa: E402

LAX = ROOT / "tests" / "fixtures" / "verl" / "lax.json"
DOCS = ROOT / "docs" / "verl.md"
BEGIN, END = "<!-- lax tables: scripts/verl_lax_table.py -->", "<!-- end of the lax tables -->"
FILES = ["data/train.parquet", "data/test.parquet", "data/prompts.parquet", "data/sft.parquet"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _whileai(variant: dict) -> str:
    got = lax.refusals(lax.as_mapping(variant["overrides"]), job=variant["kind"], base=ROOT / "docs",
                       produced=FILES, launcher=launcher_gpus(variant["launcher"]))
    return "; ".join(f"`{r.rule}`: {_cell(r.message)}" for r in got) or "(verl's own check)"


def tables(doc: dict | None = None) -> str:
    """The two tables, between their markers."""
    doc = doc or json.loads(LAX.read_text())
    variants = [v for v in doc["variants"] if not v["name"].endswith("-base")]
    lets = [v for v in variants if v["verl"]["accepted"] or v["expect"] == "raw"]
    out = [BEGIN, "", "| variant | the mistake | verl 0.9.1 | whileai refuses it |", "|---|---|---|---|"]
    for v in lets:
        error = f"crashes: `{_cell(v['verl']['error'])}` (names no key)"
        verl = "accepts" if v["verl"]["accepted"] else error
        out.append(f"| `{v['name']}` | {_cell(v['mistake'])} | {verl} | {_whileai(v)} |")
    out += ["", f"{len(lets)} mistakes verl 0.9.1 lets through (or crashes on without naming a key); "
                f"whileai refuses each with one line ({len(lax.RULES)} rules).", "",
            "And what verl refuses itself (its first line, at the step that refused), with whileai's "
            "rule where one also applies:", "",
            "| variant | the mistake | verl 0.9.1 | whileai |", "|---|---|---|---|"]
    for v in variants:
        if v not in lets:
            verl = f"{v['verl']['step']}: `{_cell(v['verl']['error'][:150])}`"
            out.append(f"| `{v['name']}` | {_cell(v['mistake'])} | {verl} | {_whileai(v)} |")
    return "\n".join([*out, "", END])


def main() -> int:
    text = DOCS.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = head + tables() + tail
    if "--check" in sys.argv:
        same = new == text
        said = "up to date" if same else "differs: run scripts/verl_lax_table.py"
        print(f"{DOCS.relative_to(ROOT)}: {said}")
        return 0 if same else 1
    DOCS.write_text(new)
    print(f"wrote the lax tables of {DOCS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
