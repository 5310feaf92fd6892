"""A two-stage TRL run (whileai.targets.stages has the rules both targets share).

TRL 1.16.0: `trl sft` / `trl distillation` / `trl grpo` and whileai's OPSD train.py end with
`trainer.save_model(output_dir)` (model, config and tokenizer), so stage 2's `model_name_or_path`
is stage 1's output_dir, relative to stage 2's folder.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace

from whileai.spec.load import replace_run
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Compiled
from whileai.targets.fieldmap import Fix
from whileai.targets.stages import chain, first, folder, script, second


def compile_stages(run: RunSpec, out: str | None, cpu: bool) -> Compiled:
    """Both stages of `run` as run directories <n>-<method>/ side by side, and the run.sh that runs
    them in order; out: the folder they will be written to (only used in the commands)."""
    from whileai.targets.trl import compile as trl

    one = first(run)
    dirs = [folder(1, run), folder(2, run)]
    absolute = os.path.isabs(run.output_dir)
    if absolute:  # one shared folder would hold both stages' models: give each its own
        one = replace_run(one, output_dir=os.path.join(run.output_dir, dirs[0]))
    where = [os.path.join(out, d) if out else d for d in dirs]
    c1 = trl.compile(one, cpu=cpu, out=where[0])
    saved = str(c1.doc.get("output_dir", one.output_dir))  # overrides included
    weights = saved if os.path.isabs(saved) else f"../{dirs[0]}/{saved}"
    two = second(run, os.path.join(run.output_dir, dirs[1]) if absolute else None)
    c2 = trl.compile(two, cpu=cpu, out=where[1], extra=[
        Fix("model_name_or_path", weights, f"stage 2's student: stage 1's saved model ({run.model} "
            "trained by stage 1: weights, config and tokenizer)")])
    c1, c2 = replace(c1, folder=dirs[0]), replace(c2, folder=dirs[1])
    files = {f"{d}/{n}": text for d, c in zip(dirs, (c1, c2), strict=True) for n, text in c.files.items()}
    # each line in a subshell: a `cd` never carries over to the next one
    local = [(d, line) for d, c in zip(dirs, (c1, c2), strict=True) for line in _bare(c)]
    commands = [f"(cd {shlex.quote(os.path.join(out, d) if out else d)} && {line})" for d, line in local]
    files["run.sh"] = script([f"(cd {shlex.quote(d)} && {line})" for d, line in local],
                              "bash run.sh", here=True)
    how = (f"stage 1's saved model at {weights} (from {dirs[1]}/): TRL's save_model writes the final "
           "weights, config and tokenizer to stage 1's output_dir when training ends")
    both = chain(run, c1, c2, files, f"{dirs[0]}/{c1.main}", commands, weights,
                 f"{dirs[1]}/{c2.main}", how)
    files["README.md"] = _readme(both, dirs)
    return both


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


