"""Hugging Face TRL 1.16.0: a run directory for `trl distillation`, `trl grpo`, `trl sft` or SDFT.

- `compile`: the entry point, `compile(run) -> Compiled`;
- `fieldmap`, `accelerate`, `cost`, `reward`: the field map as data, the launch layout, the spend
  and the shipped reward module;
- `catalog`: TRL's dataclass fields at the pin; `check`: TRL's own parser on a written directory;
- `sample`, `sdft`: scripts shipped into the run directory as files (not imported by whileai).

Import the module you need; this package imports nothing.
"""
