"""whileai's own rules (whileai.targets.verl.lax) over every verl command of a run.sh.

    lines(text, "run/run.sh", base=Path("run"))
    # [("error", "run/run.sh:6: main_ppo: actor_rollout_ref.actor.optim.lr=abc: 'abc' is not a
    #   number; allowed: a number (verl's default 1e-06) (verl 0.9.1 lets it through: ...) [type]")]

What `whileai check run.sh` prints after verl's own check (whileai.targets.verl.verify), and in
its place where verl is not installed: one error line per refusal, naming the command, the key,
the value, what is allowed and what verl itself does with it. A relative data file counts as
present when it is in `base` (the run.sh's folder) or an earlier line of the script names it or
a folder above it (a step that writes it: `python3 convert.py samples/r.parquet data/sft.parquet`,
`+data.output_path=...`, verl's gsm8k preprocessing with `--local_save_dir data`). Pure but for
the file tests under `base`; nothing here imports verl.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from whileai.targets.verl import lax
from whileai.targets.verl.runsh import parse


def lines(text: str, where: str, env: Mapping[str, str] | None = None,
          base: Path | None = None) -> list[tuple[str, str]]:
    """("error", line) for each refusal of each verl command of a run.sh's text, in order."""
    out: list[tuple[str, str]] = []
    for cmd in parse(text, env):
        if cmd.kind not in ("main_ppo", "main_generation_server", "sft_trainer"):
            continue
        found = lax.refusals(lax.as_mapping(cmd.overrides), job=cmd.kind, base=base,
                             produced=written_before(text, cmd.line))
        out += [("error", f"{where}:{cmd.line}: {cmd.kind}: {r.line()}") for r in found]
    return out


def written_before(text: str, line: int) -> set[str]:
    """The words of the script's lines before `line` that could name a file a step writes: each
    argument, and the value of each `--opt=value` or `key=value` (comments skipped)."""
    words: set[str] = set()
    for raw in text.splitlines()[: max(line - 1, 0)]:
        try:
            parts = shlex.split(raw, comments=True)
        except ValueError:  # an unclosed quote on a line: its words as they stand
            parts = raw.split("#", 1)[0].split()
        for word in parts:
            value = word.rpartition("=")[2] if "=" in word else word
            if value and not value.startswith("-"):
                words.add(value.strip("'\"").rstrip("/"))
    return words
