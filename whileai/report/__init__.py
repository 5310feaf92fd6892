"""The report: what a target reads, ignores and warns about, and its renderings.

- `compiled`: `Compiled` (text, reads, ignores, fixed keys, findings, run command, cost);
- `fieldmap`: a backend's field map as data (rows of spec field -> target path), and `apply`;
- `render`: the plain, rich and JSON renderings; `model`: the report JSON's pydantic model.

May import: `whileai.rules`, the facts (`whileai.cost`, `whileai.tasksets`, `whileai.vocab`),
`whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""

from whileai.moved import names_of

__getattr__ = names_of(__name__, "compiled", __path__)  # a name of `compiled`, imported on first use
