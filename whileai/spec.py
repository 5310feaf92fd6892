"""The run spec: one method (whileai.methods) on a taskset for a student model, optionally
followed by a second stage (`then`) whose student is the first stage's final weights.

Every field is described once, here; `whileai methods`, the JSON schemas and the docs read
these descriptions, and `source` names where each default comes from.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from whileai import paths, values
from whileai.errors import SpecError
from whileai.methods import (  # noqa: F401  (re-exported: the public spec names)
    GRPO,
    METHODS,
    OPD,
    OPSD,
    SFT,
    Divergence,
    Endpoint,
    Method,
    _Spec,
    anchor_rate,
    parse_endpoint,
    src,
    validate_raw,
)

_TASKSET = re.compile(r"(?:[a-z0-9][a-z0-9_.\-]*/)?[a-z0-9][a-z0-9_.\-]*(?:@[A-Za-z0-9_.\-]+)?")
MAX_STEPS = 10_000_000  # sane upper bounds: far beyond any run, well inside every target's int
MAX_GPUS = 4096
PATH_LEN = 4096


class Eval(_Spec):
    """Evaluation on the holdout during training."""

    interval: int | None = src(
        "Evaluate every N steps. Unset: a quarter of the steps (four evaluations a run).",
        "whileai", default=None, ge=1, le=MAX_STEPS,
    )
    examples: int = src(
        "Holdout examples per evaluation; -1 = the whole holdout.",
        "prime-rl debug configs (128)", default=128, ge=-1, le=MAX_STEPS,
    )


class Monitor(_Spec):
    """Weights & Biases logging; omit the table for none."""

    project: str = src("W&B project (W&B allows 128 characters).", "", min_length=1, max_length=128)
    entity: str | None = src("W&B entity (team or user).", "", default=None, max_length=128)
    name: str | None = src("Run name; unset: the method and taskset.", "", default=None,
                           max_length=256)
    group: str | None = src("Run group (set one per paired comparison).", "", default=None,
                            max_length=128)
    tags: list[str] = src("Run tags (W&B allows 64 characters each).", "", default_factory=list,
                          max_length=256)

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        if any(not 0 < len(t) <= 64 for t in v):
            raise ValueError("each tag 1 to 64 characters")
        return v


def flatten_overrides(v: Any) -> Any:
    """`[overrides] trainer.optim.lr = 1e-5` is a nested table in TOML: flatten it to canonical
    dotted keys (a.source[0].b), refusing malformed keys and secret values."""
    if not isinstance(v, dict):
        return v
    flat = paths.flatten(v)
    for key, value in flat.items():
        values.check_override(paths.parse(key), key, value)
    return flat


class Stage(_Spec):
    """The second stage of a two-stage run: its student is the first stage's final weights.
    Every run field not named here (taskset, gpus, seed, eval, monitor, output_dir, data, ...)
    is the first stage's."""

    method: Method = Field(description="The second stage's method: a table with type = opd | opsd | "
                           "grpo | sft (an SFT cold start is followed by opd).")
    steps: int | None = src("Optimizer steps of the second stage. Unset: the first stage's.", "",
                            default=None, ge=1, le=MAX_STEPS)
    prompts: int | None = src("Prompts per step of the second stage. Unset: the first stage's.", "",
                              default=None, ge=1, le=1 << 16)
    lora: bool | None = src("Train LoRA adapters in the second stage. Unset: as the first stage "
                            "(full weights).", "", default=None)
    lora_rank: int | None = src("LoRA rank of the second stage. Unset: the first stage's.", "",
                                default=None, ge=1, le=4096)
    overrides: dict[str, Any] = src(
        "Target-specific settings of the second stage only, as dotted keys (the spec's own "
        "overrides and --set apply to the first stage).", "", default_factory=dict,
    )

    @field_validator("overrides", mode="before")
    @classmethod
    def _flatten(cls, v: Any) -> Any:
        return flatten_overrides(v)


