"""The README.md of a verl run directory: how to start it, its files, and the report."""

from __future__ import annotations

from dataclasses import replace

from whileai.report.text import render_text
from whileai.targets.compiled import Compiled
from whileai.targets.verl import knobs, script
from whileai.targets.verl.pin import VERSION
from whileai.version import __version__

_FILES = {
    "run.sh": "the verl command(s), one Hydra override a line",
    "data/train.jsonl": "the training rows as verl reads them (data_source, prompt, reward_model, "
                        "extra_info)",
    "data/test.jsonl": "the holdout rows (validation)",
    "reward.py": "compute_score(data_source, solution_str, ground_truth, extra_info): the reward "
                 "verl calls (reward.custom_reward_function)",
    "gsm8k_rows.py": "openai/gsm8k at a pinned hub revision as verl's rows (data/train.parquet, "
                     "data/test.parquet), run by run.sh when data/ lacks them",
    "convert.py": "turns JSON lines into parquet for the generation server, then the teacher's "
                  "responses into `messages` rows for sft_trainer",
    script.SLURM: "verl's SLURM recipe: a Ray cluster over the nodes, then run.sh",
}


def readme(c: Compiled) -> str:
    run = c.run
    here = replace(c, out=c.main, commands=tuple(script.commands(run, None)))
    names = "\n".join(f"- `{n}`: {_FILES.get(n, '')}".rstrip(": ") for n in sorted(c.files)
                      if n != "README.md")
    fixed = "\n".join(f"- `{f.path}={script.hydra(f.value)}`: {f.reason}" for f in c.fixed) or "- none"
    several = knobs.nodes(run) > 1
    return (
        f"# {run.method.type} on {run.taskset} for verl {VERSION}\n\n"
        f"Written by whileai {__version__}. Start it with:\n\n```bash\n"
        + "\n".join(here.commands) + "\n```\n\n"
        "This folder needs verl only, not whileai: `pip install verl==" + VERSION + "` (with vLLM; "
        "see verl's installation docs). run.sh works in its own folder and hands verl absolute "
        "paths ($PWD/...), so Ray's workers find the data and reward.py"
        + (" — on several nodes this folder must be on a filesystem every node sees (NFS, Lustre, "
           "...): `ray job submit` runs run.sh here in place, with no Ray working_dir, so "
           "outputs/, data/ and the logs land in this folder. " if several else ". ")
        + "`bash run.sh key=value` appends Hydra overrides (the last one of a key wins).\n\n"
        f"## Files\n\n{names}\n\n"
        "## What whileai read, ignored and set\n\n```text\n" + render_text(here, 100) + "\n```\n\n"
        f"Keys whileai set that no spec field produced:\n\n{fixed}\n"
    )
