"""TRL's generation-batch rule at compile: a batch of incomplete prompt groups (the overrides'
per-device batch x accumulation not a multiple of num_generations) is refused in one line naming
the keys and TRL's reason (trl/trainer/grpo_config.py:1131-1135 raises at start otherwise)."""

from __future__ import annotations

import pytest
from trl_helpers import seed_run

from whileai.errors import SpecError
from whileai.spec.run import GRPO
from whileai.targets.trl import compile as trl


@pytest.mark.parametrize(("per_device", "accumulation", "refused"),
                         [(3, 1, True), (3, 8, False), (4, 2, False)])
def test_a_generation_batch_of_incomplete_groups_is_refused(per_device: int, accumulation: int,
                                                            refused: bool) -> None:
    run = seed_run("grpo", method=GRPO(samples=8), overrides={
        "per_device_train_batch_size": per_device, "gradient_accumulation_steps": accumulation})
    if not refused:
        assert trl.compile(run).run.overrides["per_device_train_batch_size"] == per_device
        return
    with pytest.raises(SpecError, match=r"= 3 completions; a multiple of num_generations \(8\): TRL's "
                       "config rejects a generation batch of incomplete prompt groups"):
        trl.compile(run)
