"""Paired arms from spec files with prime-rl on Modal (2 GPUs per arm); by default every bundled
example (examples/*.toml: GRPO, OPD, OPSD and SFT on reverse-text), each compared against the
GRPO arm, and OPD against SFT (the article's on- vs off-policy question).

    python recipes/04-train/prime-rl/run.py --dry-run     # write the configs, print reports and the plan
    python recipes/04-train/prime-rl/run.py --validate    # prime-rl's own `rl @ cfg --dry-run` in a
                    # Modal CPU container where a Modal token is configured, else offline (pinned
                    # schema, loader rules, resolve); it says which (--on local|modal to choose)
    python recipes/04-train/prime-rl/run.py --validate --rehearse   # and `whileai rehearse` each arm:
                    # prime-rl's own rl for 2 steps on this CPU ($WHILEAI_REHEARSE_PYTHON, docs/rehearse.md)
    python recipes/04-train/prime-rl/run.py               # deploy the app, spawn one call per arm
    python recipes/04-train/prime-rl/run.py --collect     # exit 3 while any arm runs; then
                                                          # results.json + results.png in runs/<tag>/
    python recipes/04-train/prime-rl/run.py my/grpo.toml my/opd.toml my/sft.toml \\
        --budget rollouts=20480 --repeats 3 --pair opd:sft --tag mine

Arms are spec files (SPEC... or --arms grpo,opd naming bundled ones). Every arm must share the
baseline's taskset, holdout and student (--baseline picks it; default: the GRPO spec); each is
compared against it, plus --pair A:B (opd:sft by default when both exist). --budget rollouts=N
(or tokens=N) sets each arm's steps so all spend the same; --steps N sets every arm's steps.
Options: --tag rt --out runs --repeats 1 --relaunch-failed --x step,rollouts
A second launch skips arms already pending or done; --relaunch-failed re-spawns failed ones.
Before deploying, `whileai preflight` probes each arm's remote teacher (--no-preflight skips it).
Exit codes: 0 done, 1 preflight failed, 2 bad input (one line), 3 still running, 4 Modal
unreachable / no token.
"""

import sys

from whileai.cli.recipe import main

if __name__ == "__main__":
    sys.exit(main("prime-rl", __doc__))
