"""A two-stage prime-rl run (whileai.targets.stages has the rules both targets share).

prime-rl 559b447: trainer checkpoints (`checkpoints/step_N/trainer`) are sharded DCP state for
resuming, not a model. The final weights are written in Hugging Face format by the *filesystem*
weight broadcast, after every step including the last, to
`<output_dir>/<run.name>/broadcasts/step_<max_steps>/` (trainer/rl/train.py,
transports/weights/filesystem.py; older steps are pruned). So stage 1 sets `run.name` (the
default is random) and `weight_broadcast.type = "filesystem"` (full weights otherwise go over
NCCL and never touch the disk). That folder holds safetensors shards only, so the hand-off
command copies the student's config and tokenizer into it; stage 2's `model.name` is that folder,
its `tokenizer.name` and renderer those of the original student.
"""

from __future__ import annotations

import shlex
from dataclasses import replace

from whileai.errors import SpecError
from whileai.files.names import stage_name
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Compiled
from whileai.targets.fieldmap import Fix, Row
from whileai.targets.prime_rl import stage_script, teacher
from whileai.targets.prime_rl.plan import CompilePlan
from whileai.targets.stages import chain, first, method_of, second


def compile_stages(run: RunSpec, stem: str) -> Compiled:
    """Both stages of `run`, their teachers' servers and the script that runs them in order;
    stem: the spec's name (the files are <stem>-1-<method>.toml, <stem>-2-<method>.toml, <stem>.sh)."""
    from whileai.catalogs.paths import get_path
    from whileai.targets.prime_rl import compile as prime_rl

    if run.then is not None:  # named where the user wrote it, before stage 1 is compiled
        prime_rl.check_divergence(run.then.method, "then.method")
    one = first(run)
    names = [stage_name(stem, i, method_of(i, run)) for i in (1, 2)]
    c1, p1 = prime_rl.planned(one, name=f"{names[0]}.toml", extra=[
        Fix("run.name", names[0], "a known run directory: the next stage reads its final weights"),
        Fix("weight_broadcast.type", "filesystem", "the final weights land on disk in Hugging Face "
            "format (broadcasts/step_<max_steps>); NCCL would keep them in memory"),
    ])
    doc = c1.doc  # overrides included
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
    c2, p2 = prime_rl.planned(second(run), name=f"{names[1]}.toml", extra=base)
    handoff = (f"uv run python -c {shlex.quote(_COPY)} {shlex.quote(run.model)} {shlex.quote(weights)}"
               "  # stage 1's final weights -> stage 2's student")
    servers = stage_script.teacher_servers((p1, p2), stem)
    c1, c2 = (_served(c, p, servers, i) for i, (c, p) in enumerate(((c1, p1), (c2, p2)), start=1))
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
    return chain(run, c1, c2, files, c1.main, commands, weights, c2.main, how)


# after stage 1 finished (its last broadcast is STABLE), copy the student's config and tokenizer
# beside its final weights: a model folder stage 2 can load (prime-rl's env has transformers)
_COPY = ("import os, sys; from transformers import AutoConfig, AutoTokenizer; a, b = sys.argv[1:]; "
         "os.path.exists(os.path.join(b, \"STABLE\")) or sys.exit(b + \": no STABLE marker: stage 1 "
         "has not finished\"); AutoConfig.from_pretrained(a).save_pretrained(b); "
         "AutoTokenizer.from_pretrained(a).save_pretrained(b)")


def _served(c: Compiled, made: CompilePlan, servers: list[stage_script.Server], stage: int) -> Compiled:
    """A stage as the two-stage run serves its teachers: the servers the script starts (one for a
    teacher both stages share, sized for the longer stage) in place of the stage's own, in its
    files, notes, run lines and teacher records too."""
    mine = {p.file for p in c.teachers if p.file}
    by = {(s.plan.model, s.plan.url): s.plan for s in servers if stage in s.stages}
    renamed: dict[str | None, str | None] = {t.file: by[t.model, t.url].file for t in c.teachers
                                             if t.file}
    files = {k: v for k, v in c.files.items() if k not in mine}
    said = {t.note: by[t.model, t.url].note for t in c.teachers}
    notes = tuple(_rename(said.get(n, n), renamed) for n in c.notes)
    own = {line for t in made.served for line in teacher.commands(t)}
    commands = (*(line for p in by.values() for line in teacher.commands(p)),
                *(x for x in c.commands if x not in own))
    teachers = tuple(replace(t, file=p.file, serve=p.serve, max_model_len=p.max_model_len,
                             note=_rename(p.note, renamed))
                     for t in c.teachers for p in [by[t.model, t.url]])
    return replace(c, files=files, notes=notes, commands=commands, teachers=teachers,
                   teacher=teachers[0] if teachers else None)


def _rename(text: str, renamed: dict[str | None, str | None]) -> str:
    for old, new in renamed.items():
        if old and new:
            text = text.replace(old, new)
    return text


