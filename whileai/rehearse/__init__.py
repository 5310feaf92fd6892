"""`whileai rehearse`: prime-rl's own `rl` launcher, orchestrator and env servers for N steps on a
CPU, with stand-ins for the policy inference server, every teacher and the trainer, before any
GPU is paid for (docs/rehearse.md).

    from whileai.rehearse.env import find_python
    from whileai.rehearse.inputs import from_compiled
    from whileai.rehearse.run import rehearse
    result = rehearse(from_compiled(compiled), python=find_python(None), steps=2, timeout=900)
    result.ok, result.verdicts[0].summary

One module per job: `env` (find and check the prime-rl environment; `--setup`), `inputs` (the
stages and the teachers' run lines), `offline` (the offline copy, each replacement named),
`prepare` (stand-in commands on PATH, the environment, the tiny model, teachers' tokenizers
cached offline), `supervise` (process groups under one deadline), `verdict` (ok with per-step facts, or the
first cause quoted from its log), `run` (a rehearsal, stage by stage, and a two-stage run's
hand-off), `report` (the verdict as lines); `standins/` holds the scripts that run inside the
prime-rl environment. Importing the package imports none of them.
"""
