"""verl 0.9.1 (verl-project/verl, formerly volcengine/verl): a run directory whose run.sh runs
`python3 -m verl.trainer.main_ppo` (GRPO, OPD) or verl's generation server then its SFT trainer
(SFT on teacher samples).

- `compile`: the entry point, `compile(run) -> Compiled`; `fieldmap`: the field map as data;
  `knobs`: the hardware keys verl requires, chosen by stated rules; `script`: run.sh, the README
  and the lines past one node; `cost`: the spend; `rows`: the tasks as verl's rows;
- `runsh`: a run.sh read back into its commands; `verify`: verl's own check (verl imported there);
- `convert.py`: a script shipped into the run directory (not imported by whileai).

Import the module you need; this package imports nothing.
"""
