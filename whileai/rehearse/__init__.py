"""What every target's rehearsal shares (`whileai rehearse`; a target's own rehearsal is its
`rehearsal` hook, whileai.targets.hooks.Rehearsal, in its own package).

`supervise` (processes in groups of their own under one deadline, stopped on Ctrl-C; ports),
`session` (the arguments checked, the folder kept or temporary, SIGTERM as Ctrl-C, verdict.json),
`timing` (seconds per phase), `verdict` (`Cause`, `Verdict`, `Result`, and quoting a log's first
failure) and `report` (a result as lines). Below the targets: it imports no target, and nothing
here knows one. Importing the package imports none of them.
"""
