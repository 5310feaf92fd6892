"""The report: what a target reads, ignores and warns about, and its renderings.

- `compiled`: `Compiled` (text, reads, ignores, fixed keys, findings, run command, cost);
- `fieldmap`: a backend's field map as data (rows of spec field -> target path), and `apply`;
- `render`: the plain, rich and JSON renderings; `model`: the report JSON's pydantic model.

May import: `whileai.rules`, the facts (`whileai.cost`, `whileai.tasksets`, `whileai.vocab`),
`whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""
