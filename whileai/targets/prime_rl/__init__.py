"""prime-rl at the pinned commit (`pin`): the TOML `uv run rl @ file.toml` reads.

- `compile`: the entry point, `compile(run) -> Compiled`;
- `fieldmap`, `algo`, `deploy`, `mixture`, `teacher`, `renderer`: the field map as data, per part;
- `resolve`: the final value of each key after prime-rl copies shared fields down;
- `catalog`: the pinned catalogue; `check`: a hand-written TOML through the loader mirror
  (`loader/`), with rename hints; `cost`: the cost estimate; `rules`: prime-rl's own warning rules;
- `plan`, `nodes`: what one compile derives from the spec, once, before the field map.

Import the module you need (`from whileai.targets.prime_rl import compile as prime_rl`): this
package imports nothing, so `whileai check` does not build the spec models.
"""
