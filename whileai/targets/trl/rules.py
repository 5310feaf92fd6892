"""TRL's own warning rules: what TRL 1.16 really does with a spec's anchor and layout. The shared
rules (whileai.rules.research) run on every target; these run on TRL's compiled files only
(`TRL.rules()`), and `whileai rules` and docs/rules.md list them after the shared ones
(whileai.targets.registry.rules).

They read the facts the TRL target states (whileai.targets.trl.compile.facts): `adapter_ema` (the
EMA teacher is TRL's PEFT adapter EMA) and `strategy` (the accelerate layout of several
processes).
"""

from __future__ import annotations

from whileai.rules.base import Facts, Rule
from whileai.spec.run import OPSD, RunSpec, anchor_rate


def _adapter_ema(run: RunSpec, f: Facts) -> str | None:
    if not f.adapter_ema or not isinstance(run.method, OPSD):
        return None
    rate = anchor_rate(run.method.anchor)
    return (f"the EMA teacher ({run.method.anchor}) is not a moving average of the student: with LoRA, "
            "TRL averages the adapter's A and B matrices separately, both starting from zero, so "
            "the teacher's weight change B_ema x A_ema is only about 1-(1-r)^t of a true EMA of "
            f"the student's B x A at step t (r = {rate:g}); for a true weight EMA train full weights "
            "(lora = false), or anchor 'initial' for a fixed teacher")


def _adapter_ema_sharded(run: RunSpec, f: Facts) -> str | None:
    if not f.adapter_ema or f.strategy is None:
        return None
    return (f"LoRA with an EMA anchor over several processes ({f.strategy}): TRL adds the "
            "teacher adapter in on_train_begin, after the student is sharded, and reads the "
            "student adapter's state from the sharded model; TRL's tracker reports this broken "
            "for SDPO under ZeRO-3 and no GPU run has shown it works under FSDP2: run on one GPU, "
            "train full weights (lora = false), or anchor 'initial'")


RULES: list[Rule] = [
    Rule("ema-lora-adapter", "OPSD on TRL with an EMA anchor and LoRA: the teacher is an EMA of "
         "the LoRA matrices, not of the student's weights",
         "TRL 1.16 trl/experimental/sdft/teacher_sync.py PEFTAdapterEMACallback (zero-initialised "
         "shadow of each adapter tensor)", _adapter_ema),
    Rule("ema-lora-sharded", "OPSD on TRL with an EMA anchor, LoRA and several processes (FSDP2)",
         "TRL 1.16 PEFTAdapterEMACallback.on_train_begin (adapter added after prepare); "
         "huggingface/trl issue 6828", _adapter_ema_sharded),
]

__all__ = ["RULES"]
