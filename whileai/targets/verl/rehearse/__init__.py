"""verl's rehearsal (`whileai rehearse SPEC -t verl`): verl 0.9.1's own code run on a CPU for each
stage of a run folder, with stand-ins only where a GPU is needed (docs/rehearse.md).

    hook.py     the target's `rehearsal` hook (whileai.targets.hooks.Rehearsal), run in whileai's Python
    stages.py   the stages: one per verl command of a run folder, with the node each gets
    env.py      verl's Python: found, checked before any work, and the commands that make one
    run.py      each stage run by verl's Python under one deadline, its JSON lines read as a verdict
    inside.py   run by verl's Python, one stage: prints one JSON line per step (context.StepRecord)
    context.py  what a step gets (Context) and what it says (StepRecord): standard library only
"""
