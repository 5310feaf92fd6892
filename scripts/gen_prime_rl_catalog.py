"""Regenerate whileai's pinned prime-rl catalogue from the reference schema.

    python scripts/gen_prime_rl_catalog.py [--reference ../shared/reference/prime-rl]

Keeps the structure (properties, types, enums, bounds, defaults, $defs) of prime-rl's RLConfig
JSON Schema at the pinned commit and drops its prose (description, title, examples), then adds
the model -> renderer map under "x-prime-rl". The output is itself a JSON Schema.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
VERSION = "0.8.0"
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "schemas" / f"prime-rl-{COMMIT[:7]}.catalog.json"
PROSE = {"description", "title", "examples"}


def strip(node: object, key: str = "") -> object:
    if isinstance(node, dict):
        # keep property names even when they are called "title" or "description"
        return {
            k: strip(v, k)
            for k, v in node.items()
            if key in ("properties", "$defs") or k not in PROSE
        }
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def build(reference: Path) -> dict:
    schema = json.loads((reference / "schema" / "rl.schema.json").read_text())
    renderers = json.loads((reference / "model-renderers.json").read_text())
    out = strip(schema)
    assert isinstance(out, dict)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "x-prime-rl": {"commit": COMMIT, "version": VERSION, "model_renderers": renderers},
        **out,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=ROOT.parent / "shared/reference/prime-rl")
    args = ap.parse_args()
    OUT.write_text(json.dumps(build(args.reference), indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
