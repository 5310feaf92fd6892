"""How often one compile computes the same thing (a count, not a timing).

    python benchmarks/count_calls.py [SPEC ...] [--target prime-rl|trl]

Loads each spec (default: examples/opd.toml), compiles it once through the Python API
(whileai.api.compile: what `whileai compile` runs, nothing written) and counts, with
sys.setprofile, the calls of the functions a compile should need once per run: the layout
(whileai.spec.layout.layout, behind `run.layout`), the training sources
(whileai.spec.mixture.entries), the model sizes (whileai.cost.sizes.params) and the teacher
plans (whileai.targets.prime_rl.teacher.plans). Loading the spec is not counted.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whileai import api  # noqa: E402
from whileai.cost import sizes  # noqa: E402
from whileai.spec import layout, mixture  # noqa: E402
from whileai.spec.load import load_spec  # noqa: E402
from whileai.targets import registry  # noqa: E402
from whileai.targets.prime_rl import teacher  # noqa: E402

WATCHED = {
    layout.layout.__code__: "layout()",
    mixture.entries.__code__: "mixture.entries",
    sizes.params.__code__: "sizes.params",
    teacher.plans.__code__: "teacher.plans",
}


def count(spec: Path, target: str) -> Counter[str]:
    """The watched functions' calls during one compile of `spec`."""
    run = load_spec(spec)
    seen: Counter[str] = Counter({name: 0 for name in WATCHED.values()})

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event == "call" and frame.f_code in WATCHED:
            seen[WATCHED[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        api.compile(run, target)
    finally:
        sys.setprofile(None)
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", type=Path, default=[ROOT / "examples" / "opd.toml"])
    ap.add_argument("--target", default="prime-rl", choices=registry.names())
    args = ap.parse_args()
    for spec in args.specs:
        counts = count(spec, args.target)
        print(f"{spec}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