class RunSpec(_Spec):
    """One training run: a method on a taskset for a student model."""

    schema_: str | None = Field(
        default=None, alias="$schema", description="Path or URL of this file's JSON Schema (editors).",
        max_length=PATH_LEN,
        json_schema_extra={"source": ""},
    )
    taskset: str = src(
        "The taskset (environment) id, e.g. 'reverse-text', optionally 'owner/name@version'.", "",
        max_length=256,
    )
    model: str = src("The student: a Hugging Face model id or local path.", "", min_length=1,
                     max_length=PATH_LEN)
    method: Method = Field(description="The training method: a table with type = opd | opsd | grpo "
                           "| sft.")
    steps: int = src("Optimizer steps.", "prime-rl/anchor default 100", default=100, ge=1,
                     le=MAX_STEPS)
    prompts: int = src(
        "Prompts per step; rollouts per step = prompts x samples.",
        "Lu 2025; tinker-cookbook (64 for small runs)", default=64, ge=1, le=1 << 16,
    )
    gpus: int = src(
        "GPUs for the run (inference + trainer; an OPD teacher is served separately).",
        "prime-rl default layout: 2", default=2, ge=2, le=MAX_GPUS,
    )
    inference_gpus: int | None = src(
        "GPUs given to inference; the rest train. Unset: half, rounded down.",
        "prime-rl deployment defaults (1 + 1)", default=None, ge=1, le=MAX_GPUS,
    )
    lora: bool = src("Train LoRA adapters (true) or full weights (false).", "anchor default", default=True)
    lora_rank: int = src(
        "LoRA rank when lora is true.", "Lu 2025: rank 32 trails full FT by ~6% after OPD",
        default=32, ge=1, le=4096,
    )
    seed: int = src("Run seed (numpy, which TRL seeds too, takes at most 2**32 - 1).", "whileai",
                    default=0, ge=0, le=2**32 - 1)
    prompt_tokens: int = src(
        "Token budget for a prompt (sequence length = prompt_tokens + max_tokens).",
        "whileai", default=2048, ge=1, le=1 << 20,
    )
    max_off_policy_steps: int = src(
        "How many steps behind the trainer a rollout may be (asynchrony).",
        "prime-rl orchestrator default 8", default=8, ge=0, le=1024,
    )
    eval: Eval = src("Evaluation on the holdout.", "", default_factory=Eval)
    monitor: Monitor | None = src("Weights & Biases logging; omit for none.", "", default=None)
    output_dir: str = src("Where the run writes checkpoints and logs.", "prime-rl default",
                          default="outputs", min_length=1, max_length=PATH_LEN)
    data: str | None = src(
        "A local JSONL file of tasks for backends that train from files (TRL): one object per "
        "line with a 'prompt' (text or chat messages) and the fields the method reads (e.g. "
        "OPSD's privileged key); rows with \"split\": \"test\" are the holdout (default: the "
        "last tenth). Unset: the taskset's built-in data.",
        "", default=None, min_length=1, max_length=PATH_LEN,
    )
    reward: str | None = src(
        "GRPO's reward as an importable 'module.function' (TRL's reward_funcs signature); "
        "needed for GRPO on your own data. Unset: the taskset's own reward.",
        "", default=None, max_length=512, pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$",
    )
    overrides: dict[str, Any] = src(
        "Target-specific settings as dotted keys, checked against the target's pinned schema.",
        "", default_factory=dict,
    )
    then: Stage | None = src(
        "A second stage trained from this one's final weights (full weights: lora must be "
        "false), e.g. an SFT cold start, then OPD. whileai writes both stages, their order and "
        "the command that hands the weights on.",
        "Li 2026 (arXiv:2604.13016) §5.1: a student that cannot produce the teacher's tokens "
        "needs an SFT cold start before OPD", default=None,
    )

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True,
                              allow_inf_nan=False)
    _origin: str | None = PrivateAttr(default=None)  # the spec file's folder, when read from one

    @field_validator("overrides", mode="before")
    @classmethod
    def _flatten(cls, v: Any) -> Any:
        return flatten_overrides(v)

    @field_validator("taskset")
    @classmethod
    def _taskset(cls, v: str) -> str:
        if not _TASKSET.fullmatch(v):
            raise ValueError(
                "expected a taskset id such as 'reverse-text' or 'owner/name@version' "
                "(lowercase letters, digits, '-', '_', '.')"
            )
        return v

    @model_validator(mode="after")
    def _split(self) -> RunSpec:
        if self.inference_gpus is not None and self.inference_gpus >= self.gpus:
            raise ValueError(
                f"inference_gpus must leave at least one of the {self.gpus} GPUs for the trainer"
            )
        if self.then is not None and self.lora:
            raise SpecError("lora", True, "false when a second stage (then) follows: its student "
                            "is this stage's final full weights (a LoRA adapter would need merging "
                            "into the base first)", hint="set lora = false")
        return self

    @property
    def infer_gpus(self) -> int:
        return self.inference_gpus if self.inference_gpus is not None else max(1, self.gpus // 2)

    @property
    def train_gpus(self) -> int:
        return self.gpus - self.infer_gpus

    @property
    def rollouts(self) -> int:
        return self.prompts * self.method.samples

    @property
    def eval_interval(self) -> int:
        return self.eval.interval or max(1, self.steps // 4)

    @property
    def learning_rate(self) -> float:
        return self.method.learning_rate or default_lr(self.method.type, self.lora)


def default_lr(method: str, lora: bool) -> float:
    """The researched default learning rate (see each method's learning_rate source)."""
    table = {"opd": (1e-4, 1e-6), "opsd": (5e-6, 5e-6), "grpo": (5e-5, 3e-6), "sft": (1e-4, 3e-6)}
    return table[method][0 if lora else 1]
