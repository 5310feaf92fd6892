"""Targets: a pure `compile(run) -> Compiled` per training framework, and its checks.

- `prime_rl/`: a prime-rl TOML at the pinned commit, its loader's rules mirrored offline;
- `trl/`: a TRL run directory (config, data, reward, scripts), checked by TRL's own parser;
- `verl/`: a verl run directory whose run.sh runs verl, checked by verl's own config code;
- `pipeline`: the one compile skeleton each target supplies its steps to;
- `stages`: a two-stage run as two compiled stages and the script between them;
- `overrides`: `--set` and `[overrides]` checked against a target's catalogue (through its adapter).

Nothing here prints or writes files. May import: `whileai.report`, `whileai.rules`, the facts,
`whileai.spec`, `whileai.catalogs`, `whileai.errors`.
"""
