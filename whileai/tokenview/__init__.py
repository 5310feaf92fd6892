"""`whileai inspect`: the per-token distillation signal of a spec, before any training run.

    whileai inspect examples/opd.toml --local-student PATH --local-teacher PATH
    whileai inspect examples/opd.toml --student-endpoint http://localhost:8000/v1

The sampler (the student, for OPD and OPSD) answers a few prompts of the spec's task data;
every completion token is scored under the student and the teacher; the result is a
self-contained HTML page, the same numbers as JSON (`whileai schema inspect`) and a terminal
summary. Modules:

- `document`: the JSON document's pydantic models (light: pydantic only);
- `adapters`: per method, who samples and what context the teacher sees;
- `data`: which prompts, and the teacher's context (OPSD's privileged hint);
- `local` (transformers, imported lazily) and `remote` (OpenAI-compatible servers, stdlib
  HTTP): the two ways to generate and score;
- `stats`: per-completion and overall statistics; `page`: the HTML; `run`: the pipeline;
  `summary`: the terminal summary.

`whileai inspect --run OUTPUT_DIR` reads a prime-rl run's token exports instead (no model):
`exports` (the pinned exporter's layout, streamed), `runsummary` (per-step statistics),
`rundocument` (its JSON document's models), `runpage` (the page) and `runapp` (the command).
With a teacher (`--teacher-endpoint`, `--local-teacher`, `--teacher`) the same pass scores the
run's own samples: `teacher` (which teacher, prime-rl's route, the tokenizer check),
`runteacher` (picking and scoring, streamed), `teacherdocument` and `teacherreport` (the
documents: the run report's `teacher`, and spec inspection's own report for the token page) and
`runteacherapp` (the command's part).

Nothing here is imported by `import whileai` or `whileai compile`; torch and transformers are
imported only when a local model is loaded.
"""
