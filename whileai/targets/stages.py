"""Two-stage runs: a spec with `then` compiles to both stages, in order, with the command that
hands the first stage's final weights to the second (its student).

    c = compile_stages(run, "prime-rl", name="coldstart.toml")
    c.files      # coldstart-1-sft.toml, coldstart-2-opd.toml, coldstart.sh (the order)
    c.stages     # (stage 1 Compiled, stage 2 Compiled), each checked as any single run is

Where the first stage's final weights are, per target (read from each pinned target's source):

- prime-rl 559b447: trainer checkpoints (`checkpoints/step_N/trainer`) are sharded DCP state
  for resuming, not a model. The final weights are written in Hugging Face format by the
  *filesystem* weight broadcast, after every step including the last, to
  `<output_dir>/<run.name>/broadcasts/step_<max_steps>/` (trainer/rl/train.py,
  transports/weights/filesystem.py; older steps are pruned). So stage 1 sets `run.name` (the
  default is random) and `weight_broadcast.type = "filesystem"` (full weights otherwise go over
  NCCL and never touch the disk). That folder holds safetensors shards only, so the hand-off
  command copies the student's config and tokenizer into it; stage 2's `model.name` is that
  folder, its `tokenizer.name` and renderer those of the original student.
- TRL 1.16.0: `trl sft` / `trl distillation` / `trl grpo` and whileai's OPSD train.py end with
  `trainer.save_model(output_dir)` (model, config and tokenizer), so stage 2's
  `model_name_or_path` is stage 1's output_dir, relative to stage 2's folder.

Stage 1 must train full weights (the spec refuses `lora = true` before `then`): a LoRA adapter
would have to be merged into its base first. Top-level `overrides` (and `--set`) apply to stage
1, `then.overrides` to stage 2. Both stages share every other run field.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from typing import Any

from whileai.errors import SpecError
from whileai.spec.load import replace_run
from whileai.spec.run import RunSpec, Stage
from whileai.targets import stage_script
from whileai.targets.compiled import Compiled, Read
from whileai.targets.fieldmap import Fix, Row

STAGE_FIELDS = ("steps", "prompts", "lora", "lora_rank")


def first(run: RunSpec) -> RunSpec:
    """Stage 1: the spec without its `then`."""
    return replace_run(run, then=None)


def second(run: RunSpec, output_dir: str | None = None) -> RunSpec:
    """Stage 2: the first stage's run fields with the `then` table's method and settings. Its
    `model` stays the original student (its name sizes the run and picks the renderer); the
    backend writes the first stage's final weights in its place (an extra row, see below)."""
    t: Stage = run.then  # type: ignore[assignment]
    changes: dict[str, Any] = {"then": None, "method": t.method.model_dump(mode="python"),
                               "overrides": dict(t.overrides)}
    changes |= {f: getattr(t, f) for f in STAGE_FIELDS if getattr(t, f) is not None}
    if output_dir is not None:
        changes["output_dir"] = output_dir
    return replace_run(run, **changes)


def folder(i: int, run: RunSpec) -> str:
    """The stage's name: its position and method, e.g. 1-sft, 2-opd."""
    method = run.method if i == 1 else run.then.method  # type: ignore[union-attr]
    return f"{i}-{method.type}"


def compile_stages(run: RunSpec, backend: str, *, name: str, out: str | None = None,
                   cpu: bool = False) -> Compiled:
    """Both stages of `run` for `backend`. name: the prime-rl TOML name (`<stem>.toml`) or the
    TRL spec name; out: the TRL run directory (only used in the commands)."""
    if backend == "prime-rl":
        return _prime_rl(run, name.removesuffix(".toml"))
    return _trl(run, out, cpu)


