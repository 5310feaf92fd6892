"""Research-backed warnings as data: each rule has an id, a condition, a message and a citation.

- `base`: `Rule`, `Facts` and `Finding`, what every rule set is made of;
- `research`: the method rules every target's files go through (teacher size, tokenizers,
  temperature, holdout ...);
- `accept`, `honoured`: acceptances, the divergence a file really trains, and `--strict`.

A target's own rules (prime-rl's scale and sanity rules, TRL's adapter-EMA rules) live with the
target (`whileai.targets.<t>.rules`, listed by whileai.targets.registry.rules), and so does its
load-time validation (prime-rl's loader mirror, `whileai.targets.prime_rl.loader`).
May import: the facts, `whileai.spec`, `whileai.catalogs`.
"""
