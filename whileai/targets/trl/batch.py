"""TRL 1.16's own batch rules, applied to the compiled config (overrides included), so a spec
TRL would reject, or would accept and then train for zero steps, is refused at compile.

- Generation batch (GRPOConfig / SDFTConfig `__post_init__`): `generation_batch_size` defaults
  to per_device_train_batch_size x num_processes x steps_per_generation (steps_per_generation
  defaults to gradient_accumulation_steps); a given generation_batch_size must divide by
  per_device_train_batch_size x num_processes; the generation batch must divide by
  num_generations. The check is over every process together, not per process.
- Zero steps (trl.trainer.utils.RepeatSampler): the sampler cuts the shuffled training rows
  into batches of generation_batch_size / num_generations prompts (DistillationTrainer: the
  whole per_device x processes x accumulation batch, one completion a prompt) and drops an
  incomplete batch. With fewer training rows than one batch, the dataloader is empty and
  transformers' Trainer logs "stopping training at step 0", exits 0 and saves the untouched
  model. `trl sft` is not affected: sample.py cycles the training rows to as many prompts as
  the steps need, and SFTTrainer's sampler keeps an incomplete batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai.errors import SpecError, raw
from whileai.spec.run import RunSpec
from whileai.targets.trl.accelerate import processes
from whileai.targets.trl.fieldmap import one_per_prompt
from whileai.tasksets.builtin import for_run

GENERATION_KEYS = ("per_device_train_batch_size", "gradient_accumulation_steps",
                   "steps_per_generation", "generation_batch_size", "num_generations")


def step_batch(doc: Mapping[str, Any], processes: int) -> int:
    """Completions per optimizer step over every process, as TRL's Trainer counts them:
    per_device_train_batch_size x gradient_accumulation_steps x processes (TRL's defaults 8, 1)."""
    return int(doc.get("per_device_train_batch_size", 8)) * int(doc.get("gradient_accumulation_steps", 1)) \
        * processes


def generation_batch(doc: dict[str, Any], run: RunSpec) -> int:
    """Completions TRL generates at once, over every process, as its config computes it."""
    per_device = doc.get("per_device_train_batch_size", 8)
    n = processes(run)
    given, steps = doc.get("generation_batch_size"), doc.get("steps_per_generation")
    if given is not None and steps is not None:
        raise SpecError(_blame(run, ("generation_batch_size", "steps_per_generation")),
                        raw("generation_batch_size and steps_per_generation both set"),
                        "set one of them: TRL's config rejects both")
    if given is not None:
        if given % (per_device * n):
            raise SpecError(_blame(run, ("generation_batch_size",)), given,
                            f"a multiple of per_device_train_batch_size {per_device} x {n} "
                            f"process{'es' if n > 1 else ''} = {per_device * n}: TRL's config "
                            "rejects it otherwise")
        return int(given)
    if steps is None:  # steps_per_generation defaults to gradient_accumulation_steps
        return step_batch(doc, n)
    return int(per_device * n * steps)


def check(doc: dict[str, Any], run: RunSpec) -> None:
    """TRL's divisibility rule (GRPO, OPSD) and the zero-step rule (OPD, GRPO, OPSD)."""
    if run.method.off_policy:
        return
    if one_per_prompt(run):
        prompts = step_batch(doc, processes(run))  # DistillationTrainer: one completion a prompt
    else:
        n_gen = doc.get("num_generations", 8)
        batch = generation_batch(doc, run)
        if batch % n_gen:
            raise SpecError(_blame(run, GENERATION_KEYS), raw(_formula(doc, run, batch)),
                            f"a multiple of num_generations ({n_gen}): TRL's config rejects a "
                            "generation batch of incomplete prompt groups")
        prompts = batch // n_gen
    rows = for_run(run).train_size
    if prompts > rows:
        where = f"{for_run(run).name} has {rows} training row{'s' if rows != 1 else ''}"
        raise SpecError(_blame(run, GENERATION_KEYS), raw(
            f"{prompts} prompts per step but {where}"),
            "TRL's sampler drops an incomplete batch of prompts, so the run would stop at step 0 "
            "and save the untouched model: set prompts to at most "
            f"{rows} or add training rows")


def _formula(doc: dict[str, Any], run: RunSpec, batch: int) -> str:
    n = processes(run)
    if doc.get("generation_batch_size") is not None:
        return f"generation_batch_size {batch}"
    steps = doc.get("steps_per_generation", doc.get("gradient_accumulation_steps", 1))
    return (f"a generation batch of per_device_train_batch_size {doc.get('per_device_train_batch_size', 8)}"
            f" x {n} process{'es' if n > 1 else ''} x steps_per_generation {steps} = {batch} completions")


def _blame(run: RunSpec, keys: tuple[str, ...], default: str = "prompts") -> str:
    """The field the user set: the overridden batch key(s), else `default`."""
    mine = [k for k in keys if k in run.overrides]
    if len(mine) == 1:
        return f"overrides.{mine[0]}"
    return "overrides" if mine else default


__all__ = ["GENERATION_KEYS", "check", "generation_batch", "step_batch"]
