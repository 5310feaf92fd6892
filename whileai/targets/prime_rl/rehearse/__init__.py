"""prime-rl's rehearsal (the target's `rehearsal` hook, `hook.py`): prime-rl's own `rl` launcher,
orchestrator and env servers for N steps on a CPU, with stand-ins for the policy inference
server, every teacher and the trainer, before any GPU is paid for (docs/rehearse.md).

    from whileai.targets import registry
    r = registry.get("prime-rl").rehearsal
    result = r.rehearse(r.stages(compiled), python=None, steps=2, timeout=900, keep=None, say=print)
    result.ok, r.lines(result)

One module per job: `env` (find and check the prime-rl environment; `--setup`), `inputs` (the
stages and the teachers' run lines), `offline` (the offline copy, each replacement named),
`scope` (what the offline copy can stand in: tasksets, renderers, the model family), `prepare`
(stand-in commands on PATH, the environment, the tiny model, teachers' tokenizers cached
offline), `run` (a rehearsal, stage by stage, and a two-stage run's hand-off), `logs` (prime-rl's
logs and the stand-ins' records read into a verdict, phases and step lines); `standins/` holds
the scripts that run inside the prime-rl environment, started by their path. What any target's
rehearsal shares (the supervisor, the folder and deadline, phase timing, the verdict types and
lines) is whileai.rehearse. Importing the package imports none of them.
"""
