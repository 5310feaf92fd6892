"""prime-rl's own warning rules: the shared ones (whileai.rules.research) run on every target;
these run on prime-rl's compiled files only (`PrimeRL.rules()`), and `whileai rules` and
docs/rules.md list them after the shared ones (whileai.targets.registry.rules).

Sanity, a compiled file that runs but cannot train what the spec asks for (`SANITY_RULES`), and
scale, shared storage, SLURM defaults and engines too small for the student (`SCALE_RULES`). They
read the facts compile states (whileai.targets.prime_rl.compile.facts, overrides included).

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



def _shared_fs(run: RunSpec, f: Facts) -> str | None:
    if not f.on_slurm or (f.nodes or 1) < 2:
        return None
    out = run.output_dir if f.output_dir is None else f.output_dir
    where = ("" if str(out).startswith("/") else
             " (a relative path resolves under the prime-rl checkout, which must be shared too)")
    return (f"output_dir {out!r} must be on a filesystem every node sees{where}: the trainer "
            "writes weights and checkpoints there that the inference nodes read")


def _partition(run: RunSpec, f: Facts) -> str | None:
    if f.on_slurm and f.slurm_partition is None:
        return ("[slurm] has no partition: prime-rl submits to its default partition 'cluster'; "
                "set slurm.partition to one your cluster has (sinfo lists them)")
    return None


def _engine(run: RunSpec, f: Facts) -> str | None:
    tp, need = f.engine_tp, f.engine_need
    if isinstance(tp, int) and isinstance(need, int) and tp < need:
        return (f"inference engines of {tp} GPU{'s' if tp > 1 else ''} for {run.model}, whose bf16 "
                f"weights plus KV headroom need {need}: vLLM may run out of memory at load")
    return None


SCALE_RULES: list[Rule] = [
    Rule("shared-filesystem", "a multi-node SLURM run (its output_dir must be visible to every node)",
         "prime-rl docs/scaling.md § SLURM (shared checkout and venv; the pin's SLURM overlays "
         "write to /shared/...)", _shared_fs),
    Rule("slurm-partition-default", "a SLURM run whose [slurm] table names no partition",
         "prime-rl SlurmConfig.partition default 'cluster' (configs/shared.py)", _partition),
    Rule("engine-too-small", "inference_tp below the GPUs the student's size needs",
         "whileai.cost.sizes: bf16 weights plus KV headroom (docs/cost.md)", _engine),
]

RULES: list[Rule] = SANITY_RULES + SCALE_RULES

__all__ = ["EMPTY_BATCHES", "RULES", "SANITY_RULES", "SCALE_RULES"]
