"""The SFT arm's holdout score on verl, by verl's own validation: what the verl recipe adds to it.

verl's sft_trainer reports a validation loss, not the taskset's reward, so an SFT arm has no
number to pair with the RL arms' `val-core` scores. The recipe gives it one more step, eval.sh,
run after run.sh in the same container:

1. `python3 -m verl.model_merger merge --backend fsdp` turns the last sft_trainer checkpoint
   (`outputs/global_step_<n>`, saved at the last step: sft_trainer.py:441) into a Hugging Face
   model, with the LoRA adapter beside it in `lora_adapter/` when the arm trained one
   (model_merger/base_model_merger.py:311-408);
2. `bash eval/run.sh`: the baseline arm's spec (its holdout rows and reward: what every pair
   is scored with) compiled with `-t verl` as GRPO on this arm's model, LoRA and sampling, with
   `trainer.val_only=True`: verl loads that model (and adapter), scores the holdout exactly as
   the RL arms' validation does (trainer_base.py:438-448) and stops before any training step.

    files = eval_files(compiled_sft_arm)    # {"eval.sh": ..., "eval/run.sh": ..., "eval/data/...": ...}
"""

from __future__ import annotations

from typing import Any

from whileai.spec.load import replace_run
from whileai.targets.compiled import Compiled

LOGGER = ["console", "file"]  # verl's file logger: the JSON lines whileai reads (utils/tracking.py)
VAL = "$PWD/outputs/val"  # trainer.validation_data_dir: one <step>.jsonl per validation
MERGED = "outputs/merged"

SCRIPT = """#!/usr/bin/env bash
# written by whileai's verl recipe: score this SFT arm's final model on the holdout with verl's
# own validation (eval/run.sh, trainer.val_only=True), the way the RL arms are scored.
set -xeuo pipefail
cd "$(dirname "$0")"

last=$(ls -d outputs/global_step_* | sort -t_ -k3 -n | tail -1)
python3 -m verl.model_merger merge --backend fsdp --local_dir "$last" --target_dir {merged}

bash eval/run.sh
"""


def recipe_overrides(name: str) -> dict[str, Any]:
    """What the recipe sets on every RL arm: the file logger and the validation dump."""
    return {"trainer.logger": LOGGER, "trainer.validation_data_dir": VAL}


def sft_overrides() -> dict[str, Any]:
    """The SFT arm's training job logs to the file logger too (its loss curves)."""
    return {"sft.trainer.logger": LOGGER}


def grader(c: Compiled, name: str, baseline: Any = None) -> Any:
    """The SFT arm's merged model as a verl validation-only run: the baseline's spec (its holdout
    and reward, the ones every pair is scored with; the SFT spec itself when none is given) with
    the SFT arm's model, LoRA and sampling."""
    run = c.run
    m = run.method
    overrides: dict[str, Any] = {
        "trainer.val_only": True, "trainer.val_before_train": True,
        "trainer.experiment_name": f"{name.replace('@', '-')}-eval",
    } | recipe_overrides(name)
    if run.lora:
        overrides["actor_rollout_ref.model.lora_adapter_path"] = f"$PWD/../{MERGED}/lora_adapter"
    rank = {"lora_rank": run.lora_rank} if run.lora else {}  # lora = false: no rank (a contradiction)
    method = {"type": "grpo", "samples": max(2, m.samples), "temperature": m.temperature,
              "max_tokens": m.max_tokens}
    return replace_run(baseline if baseline is not None else run, model=f"$PWD/../{MERGED}",
                       lora=run.lora, seed=run.seed, method=method,
                       overrides=overrides, accept={}, then=None, **rank)


def eval_files(c: Compiled, name: str, baseline: Any = None) -> dict[str, str]:
    """eval.sh and the eval/ folder (run.sh, data, reward.py) for the SFT arm `c`, scored with
    `baseline`'s holdout and reward (a RunSpec; default: the arm's own spec)."""
    from whileai.targets.verl.compile import compile as verl

    g = verl(grader(c, name, baseline))
    return {"eval.sh": SCRIPT.format(merged=MERGED)} | {f"eval/{k}": v for k, v in g.files.items()
                                                         if k != "README.md"}


__all__ = ["LOGGER", "VAL", "eval_files", "grader", "recipe_overrides", "sft_overrides"]
