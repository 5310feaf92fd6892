"""Research-backed warnings as data: each rule has an id, a condition, a message and a citation.

- `base`: `Rule`, `Facts` and `Finding`, what every rule set is made of;
- `research`: the method rules (teacher size, tokenizers, temperature, holdout ...);
- `scale`: the rules about a run's scale (nodes, engines, SLURM).

A target's load-time validation (prime-rl's loader mirror) is not here: it lives with the target
(`whileai.targets.prime_rl.loader`). May import: the facts, `whileai.spec`, `whileai.catalogs`.
"""
