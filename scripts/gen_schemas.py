"""Write the JSON Schemas generated from the pydantic models into schemas/.

Usage:

    python scripts/gen_schemas.py            # write schemas/{spec,report,results,inspect}.schema.json
    python scripts/gen_schemas.py --check    # exit 1 if a committed schema is stale

The text is exactly what `whileai schema <which>` prints (see whileai/cli/schemas.py). A schema
whose model is not importable yet (results, before whileai.results lands) is skipped, with a note.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from whileai.cli.schemas import SCHEMAS, dumps, write_all

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    ap.add_argument("--out", type=Path, default=ROOT / "schemas", help="directory (default: schemas/)")
    args = ap.parse_args(argv)
    if not args.check:
        for path in write_all(args.out):
            print(f"wrote {path}")
        return 0
    stale = [w for w in SCHEMAS if _read(args.out / SCHEMAS[w][0]) != dumps(w)]
    for w in stale:
        print(f"stale: {args.out / SCHEMAS[w][0]} (run python scripts/gen_schemas.py)", file=sys.stderr)
    return 1 if stale else 0


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


if __name__ == "__main__":
    sys.exit(main())
