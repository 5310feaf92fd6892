"""Sanity warnings: a compiled file that runs but cannot train what the spec asks for.

They read the facts a target states about its compiled file (overrides included); like
whileai.rules.scale, whileai.rules.research lists them with the research rules, so `whileai rules`
and docs/rules.md show them too.

`grpo-no-credit`: GRPO's credit is group-relative. prime-rl 559b447 scores a group's traces with
`advantages = rewards - rewards.mean()` (orchestrator/algo/grpo.py:30), so a group of one episode
that yields one trainable trace has the advantage `r - r = 0` on every token, whatever the reward.
With `orchestrator.train.filter_zero_advantages` (on by default, configs/orchestrator.py:270)
train_sink.py:361-366 prunes every such sample, every batch ships empty, and the orchestrator
raises after 10 consecutive empty train batches (orchestrator.py:99, 640-651); with the filter
off the batches ship and the loss's rl term (trainer/rl/loss.py) is 0 on every token: the run
spends its GPU-hours and trains nothing. A group of one episode of a multi-seat taskset
(kuhn-poker: two traces) still compares its seats, so it is not flagged. The spec cannot ask for
this (GRPO's `method.samples` is at least 2); an override or an extra training source can
(`--set orchestrator.group_size=1`).
"""

from __future__ import annotations

from whileai.rules.base import Facts, Rule
from whileai.spec.run import RunSpec

EMPTY_BATCHES = 10  # prime-rl orchestrator.py:99 MAX_CONSECUTIVE_EMPTY_BATCHES


def _no_credit(run: RunSpec, f: Facts) -> str | None:
    if not f.lone_groups:
        return None
    names = ", ".join(repr(n) for n in f.lone_groups)
    which = f"training source{'s' if len(f.lone_groups) > 1 else ''} {names}"
    head = (f"GRPO with groups of one on {which} (group_size 1, one trainable trace per episode): "
            "each advantage is the reward minus its group's mean, the reward itself, so every "
            "advantage is 0 and the rl term trains nothing")
    if f.filter_zero_advantages is False:
        tail = ("; with filter_zero_advantages off the batches ship anyway and the run spends its "
                "steps on zero credit")
    elif (f.train_sources or 1) > len(f.lone_groups):
        tail = ("; prime-rl's filter_zero_advantages (on) prunes those samples after the batch is cut, "
                "so every step trains the other sources on fewer traces than batch_size")
    else:
        tail = (f"; prime-rl's filter_zero_advantages (on) prunes every sample, so each batch "
                f"ships empty and the run stops after {EMPTY_BATCHES} consecutive empty train batches")
    return f"{head}{tail}. Sample at least 2 per prompt (method.samples; the group_size override)"


SANITY_RULES: list[Rule] = [
    Rule("grpo-no-credit", "a GRPO training source samples groups of one (group_size 1) on a "
         "taskset with one trainable trace per episode: every advantage is 0",
         "prime-rl 559b447 orchestrator/algo/grpo.py:30 (advantages = rewards - rewards.mean()); "
         "train_sink.py:361-366 and orchestrator.py:640-651 (filter_zero_advantages, 10 "
         "consecutive empty train batches)", _no_credit),
]

__all__ = ["EMPTY_BATCHES", "SANITY_RULES"]
