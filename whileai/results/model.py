"""The shape of `results.json`; `schemas/results.schema.json` is generated from it:

    python -m whileai.results > schemas/results.schema.json
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from whileai.launch.metrics import Point

SCHEMA_ID = "https://whileai.dev/schemas/results.schema.json"
Names = str | list[str] | None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigInfo(_Model):
    """The arm's compiled config and the compiler's account of it."""

    name: str | None = Field(default=None, description="File name of the main config.")
    text: str | None = Field(default=None, description="The config file's text as launched.")
    reads: list[dict[str, Any]] = Field(default_factory=list, description="Spec fields read.")
    ignores: list[dict[str, Any]] = Field(default_factory=list, description="Fields not read.")
    commands: list[str] = Field(default_factory=list, description="Commands the compiler gave.")


class Delta(_Model):
    """An arm group against the baseline (GRPO) on the same holdout."""

    baseline: str = Field(description="The baseline group.")
    mean_a: float | None = Field(description="Mean per-task reward of this group.")
    mean_b: float | None = Field(description="Mean per-task reward of the baseline.")
    delta: float | None = Field(description="mean_a − mean_b (paired: mean of differences).")
    ci95: tuple[float, float] | None = Field(description="Percentile bootstrap 95% CI.")
    p_value: float | None = Field(description="Sign-flip (or unpaired) permutation p-value.")
    n_tasks: int = Field(description="Tasks paired (unpaired: the smaller sample).")
    paired: bool
    draws: int = Field(description="Bootstrap draws.")
    seed: int = Field(description="Seed of the bootstrap and permutation draws.")
    noise_band: float | None = Field(
        description="t(df)·run_std·√(1/n_a+1/n_b) from repeated runs; null without repeats.")
    within_noise: bool | None = Field(description="|delta| <= noise_band; null without repeats.")
    verdict: Literal["better", "worse", "within noise", "insufficient data"]
    warnings: list[str] = Field(default_factory=list)


class ArmResult(_Model):
    name: str
    group: str = Field(description="Repeats of one setting share a group (name before '@').")
    method: str
    state: Literal["planned", "pending", "done", "failed"]
    attempts: int
    error: str | None = None
    backend: str | None = None
    returncode: int | None = None
    seconds: float | None = None
    image: str | None = None
    gpu: str | None = None
    config: ConfigInfo
    series: dict[str, list[Point]] = Field(
        description="Per-step [step, value]: eval_reward, train_reward, teacher_kl where present.")
    per_task: dict[str, float] = Field(description="Final holdout reward per task.")
    mean_task_reward: float | None = Field(description="Mean of per_task.")
    final_eval_reward: float | None = Field(description="Last eval_reward point.")
    delta: Delta | None = Field(default=None, description="This arm's group vs the baseline.")


class GroupNoise(_Model):
    runs: list[str] = Field(description="Finished runs of the group.")
    run_means: list[float] = Field(description="Each run's mean per-task reward.")
    run_std: float | None = Field(description="Sample std of run_means; null for one run.")


class Results(_Model):
    """Paired arms on one holdout: configs, per-step series and deltas against GRPO."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"$id": SCHEMA_ID})

    schema_version: Literal[1] = 1
    tag: str
    student: Names = None
    teacher: Names = None
    taskset: Names = None
    holdout: Names = None
    steps: int | list[int] | str | list[str] | None = None
    versions: dict[str, str] = Field(default_factory=dict, description="Library versions/commits.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Other run metadata.")
    baseline: str | None = Field(description="The GRPO group every delta is against.")
    arms: dict[str, ArmResult]
    noise: dict[str, GroupNoise] = Field(description="Per group: its runs' spread.")
    vs_grpo: dict[str, Delta] = Field(description="Per non-baseline group: delta vs baseline.")
    warnings: list[str] = Field(default_factory=list)


def json_schema() -> dict[str, Any]:
    schema = Results.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"

