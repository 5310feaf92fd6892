"""Reading prime-rl's token exports (trainer.enable_token_export) one step at a time.

At prime-rl 559b447 (src/prime_rl/trainer/rl/token_export.py) the trainer writes, for every
trained sequence of step n on rank r, one JSON line to

    <run dir>/token_exports/step_<n>/rank_<r>.jsonl

with `schema_version` 1, the header fields below and aligned per-token arrays (COLUMNS). After
every rank has flushed a step, a barrier, then an empty `STABLE` file in the step's folder:
a step without it may still be being written, so it is left out (and reported). The run dir is
prime-rl's `output_dir / run.name`; `find_root` accepts it, the token_exports folder itself, or
an output_dir holding one run.

Streaming: `records(step)` yields one record at a time, so memory is bounded by what the caller
keeps of a step. A line that is not JSON, not a record of this schema, or whose arrays are not
aligned is counted (`Problems`), never fatal; a last line without its newline is counted as torn.
Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai.errors import SpecError

SCHEMA_VERSION = 1
PIN = "prime-rl 559b447 src/prime_rl/trainer/rl/token_export.py"
HEADER = ("schema_version", "step", "rank", "micro_step", "micro_sequence_idx",
          "export_sequence_idx", "env_name")
COLUMNS = ("token_ids", "position_ids", "loss_mask", "advantages", "inference_logprobs",
           "trainer_logprobs", "entropy", "mismatch_kl", "log_importance_ratio", "importance_ratio",
           "prob_delta", "is_masked", "is_masked_high", "is_masked_low", "rl_weights", "ce_weights",
           "ref_kl_weights")
OPTIONAL = ("ref_logprobs",)  # not written at the pin; read when a later exporter adds it
STEP_DIR = re.compile(r"step_(\d+)")
RANK_FILE = re.compile(r"rank_(\d+)\.jsonl")
EXAMPLES = 5  # problem lines named in the report


@dataclass
class StepDir:
    step: int
    path: Path
    stable: bool
    ranks: list[tuple[int, Path]]

    @property
    def bytes(self) -> int:
        return sum(p.stat().st_size for _, p in self.ranks)


@dataclass
class Problems:
    """Lines skipped while reading: counts, and the first few places (file:line: why)."""

    torn: int = 0
    invalid: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, kind: str, where: str, why: str) -> None:
        if kind == "torn":
            self.torn += 1
        else:
            self.invalid += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(f"{where}: {why}")


def find_root(path: Path) -> Path:
    """The token_exports folder of a run; SpecError (exit 2) when there is none."""
    if not path.is_dir():
        raise SpecError("--run", str(path), "a prime-rl run folder (output_dir / run.name) holding "
                        "token_exports/ (trainer.enable_token_export = true)")
    if path.name == "token_exports" or _has_steps(path):
        return path
    if (path / "token_exports").is_dir():
        return path / "token_exports"
    runs = sorted(p for p in path.glob("*/token_exports") if p.is_dir())
    if len(runs) == 1:
        return runs[0]
    if len(runs) > 1:
        raise SpecError("--run", str(path), "one run's folder: this output_dir holds "
                        f"{len(runs)} runs with token exports "
                        f"({', '.join(p.parent.name for p in runs[:4])}{', ...' if len(runs) > 4 else ''})")
    raise SpecError("--run", str(path), "a prime-rl run folder with token_exports/step_<n>/"
                    "rank_<r>.jsonl; none here: set [inspect] token_export = true in the spec "
                    "(trainer.enable_token_export) and run again")


def _has_steps(path: Path) -> bool:
    return any(STEP_DIR.fullmatch(p.name) and p.is_dir() for p in path.iterdir())


def scan(root: Path) -> list[StepDir]:
    """Every step folder, in step order, with its rank files and whether STABLE is there."""
    steps = []
    for p in root.iterdir():
        m = STEP_DIR.fullmatch(p.name)
        if not m or not p.is_dir():
            continue
        ranks = sorted((int(r.group(1)), f) for f in p.iterdir()
                       if (r := RANK_FILE.fullmatch(f.name)) and f.is_file())
        steps.append(StepDir(int(m.group(1)), p, (p / "STABLE").is_file(), ranks))
    steps.sort(key=lambda s: s.step)
    return steps


def records(step: StepDir, problems: Problems) -> Iterator[dict[str, Any]]:
    """Every valid record of a step, rank by rank, line by line."""
    for rank, path in step.ranks:
        with path.open("rb") as f:
            for n, line in enumerate(f, 1):
                where = f"{path.parent.name}/{path.name}:{n}"
                if line.isspace():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    kind = "torn" if not line.endswith(b"\n") else "invalid"
                    problems.add(kind, where, "cut off mid-line" if kind == "torn" else f"not JSON ({e})")
                    continue
                why = check(rec, step.step, rank)
                if why:
                    problems.add("invalid", where, why)
                    continue
                yield rec


def check(rec: Any, step: int, rank: int) -> str:
    """Why a parsed line is not a record of this step's schema ('' when it is)."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    if rec.get("schema_version") != SCHEMA_VERSION:
        return f"schema_version {rec.get('schema_version')!r}, expected {SCHEMA_VERSION}"
    missing = [k for k in (*HEADER, *COLUMNS) if k not in rec]
    if missing:
        return f"missing {', '.join(missing[:4])}"
    if rec["step"] != step:
        return f"step {rec['step']!r} in the folder of step {step}"
    ids = rec["token_ids"]
    if not isinstance(ids, list) or not ids:
        return "token_ids is not a non-empty list"
    n = len(ids)
    for k in (*COLUMNS, *(o for o in OPTIONAL if o in rec)):
        col = rec[k]
        if not isinstance(col, list) or len(col) != n:
            return f"{k} is not a list of {n} values (one per token)"
    return ""


def parse_steps(text: str | None) -> tuple[int | None, int | None, int]:
    """`A:B:S` (each part optional, B inclusive) -> (start, stop, stride)."""
    if not text:
        return None, None, 1
    parts = text.split(":")
    if len(parts) > 3 or not all(re.fullmatch(r"\d*", p) for p in parts):
        raise SpecError("--steps", text, "A:B:S (first step, last step, every S-th; each optional), "
                        "e.g. 10:200:10 or 50: or ::5")
    a, b, s = [*(int(p) if p else None for p in parts), None, None][:3]
    if s == 0:
        raise SpecError("--steps", text, "a stride of at least 1")
    if a is not None and b is not None and b < a:
        raise SpecError("--steps", text, "a last step at or after the first")
    return a, b, s or 1


def select(steps: list[StepDir], window: tuple[int | None, int | None, int]) -> list[StepDir]:
    a, b, s = window
    inside = [x for x in steps if (a is None or x.step >= a) and (b is None or x.step <= b)]
    first = inside[0].step if inside else 0
    return [x for x in inside if (x.step - (a if a is not None else first)) % s == 0]
