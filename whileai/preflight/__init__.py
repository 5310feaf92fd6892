"""`whileai preflight`: before a GPU is paid for, probe every server, model and machine fact a
run will touch, from what the spec already says (docs/preflight.md).

    from whileai.preflight.run import preflight
    report = preflight(run, target="prime-rl", timeout=10)
    print("\\n".join(report.lines())); sys.exit(report.exit_code)

What to probe is the target's answer (its `probes` hook: whileai.targets.probe, filled in by
whileai/targets/<target>/probe.py); this package does the probing. One module per probe family:
`http` (stdlib HTTP with a hard deadline), `servers` (a teacher or student server, probed the way
the target says the run calls it), `ready` (a client's wait for a server), `tokenize` and
`tokens` (the server's /tokenize against the student's local tokenizer), `machine` (GPUs, disk,
models, memory, the framework's checkout), `report` (the checks as data, one line each or JSON),
`run` (which checks a spec needs, all within the deadline) and `gate` (the recipes' loop); the
command itself is a face, `whileai/cli/preflight.py`. Importing the package imports none of them.
"""