# -- prime-rl ------------------------------------------------------------------------------
def _prime_rl(run: RunSpec, stem: str) -> Compiled:
    from whileai.catalogs.paths import get_path
    from whileai.spec.load import loads_toml
    from whileai.targets.prime_rl import compile as prime_rl

    one = first(run)
    names = [f"{stem}-{folder(1, run)}", f"{stem}-{folder(2, run)}"]
    c1 = prime_rl.compile(one, name=f"{names[0]}.toml", extra=[
        Fix("run.name", names[0], "a known run directory: the next stage reads its final weights"),
        Fix("weight_broadcast.type", "filesystem", "the final weights land on disk in Hugging Face "
            "format (broadcasts/step_<max_steps>); NCCL would keep them in memory"),
    ])
    doc = loads_toml(c1.text)
    if get_path(doc, "weight_broadcast.type") != "filesystem":
        raise SpecError("overrides.weight_broadcast.type", get_path(doc, "weight_broadcast.type"),
                        "filesystem in the first stage of a two-stage run: only the filesystem "
                        "broadcast writes the final weights to disk for the next stage")
    weights = (f"{get_path(doc, 'output_dir', 'outputs')}/{get_path(doc, 'run.name')}/broadcasts/"
               f"step_{get_path(doc, 'max_steps')}")
    base: list[Row] = [
        Fix("run.name", names[1], "a known run directory (stage 2 of a two-stage run)"),
        Fix("model.name", weights, f"stage 2's student: stage 1's final weights ({run.model} "
            "trained by stage 1); its renderer and sizes are the original student's"),
        Fix("tokenizer.name", run.model, "the original student's tokenizer (the hand-off also "
            "copies it beside the stage-1 weights, for inference)"),
    ]
    c2 = prime_rl.compile(second(run), name=f"{names[1]}.toml", extra=base)
    handoff = (f"uv run python -c {shlex.quote(_COPY)} {shlex.quote(run.model)} {shlex.quote(weights)}"
               "  # stage 1's final weights -> stage 2's student")
    servers = stage_script.teacher_servers(one, second(run), names, stem)
    c1, c2 = (_served(c, servers) for c in (c1, c2))
    rl = [[x for x in c.commands if x.startswith("uv run rl ")] for c in (c1, c2)]
    commands = [*(s.command() for s in servers if 1 in s.stages), *rl[0], handoff,
                *(s.command() for s in servers if min(s.stages) == 2), *rl[1]]
    script = f"{stem}.sh"
    files = {c1.main: c1.text, c2.main: c2.text,
             **{s.file: s.text for s in servers if s.file and s.text},
             script: stage_script.script(servers, rl, handoff, f"bash {script}")}
    how = (f"stage 1's final weights at {weights}: its filesystem weight broadcast writes them in "
           "Hugging Face format to <output_dir>/<run.name>/broadcasts/step_<max_steps> (run.name is "
           "set: the default is random), and the hand-off copies the student's config and "
           "tokenizer beside them")
    return _chain(run, c1, c2, files, c1.main, commands, weights, c2.main, how)


# after stage 1 finished (its last broadcast is STABLE), copy the student's config and tokenizer
# beside its final weights: a model folder stage 2 can load (prime-rl's env has transformers)
_COPY = ("import os, sys; from transformers import AutoConfig, AutoTokenizer; a, b = sys.argv[1:]; "
         "os.path.exists(os.path.join(b, \"STABLE\")) or sys.exit(b + \": no STABLE marker: stage 1 "
         "has not finished\"); AutoConfig.from_pretrained(a).save_pretrained(b); "
         "AutoTokenizer.from_pretrained(a).save_pretrained(b)")


