"""Paired arms from spec files with verl 0.9.1 on Modal (2 GPUs per arm); by default every bundled
example verl can run (examples/*.toml: GRPO, OPD and SFT on reverse-text; OPSD is skipped with
verl's reason), each compared against the GRPO arm, and OPD against SFT.

    python recipes/04-train/verl/run.py --dry-run     # write the run folders, print reports and the plan
    python recipes/04-train/verl/run.py --validate    # verl's own check of every run.sh (Hydra compose,
                    # validate_config, the worker configs): in a Modal CPU container of the arms'
                    # image where a Modal token is configured, else here with whileai's rules and a
                    # rehearsal (a Python with verl 0.9.1: pip install 'whileai[verl]'); it says
                    # which (--on local|modal to choose)
    python recipes/04-train/verl/run.py               # deploy the app, spawn one call per arm
    python recipes/04-train/verl/run.py --collect     # exit 3 while any arm runs; then
                                                      # results.json + results.png in runs/<tag>/
    python recipes/04-train/verl/run.py my/grpo.toml my/opd.toml --steps 50 --tag mine

Each arm folder is what `whileai compile -t verl` writes, with what the recipe adds, reported as
overrides: `trainer.logger` gains "file" (verl's file logger, read back per step) and
`trainer.validation_data_dir` keeps verl's holdout samples (the per-task scores pairs need). An
SFT arm gets eval.sh (whileai.targets.verl.eval): verl's model merger, then verl's validation of
the merged model on the same holdout and reward as the RL arms. In the container the arm's
run.sh runs as written (`bash run.sh`); verl starts the OPD teacher on its own GPU pool.
Arms, --baseline, --pair, --repeats, --budget and --strict work as in the prime-rl recipe.
A second launch skips arms already pending or done; --relaunch-failed re-spawns failed ones.
Exit codes: 0 done, 1 a check failed, 2 bad input (one line), 3 still running, 4 Modal
unreachable / no token.
"""

import sys

from whileai.cli.recipe import main

if __name__ == "__main__":
    sys.exit(main("verl", __doc__))
