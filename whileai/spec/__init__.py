"""The run spec: what a researcher writes, validated (pydantic, frozen, `extra="forbid"`).

- `run`: `RunSpec`, one method on a taskset for a student model;
- `methods`: OPD, OPSD, GRPO, SFT and the teacher `Endpoint`, a union on `type`;
- `tables`: eval, checkpoint, monitor, a second stage, extra training sources;
- `layout`: nodes, GPUs, the trainer / inference split, SLURM;
- `mixture`: a run's training sources as entries with their own method and ratio;
- `values`: bounds every value passes (no secrets, int64, finite floats, ports);
- `validation`: pydantic's errors as one whileai line; `load`: TOML and `--set` into a spec.

The model modules (methods, tables, layout, run) do without `from __future__ import
annotations`: their annotations are objects as the class is read, where pydantic would compile
each one's text when it builds the model (a name defined later is quoted, "RunSpec").

May import: `whileai.catalogs`, `whileai.errors`, `whileai.secretscan`.
"""