# -- TRL -----------------------------------------------------------------------------------
def _trl(run: RunSpec, out: str | None, cpu: bool) -> Compiled:
    import yaml

    from whileai.targets.trl import compile as trl

    one = first(run)
    dirs = [folder(1, run), folder(2, run)]
    absolute = os.path.isabs(run.output_dir)
    if absolute:  # one shared folder would hold both stages' models: give each its own
        one = replace_run(one, output_dir=os.path.join(run.output_dir, dirs[0]))
    where = [os.path.join(out, d) if out else d for d in dirs]
    c1 = trl.compile(one, cpu=cpu, out=where[0])
    saved = str(yaml.safe_load(c1.text).get("output_dir", one.output_dir))  # overrides included
    weights = saved if os.path.isabs(saved) else f"../{dirs[0]}/{saved}"
    two = second(run, os.path.join(run.output_dir, dirs[1]) if absolute else None)
    c2 = trl.compile(two, cpu=cpu, out=where[1], extra=[
        Fix("model_name_or_path", weights, f"stage 2's student: stage 1's saved model ({run.model} "
            "trained by stage 1: weights, config and tokenizer)")])
    files = {f"{d}/{n}": text for d, c in zip(dirs, (c1, c2), strict=True) for n, text in c.files.items()}
    # each line in a subshell: a `cd` never carries over to the next one
    local = [(d, line) for d, c in zip(dirs, (c1, c2), strict=True) for line in _bare(c)]
    commands = [f"(cd {shlex.quote(os.path.join(out, d) if out else d)} && {line})" for d, line in local]
    files["run.sh"] = _script([f"(cd {shlex.quote(d)} && {line})" for d, line in local],
                              "bash run.sh", here=True)
    how = (f"stage 1's saved model at {weights} (from {dirs[1]}/): TRL's save_model writes the final "
           "weights, config and tokenizer to stage 1's output_dir when training ends")
    chain = _chain(run, c1, c2, files, f"{dirs[0]}/{c1.main}", commands, weights,
                   f"{dirs[1]}/{c2.main}", how)
    files["README.md"] = _readme(chain, dirs)
    return chain


def _bare(c: Compiled) -> list[str]:
    """A stage's commands without their leading `cd <dir> && `."""
    return [line.split(" && ", 1)[1] if line.startswith("cd ") else line for line in c.commands]


def _readme(c: Compiled, dirs: list[str]) -> str:
    here = replace(c, out="run.sh", commands=tuple(
        f"(cd {d} && {line})" for d, s in zip(dirs, c.stages, strict=True) for line in _bare(s)),
        stages=tuple(replace(s, out=f"{d}/{s.main}") for d, s in zip(dirs, c.stages, strict=True)))
    return (f"# A two-stage run: {' then '.join(d.split('-', 1)[1] for d in dirs)} on {c.run.taskset}\n\n"
            f"Written by whileai. Run `bash run.sh` from this directory: it runs `{dirs[0]}/`, then "
            f"`{dirs[1]}/`, whose student is `{dirs[0]}/`'s saved model (TRL's `save_model` writes "
            "the final weights, config and tokenizer to its output_dir). Each folder is a complete "
            "TRL run directory with its own README.md.\n\n```text\n" + str(here) + "\n```\n")


# -- both ----------------------------------------------------------------------------------
def _chain(run: RunSpec, c1: Compiled, c2: Compiled, files: dict[str, str], main: str,
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
    return Compiled(backend=c1.backend, target=c1.target, run=run, files=files, main=main,
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


def _served(c: Compiled, servers: list[stage_script.Server]) -> Compiled:
    """A stage as the two-stage run serves its teachers: the server files the script starts
    (one for a teacher both stages share) in place of the stage's own, in its notes too."""
    mine = {p.file for p in c.teachers if p.file}
    renamed: dict[str | None, str | None] = {t.file: s.file for t in c.teachers for s in servers
                                             if t.file and (t.model, t.url) == (s.plan.model, s.plan.url)}
    files = {k: v for k, v in c.files.items() if k not in mine}
    notes = tuple(_rename(n, renamed) for n in c.notes)
    commands = tuple(_rename(n, renamed) for n in c.commands)
    teachers = tuple(replace(t, file=renamed.get(t.file, t.file)) for t in c.teachers)
    return replace(c, files=files, notes=notes, commands=commands, teachers=teachers,
                   teacher=teachers[0] if teachers else None)


def _rename(text: str, renamed: dict[str | None, str | None]) -> str:
    for old, new in renamed.items():
        if old and new:
            text = text.replace(old, new)
    return text


def _script(commands: list[str], how: str, *, here: bool = False) -> str:
    """The commands in order; `here`: run from the script's own folder, wherever it is called."""
    body = "\n".join(commands)
    home = 'cd "$(dirname "$0")"\n' if here else ""
    return (f"#!/usr/bin/env bash\n# written by whileai: a two-stage run, in order. Run: {how}\n"
            f"set -euo pipefail\n{home}{body}\n")


__all__ = ["compile_stages", "first", "second"]
