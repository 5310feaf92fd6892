"""Tasksets whileai can materialise locally (no hub): data generators and reward functions.

- `builtin`: the built-in tasksets (`resolve`, `BUILTIN`) and a run's tasks (`for_run`, `rows`),
  its module text for a target to ship (`source`);
- `reverse_text`: the reverse-text taskset, standard-library only, so a target may ship it
  verbatim beside a config; `local`: a spec's own JSONL tasks;
- `seats`, `lengths`, `opsd_template`: trainable seats, prompt lengths, OPSD's teacher prompt.

The package imports none of them: a prime-rl compile, which reads `seats` and `opsd_template`
only, imports no taskset data.
"""
