"""The report: renderings of a `whileai.targets.compiled.Compiled`, and nothing else.

- `records`: the rows a target reports (`Read`, `Ignore`, `Fixed`, `Teacher`), one type each;
- `text`: the plain report (`print(compiled)`, a pipe, a log), wrapped to a width;
- `render`: the rich tables a terminal gets, `whileai explain`, `methods` and `rules`;
- `tables`: rich tables whose words all stay whole (else the rows as lines); `explain`: the
  rows of `whileai explain`, as plain lines or JSON;
- `wrap`: folding lines with a hanging indent; `document`: the report JSON's pydantic model (its rows
  are the records, `whileai.rules.base.Finding` and `whileai.cost.estimate.Cost`).

A Compiled is read by its fields only (its type is imported for type checking), so this room
stays below the targets that build it. May import: `whileai.rules`, the facts
(`whileai.cost`, `whileai.tasksets`, `whileai.vocab`), `whileai.spec`, `whileai.catalogs`,
`whileai.errors`.
"""
