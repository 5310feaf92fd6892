"""Ground: the pinned catalogues of each target's keys and the taskset catalogue, and dotted key paths.

- `targets`: every key a target accepts at its pin (prime-rl's entry points, TRL's dataclasses);
- `tasksets`: the prime-rl tasksets at the pin (roles, arguments, splits), from the package data;
- `paths`: `a.source[0].b` and `a.source.0.b` are one key everywhere;
- `defs`: the prime-rl catalogue's `$defs`, each entry parsed from the file when first read.

May import: `whileai.errors` only (and the JSON under `schemas/`).
"""
