"""Paired arms from spec files with TRL, trained here on the CPU on tiny local models; by default
every bundled example (examples/*.toml: GRPO, OPD, OPSD and SFT on reverse-text, the article's
comparison) against the GRPO arm, and OPD against SFT (on- vs off-policy distillation).

    python recipes/04-train/trl/run.py              # train and score every arm, then
                                                    # runs/trl-tiny/results.json + results.png
    python recipes/04-train/trl/run.py --dry-run    # write the run dirs, print the plan and reports
    python recipes/04-train/trl/run.py --validate   # ... and check each with TRL's own parser
    python recipes/04-train/trl/run.py --collect    # poll arms launched before; exit 3 while any runs
    python recipes/04-train/trl/run.py my/*.toml --budget rollouts=640 --repeats 2 --tag mine

Any spec runs here: its student becomes the tiny student, an OPD (or SFT) teacher the tiny
teacher, and --steps/--prompts/--max-tokens/--samples/--holdout/--lr size it for a CPU; every
replacement is printed and kept in results.json (`substitutions`). Tasks must be on this
machine: a built-in taskset or the spec's own `data` (scored with the baseline's `reward`).
Arms, --baseline, --pair, --repeats and --budget work as in the prime-rl recipe.
Options: --steps 40 --prompts 4 --max-tokens 64 --samples 4 --holdout 32 --warmup 300
         --lr 5e-4 --jobs 3 --tag trl-tiny --out runs --x step,rollouts --relaunch-failed
The tokenizer and the random student and teacher (whileai.vocab.tiny) are built once and cached
(~/.cache/whileai/tiny/<key>, or $WHILEAI_CACHE); --warmup gives the teacher that many
supervised steps on the train split (the student a fifth) so rewards start above zero. Each arm
folder is what `whileai compile --backend trl --cpu` writes; whileai.targets.trl.eval runs its
command and scores the base model, each checkpoint and the final model on data/test.jsonl.
Before training, `whileai preflight` checks each arm's models, memory and disk (--no-preflight
skips it). A second launch skips arms done or running. Exit codes: 0 done, 1 an arm or the
preflight failed, 2 bad input (one line), 3 still running.
"""

import sys

from whileai.cli.recipe import main

if __name__ == "__main__":
    sys.exit(main("trl", __doc__))
