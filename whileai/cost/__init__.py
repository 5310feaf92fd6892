"""Facts about spend: sizes from model names, GPU-hours before launch, budgets per step.

- `sizes`: parameters and bf16 bytes from a model's name, GPUs per engine;
- `estimate`: the report's `Cost` record and its line (tokens, GPU-hours, with the formula);
- `budget`: rollouts and tokens per step, and matching arms on a budget.

May import: `whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""
