"""The shape of `results.json`; `schemas/results.schema.json` is generated from it:

    python -m whileai.results > schemas/results.schema.json

Version 2 (whileai 0.1): `comparisons` lists every pair compared, each naming its two arms;
each arm carries its `budget` and `health`; `stats` records the resampling counts; series
points are null where a run logged NaN or infinity (see the arm's health). `vs_grpo` is kept:
the comparisons against the baseline, keyed by arm.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_ID = "https://whileai.dev/schemas/results.schema.json"
Names = str | list[str] | None
Point = tuple[int, float | None]
Verdict = Literal["better", "worse", "within noise", "insufficient data", "collapsed",
                  "baseline collapsed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigInfo(_Model):
    """The arm's compiled config and the compiler's account of it."""

    name: str | None = Field(default=None, description="File name of the main config.")
    text: str | None = Field(default=None, description="The config file's text as launched.")
    reads: list[dict[str, Any]] = Field(default_factory=list, description="Spec fields read.")
    ignores: list[dict[str, Any]] = Field(default_factory=list, description="Fields not read.")
    commands: list[str] = Field(default_factory=list, description="Commands the compiler gave.")


class Quantity(_Model):
    """One budget figure and where it comes from."""

    value: float | None = Field(description="The amount; null when unknown.")
    source: Literal["logged", "estimate", "exact", "unknown"] = Field(
        description="logged: the run's own log or clock; estimate: from the plan (see how); "
        "exact: known without a log (a GRPO arm scores no teacher tokens).")
    how: str = Field(description="The log key or the formula.")


class ArmBudget(_Model):
    """What one run spent."""

    steps: int | None = Field(description="Optimizer steps planned.")
    per_step: dict[str, Any] = Field(description="Planned spend per step: rollouts, prompts, "
                                     "samples, max_tokens, teacher, gpus.")
    rollouts: Quantity = Field(description="Completions sampled for training.")
    sampled_tokens: Quantity = Field(description="Completion tokens sampled for training.")
    teacher_tokens: Quantity = Field(description="Tokens a teacher (or self-teacher) scored, or "
                                     "(SFT) sampled.")
    device_seconds: Quantity = Field(description="GPU-seconds, or CPU-seconds for an offline run.")
    device: Literal["gpu", "cpu"] | None = Field(description="What device_seconds count.")


class Health(_Model):
    """A named collapse or instability finding (whileai.results.health.RULES)."""

    id: str = Field(description="Rule id, e.g. eval-reward-collapsed, non-finite, diverged.")
    series: str = Field(description="The series it was found in.")
    step: int | None = Field(description="The step it starts at.")
    collapse: bool = Field(description="True: the comparison's verdict is 'collapsed'.")
    message: str = Field(description="What was found, with the values and steps.")


class Delta(_Model):
    """One arm group against another on the same holdout (usually the baseline, GRPO)."""

    arm: str = Field(default="", description="The group compared (a).")
    baseline: str = Field(description="The group it is compared against (b).")
    mean_a: float | None = Field(description="Mean per-task reward of this group.")
    mean_b: float | None = Field(description="Mean per-task reward of the other group.")
    delta: float | None = Field(description="mean_a − mean_b (paired: mean of differences).")
    ci95: tuple[float, float] | None = Field(description="Percentile bootstrap 95% CI.")
    p_value: float | None = Field(description="Sign-flip (or unpaired) permutation p-value.")
    p_floor: float | None = Field(default=None, description="The smallest p the test can give.")
    p_text: str | None = Field(default=None, description="p as read: at the floor, '<= 2/(N+1)'.")
    permutations: int = Field(default=0, description="Permutations behind p (exact: all).")
    permutation_exact: bool = Field(default=False, description="All permutations enumerated.")
    n_tasks: int = Field(description="Tasks paired (unpaired: the smaller sample).")
    paired: bool = Field(description="Paired by task (false: fewer than min_pairs shared tasks).")
    draws: int = Field(description="Bootstrap draws.")
    seed: int = Field(description="Seed of the bootstrap and permutation draws.")
    noise_band: float | None = Field(
        description="t(df)·run_std·√(1/n_a+1/n_b) from repeated runs; null without repeats.")
    within_noise: bool | None = Field(description="|delta| <= noise_band; null without repeats.")
    statistical_verdict: Literal["better", "worse", "within noise", "insufficient data"] = Field(
        default="insufficient data", description="What the statistics alone say.")
    verdict: Verdict = Field(description="The statistical verdict, unless a run collapsed.")
    verdict_reason: str = Field(default="", description="Which part of the one verdict rule "
                                "(stats.verdict_rule) gave this verdict, with the CI, p and band.")
    collapsed: list[str] = Field(default_factory=list, description="Runs of either group that collapsed.")
    budget_ratio: dict[str, float] = Field(default_factory=dict,
                                           description="a / b per budget quantity both know.")
    warnings: list[str] = Field(default_factory=list, description="Budget gaps, dropped tasks, "
                                "an unpaired fallback.")


class ArmResult(_Model):
    """One run of one arm."""

    name: str = Field(description="The run: the arm (spec file stem), 'arm@k' for repeat k.")
    group: str = Field(description="Repeats of one setting share a group (name before '@').")
    method: str = Field(description="opd, opsd, grpo (or a later method's type).")
    state: Literal["planned", "pending", "done", "failed"] = Field(description="Its launch state.")
    attempts: int = Field(description="Times it was launched.")
    seed: int | None = Field(default=None, description="The run seed (repeats differ by it).")
    error: str | None = Field(default=None, description="Why it failed.")
    backend: str | None = Field(default=None, description="local or modal.")
    returncode: int | None = Field(default=None, description="Exit status of its process.")
    seconds: float | None = Field(default=None, description="Wall seconds, evaluation included.")
    image: str | None = Field(default=None, description="Container image or local interpreter.")
    gpu: str | None = Field(default=None, description="GPU type and count (null offline).")
    config: ConfigInfo = Field(description="The compiled config as launched and its report.")
    series: dict[str, list[Point]] = Field(
        description="Per-step [step, value]: eval_reward, train_reward, teacher_kl, train_loss, "
        "entropy where present; null where the run logged NaN or infinity.")
    per_task: dict[str, float] = Field(description="Final holdout reward per task.")
    mean_task_reward: float | None = Field(description="Mean of per_task.")
    final_eval_reward: float | None = Field(description="Last eval_reward point.")
    budget: ArmBudget | None = Field(default=None, description="What the run spent.")
    health: list[Health] = Field(default_factory=list, description="Collapse/instability findings.")
    delta: Delta | None = Field(default=None, description="This arm's group vs the baseline.")


class GroupNoise(_Model):
    """The spread of one arm's repeated runs."""

    runs: list[str] = Field(description="Finished runs of the group.")
    run_means: list[float] = Field(description="Each run's mean per-task reward.")
    run_std: float | None = Field(description="Sample std of run_means; null for one run.")


