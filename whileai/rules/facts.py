"""`Facts`: what a target states its compiled file will really do (overrides included), typed.

Each target computes them once (`whileai.targets.<t>.compile.facts`); the warning rules (the
shared ones and each target's own), the report's summary lines and the per-step spend
(`whileai.cost.budget.per_step`) read them, never the spec's values where the file says otherwise.
Every field is a target-neutral fact; a field is None (or its default) where the target does not
state it (an unreadable override, or a thing its files do not have); the reader then falls back
to the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Facts:
    """What a target states its compiled file will do; None where it does not say."""

    # the method as the target runs it
    estimator: str | None = None  # policy_gradient, cross_entropy, sampled_token, full_vocab
    support_top_k: int | None = None  # the loss sees only the teacher's top k (None: full vocabulary)
    anchor: str | None = None  # OPSD's self-teacher weights as run: live, ema, initial
    top_p: float | None = None
    divergence: str | None = None  # the divergence the loss computes
    divergence_how: str = ""
    teacher_reads: str | None = None  # the teacher's output as the student gets it: 'text' or 'token_ids'
    # ('own_tokenizer': the teacher re-tokenizes the text and the loss aligns the vocabularies: GOLD)
    loss_top_k: bool | None = None  # the loss honours method.top_k (False: it spans the full vocabulary)
    loss_temperature: bool | None = None  # the loss divides both models' logits by the temperature
    adapter_ema: bool | None = None  # the EMA self-teacher averages the LoRA adapter, not the weights
    strategy: str | None = None  # how several training processes shard the model (None: one process)
    # one step, from the compiled document: rollouts = prompts x samples_effective x seats
    model: str | None = None
    steps: int | None = None
    rollouts: int | None = None  # completions (or trainable traces) per optimizer step
    prompts: int | str | None = None  # a text where the step is not a whole number of prompts
    samples_effective: int | None = None  # completions per prompt the target samples
    seats: int = 1  # trainable traces per episode (whileai.tasksets.seats; 1: one per completion)
    max_tokens: int | None = None  # the completion cap as written (a mixture: the longest)
    seq_len: int | None = None  # the context the file sets for every server
    gpus: int | None = None  # GPUs the run's processes hold (teachers served apart not counted)
    layout: str | None = None
    weights: str | None = None
    asynchrony: str | None = None
    learning_rate: float | None = None
    eval_interval: int | None = None
    eval_off: bool | None = None  # the compiled file runs no evaluation (None: not read)
    eval_at_start: bool | None = None
    holdout: dict[str, Any] | None = None  # which rows eval reads against training's
    holdouts: tuple[dict[str, Any], ...] = ()  # a mixture: every eval source against each training one
    unchecked_tasksets: tuple[str, ...] = ()
    lone_groups: tuple[str, ...] = ()  # GRPO sources sampling groups of one single-trace episode
    filter_zero_advantages: bool | None = None  # zero-advantage samples are pruned from the batch
    train_sources: int | None = None  # training sources in the compiled file
    # the run's scale
    on_slurm: bool | None = None  # the run is submitted to SLURM
    nodes: int | None = None
    output_dir: str | None = None  # where the trainer writes weights and checkpoints
    slurm_partition: str | None = None  # the SLURM partition the file names (None: the default)
    engine_tp: int | None = None  # GPUs per inference engine as written
    engine_need: int | None = None  # GPUs an engine needs for the student's weights and KV
    # the report
    ignored: tuple[str, ...] = ()  # spec fields the target ignores (a rule reading one stays quiet)
    replaced: tuple[tuple[str, Any], ...] = ()  # spec field -> the override's value the file holds
    handoff: str | None = None  # a two-stage run: how stage 2 starts from stage 1's student

    # the dict it replaced: `compiled.data["prompts"]`, `compiled.data.get("seats", 1)`
    def __getitem__(self, key: str) -> Any:
        if key not in _NAMES:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        value = getattr(self, key, None) if key in _NAMES else None
        return default if value is None else value


_NAMES = frozenset(f.name for f in fields(Facts))

__all__ = ["Facts"]
