"""Facts about spend: sizes from model names, GPU-hours before launch, budgets per step.

- `sizes`: parameters and bf16 bytes from a model's name, GPUs per engine;
- `estimate`: the report's `Cost` record and its line (tokens, GPU-hours, with the formula);
- `budget`: rollouts and tokens per step, and matching arms on a budget.

May import: `whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""

from whileai.moved import names_of

__getattr__ = names_of(__name__, "estimate", __path__)  # a name of `estimate`, imported on first use