class StatsInfo(_Model):
    """How every comparison was computed."""

    bootstrap_draws: int = Field(description="Percentile bootstrap resamples per CI.")
    permutations: int = Field(description="Random permutations per test (fewer when exact).")
    seed: int = Field(description="Seed of every resampling.")
    confidence: float = Field(default=0.95, description="Level of the CIs.")
    alpha: float = Field(default=0.05, description="better/worse needs p below this.")
    min_pairs: int = Field(description="Fewer shared tasks: an unpaired comparison.")
    noise_band: str = Field(description="Whether a noise band exists and from how many runs.")
    verdict_rule: str = Field(default="", description="The one rule that decides every verdict.")


class BudgetInfo(_Model):
    """Whether the arms were set to spend the same, and where they do not."""

    matched: str | None = Field(default=None, description="--budget the arms were set to, e.g. rollouts=640.")
    warnings: list[str] = Field(default_factory=list, description="Budgets differing more than 2x.")


class Substitution(_Model):
    """A spec value the recipe replaced to run it where it ran (e.g. tiny models on a CPU)."""

    arm: str = Field(description="The arm it applies to.")
    field: str = Field(description="The spec field (dotted).")
    spec: Any = Field(description="The value in the spec file.")
    run: Any = Field(description="The value the arm ran with (null: dropped).")
    reason: str = Field(description="Why.")


class Results(_Model):
    """Paired arms on one holdout: configs, per-step series, budgets and comparisons."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"$id": SCHEMA_ID})

    schema_version: Literal[2] = Field(default=2, description="2: comparisons, budgets, health.")
    tag: str = Field(description="The run tag (names the runs and the folder).")
    student: Names = Field(default=None, description="The student model (one, or a list if arms differ).")
    teacher: Names = Field(default=None, description="Teacher model(s) of the arms that have one.")
    taskset: Names = Field(default=None, description="The taskset id.")
    holdout: Names = Field(default=None, description="What every arm is scored on.")
    metric: str | None = Field(default=None, description="What eval_reward and per_task measure.")
    steps: int | list[int] | str | list[str] | None = Field(
        default=None, description="Steps per arm (a list when budgets set them apart).")
    models: str | None = Field(default=None, description="Set when the runs used stand-in models, "
                               "e.g. tiny random ones: then the numbers test the pipeline only.")
    versions: dict[str, str] = Field(default_factory=dict, description="Library versions/commits.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Other run metadata.")
    baseline: str | None = Field(description="The group most comparisons are against (GRPO).")
    arms: dict[str, ArmResult] = Field(description="Every run, by name.")
    noise: dict[str, GroupNoise] = Field(description="Per group: its runs' spread.")
    comparisons: list[Delta] = Field(default_factory=list, description="Every pair compared.")
    vs_grpo: dict[str, Delta] = Field(description="The comparisons against the baseline, by arm.")
    stats: StatsInfo | None = Field(default=None, description="How the comparisons were computed.")
    budget: BudgetInfo = Field(default_factory=BudgetInfo, description="Budget matching and gaps.")
    substitutions: list[Substitution] = Field(
        default_factory=list, description="Spec values a recipe replaced (tiny models offline).")
    warnings: list[str] = Field(default_factory=list, description="Every warning, one line each.")
    scored: dict[str, Any] = Field(
        default_factory=dict, description="The holdout as scored: `planned` tasks (from the "
        "holdout text), `per_arm` tasks each finished arm really scored, `paired`: whether every "
        "comparison paired its arms by task (null: no comparison).")
    partial: dict[str, Any] | None = Field(
        default=None, description="Set only by `--collect --partial`: the planned arms left out "
        "(`missing`) and their states; null: every planned arm finished or failed.")

