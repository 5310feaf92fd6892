"""`Facts`: what a target states its compiled file will really do (overrides included), typed.

The target computes them once (`whileai.targets.prime_rl.compile.facts`,
`whileai.targets.trl.compile.facts`); the warning rules, the report's summary lines and the
per-step spend (`whileai.cost.budget.per_step`) read them, never the spec's values where the
file says otherwise. A field is None where the target does not state it (an unreadable
override, or a fact of the other target); the reader then falls back to the spec.
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
    teacher_reads: str | None = None  # TRL: 'text' (SFT re-tokenizes) or 'token_ids'
    loss_top_k: bool | None = None  # TRL: False, its losses span the full vocabulary
    loss_temperature: bool | None = None  # TRL: the loss divides both models' logits by it
    adapter_ema: bool | None = None  # TRL SDFT: an EMA of the LoRA adapter
    strategy: str | None = None  # TRL: the accelerate strategy over several processes
    # one step, from the compiled document: rollouts = prompts x samples_effective x seats
    model: str | None = None
    steps: int | None = None
    rollouts: int | None = None  # completions (prime-rl: traces) per optimizer step
    prompts: int | str | None = None  # a text where the step is not a whole number of prompts
    samples_effective: int | None = None  # completions per prompt the target samples
    seats: int = 1  # prime-rl: trainable traces per episode (whileai.tasksets.seats)
    max_tokens: int | None = None  # the completion cap as written (a mixture: the longest)
    seq_len: int | None = None  # the context the file sets for every server (prime-rl's seq_len)
    gpus: int | None = None  # prime-rl: GPUs the run's processes hold (teachers served apart not counted)
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
    lone_groups: tuple[str, ...] = ()  # prime-rl: GRPO sources sampling groups of one single-trace episode
    filter_zero_advantages: bool | None = None  # prime-rl: zero-advantage samples pruned
    train_sources: int | None = None  # prime-rl: training sources in the compiled file
    # prime-rl's scale (whileai.rules.scale)
    on_slurm: bool | None = None
    nodes: int | None = None
    output_dir: str | None = None
    slurm_partition: str | None = None
    engine_tp: int | None = None
    engine_need: int | None = None
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
