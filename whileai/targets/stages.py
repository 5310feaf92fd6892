"""Two-stage runs: what both targets share. A spec with `then` compiles to both stages, in
order, with the command that hands the first stage's final weights to the second (its student);
each target's own part (where its final weights are, its script) is its `stages` module
(whileai.targets.prime_rl.stages, whileai.targets.trl.stages), reached through its Target:

    c = registry.get("prime-rl").compile(run, name="coldstart.toml", out=None, options=Options())
    c.files      # coldstart-1-sft.toml, coldstart-2-opd.toml, coldstart.sh (the order)
    c.stages     # (stage 1 Compiled, stage 2 Compiled), each checked as any single run is

Stage 1 must train full weights (the spec refuses `lora = true` before `then`): a LoRA adapter
would have to be merged into its base first. Top-level `overrides` (and `--set`) apply to stage
1, `then.overrides` to stage 2. Both stages share every other run field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from whileai.files import names
from whileai.spec.load import replace_run
from whileai.spec.run import RunSpec, Stage
from whileai.targets.compiled import Compiled, Read

STAGE_FIELDS = ("steps", "prompts", "lora", "lora_rank")


def first(run: RunSpec) -> RunSpec:
    """Stage 1: the spec without its `then`."""
    return replace_run(run, then=None)


def second(run: RunSpec, output_dir: str | None = None) -> RunSpec:
    """Stage 2: the first stage's run fields with the `then` table's method and settings. Its
    `model` stays the original student (its name sizes the run and picks the renderer); the
    target writes the first stage's final weights in its place (an extra row, see below)."""
    t: Stage = run.then  # type: ignore[assignment]
    changes: dict[str, Any] = {"then": None, "method": t.method.model_dump(mode="python"),
                               "overrides": dict(t.overrides)}
    changes |= {f: getattr(t, f) for f in STAGE_FIELDS if getattr(t, f) is not None}
    if output_dir is not None:
        changes["output_dir"] = output_dir
    return replace_run(run, **changes)


def method_of(i: int, run: RunSpec) -> str:
    """Stage i's method type."""
    return (run.method if i == 1 else run.then.method).type  # type: ignore[union-attr]


def folder(i: int, run: RunSpec) -> str:
    """The stage's name: its position and method, e.g. 1-sft, 2-opd (whileai.files.names)."""
    return names.stage(i, method_of(i, run))


# -- both ----------------------------------------------------------------------------------
def chain(run: RunSpec, c1: Compiled, c2: Compiled, files: dict[str, str], main: str,
           commands: list[str], weights: str, second_main: str, how: str) -> Compiled:
    """The run as one Compiled: stage 1's account, stage 2's under `then.` (its own fields; the
    inherited ones are in its stage report), every warning, and both stages in `stages`."""
    if run.method.off_policy:  # stage 1 is the cold start sft-cold-start asks for
        c2 = replace(c2, warnings=tuple(w for w in c2.warnings if w.rule != "sft-cold-start"))
    reads = [*c1.reads, *(_then(r, run, second_main) for r in c2.reads if _mine(r.field, run))]
    ignores = [*c1.ignores, *(replace(i, field=_label(i.field, run)) for i in c2.ignores
                              if _mine(i.field, run))]
    reads.append(Read(field="then", path=f"{second_main}: model", value=weights,
                      note=f"stage 2's student: {how}"))
    warnings = [*c1.warnings, *(replace(w, message=f"stage 2: {w.message}")
                                for w in c2.warnings if w not in c1.warnings)]
    return Compiled(target=c1.target, pin=c1.pin, run=run, files=files, main=main,
                    reads=tuple(reads), ignores=tuple(ignores), fixed=c1.fixed + c2.fixed,
                    warnings=tuple(warnings), commands=tuple(commands), out=c1.out,
                    facts=replace(c1.facts, handoff=how), stages=(c1, c2))


def _mine(field: str, run: RunSpec) -> bool:
    """A stage-2 report row that comes from the `then` table (not inherited from stage 1)."""
    t: Stage = run.then  # type: ignore[assignment]
    head = field.split(".")[0]
    return head in type(t.method).model_fields or head == "overrides" or (
        head in STAGE_FIELDS and getattr(t, head) is not None)


def _label(field: str, run: RunSpec) -> str:
    t: Stage = run.then  # type: ignore[assignment]
    head = field.split(".")[0]
    return f"then.method.{field}" if head in type(t.method).model_fields else f"then.{field}"


def _then(r: Read, run: RunSpec, where: str) -> Read:
    return replace(r, field=_label(r.field, run), path=f"{where}: {r.path}")


def script(commands: list[str], how: str, *, here: bool = False) -> str:
    """The commands in order; `here`: run from the script's own folder, wherever it is called."""
    body = "\n".join(commands)
    home = 'cd "$(dirname "$0")"\n' if here else ""
    return (f"#!/usr/bin/env bash\n# written by whileai: a two-stage run, in order. Run: {how}\n"
            f"set -euo pipefail\n{home}{body}\n")


__all__ = ["chain", "first", "folder", "method_of", "script", "second"]
