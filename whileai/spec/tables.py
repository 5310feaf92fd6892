"""The run spec's tables besides the method (whileai.spec.methods): evaluation, checkpoints, the W&B
monitor, a two-stage run's second stage and a mixture's extra training sources. whileai.spec.run
assembles them into RunSpec and re-exports them; every field is described once, here, with its
default's source.
"""


import re
from typing import Any

from pydantic import Field, field_validator

from whileai.catalogs import paths
from whileai.spec import values
from whileai.spec.base import _Spec, src
from whileai.spec.methods import Method

_TASKSET = re.compile(r"(?:[a-z0-9][a-z0-9_.\-]*/)?[a-z0-9][a-z0-9_.\-]*(?:@[A-Za-z0-9_.\-]+)?")
MAX_STEPS = 10_000_000  # sane upper bounds: far beyond any run, well inside every target's int
MAX_GPUS = 4096
MAX_NODES = 512
PATH_LEN = 4096


_ROLE = r"[A-Za-z_][A-Za-z0-9_]*"  # compiled on first use (re's cache)
_ARGS = (
    "Written verbatim as the source's env.taskset table (prime-rl); checked against the pinned "
    "taskset catalogue, with a did-you-mean, where the taskset is known."
)


RATIO = ("Sampling weight: prime-rl draws each task from a training source with probability "
         "its ratio over the sum of all sources' ratios (the run's own taskset, source 0, "
         "included), e.g. 1 and 3: 25% and 75% of the tasks, each a group of the source's samples.")
RATIO_SOURCE = "prime-rl 559b447 EnvConfig.ratio (configs/orchestrator.py), default 1.0"
MAX_RATIO = 1e6
REWARD_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$"  # 'module.function'


def leaves(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = []
    for k, v in table.items():
        out += leaves(v, (*prefix, k)) if isinstance(v, dict) and v else [((*prefix, k), v)]
    return out


def check_roles(v: list[str] | None) -> list[str] | None:
    if v is not None and (any(not re.fullmatch(_ROLE, r) for r in v) or len(set(v)) < len(v)):
        raise ValueError("distinct role names such as 'agent' or 'player0' (letters, digits, _)")
    return v


def _taskset_id(v: str) -> str:
    if not _TASKSET.fullmatch(v):
        raise ValueError(
            "expected a taskset id such as 'reverse-text' or 'owner/name@version' "
            "(lowercase letters, digits, '-', '_', '.')"
        )
    return v


class Eval(_Spec):
    """Evaluation on the holdout during training."""

    enabled: bool = src(
        "Evaluate during training. false: no eval section is written at all (prime-rl refuses an "
        "eval table without a source).", "whileai: evaluation on by default", default=True,
    )
    interval: int | None = src(
        "Evaluate every N steps. Unset: about a quarter of the steps, a divisor of them so the "
        "final step is evaluated (e.g. 25 of 100, 10 of 50).",
        "whileai", default=None, ge=1, le=MAX_STEPS,
    )
    examples: int = src(
        "Holdout examples per evaluation; -1 = the whole holdout.",
        "prime-rl debug configs (128)", default=128, ge=-1, le=MAX_STEPS,
    )
    taskset: str | None = src(
        "Evaluate on another taskset (a different holdout), e.g. 'gsm8k'. Unset: the run's taskset.",
        "", default=None, max_length=256,
    )
    taskset_args: dict[str, Any] = src(
        "Arguments of the eval source's taskset, e.g. {split = \"test\"}. With the run's own "
        "taskset they are laid over taskset_args; with eval.taskset they are its only "
        "arguments. " + _ARGS, "", default_factory=dict,
    )

    @field_validator("taskset")
    @classmethod
    def _taskset(cls, v: str | None) -> str | None:
        return None if v is None else _taskset_id(v)


class Checkpoint(_Spec):
    """Resumable checkpoints of the training state."""

    enabled: bool = src(
        "Write checkpoints. false: none (prime-rl: no [ckpt]; TRL: save_strategy 'no'); the "
        "trained weights are still written at the end.",
        "whileai: one checkpoint at the end of training", default=True,
    )
    interval: int | None = src("Checkpoint every N steps. Unset: only at the end of training.",
                               "prime-rl ckpt.interval default (None)", default=None, ge=1,
                               le=MAX_STEPS)
    keep_last: int | None = src("Keep only the N most recent checkpoints. Unset: keep every one.",
                                "prime-rl ckpt.keep_last default (None)", default=None, ge=1,
                                le=MAX_STEPS)


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


class Inspect(_Spec):
    """What the run writes for `whileai inspect --run`; omit the table for nothing extra."""

    token_export: bool = src(
        "Write every trained sequence's per-token numbers (token ids, loss mask, advantages, "
        "trainer and inference log-probs, entropy, mismatch KL, trust-region masks) to "
        "<run dir>/token_exports/step_<n>/rank_<r>.jsonl, for `whileai inspect --run`. prime-rl "
        "only; the report gives the disk it takes (about 190 bytes per token).",
        "prime-rl trainer.enable_token_export default false", default=False,
    )


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


class OnTaskset(_Spec):
    """A table that names a taskset and, for an unknown one, its roles (the run, a source)."""

    @field_validator("taskset", check_fields=False)
    @classmethod
    def _taskset(cls, v: str) -> str:
        return _taskset_id(v)

    @field_validator("roles", check_fields=False)
    @classmethod
    def _roles(cls, v: list[str] | None) -> list[str] | None:
        return check_roles(v)


class Source(OnTaskset):
    """An extra training source of a mixture: its own taskset, arguments, sampling weight and
    method. The run's own taskset, taskset_args, roles, ratio and method are source 0."""

    taskset: str = src("This source's taskset id, e.g. 'gsm8k' or 'owner/name@version'.", "",
                       max_length=256)
    taskset_args: dict[str, Any] = src("Arguments of this source's taskset (its env.taskset table), "
                                       "e.g. {split = \"train\"}. " + _ARGS, "", default_factory=dict)
    roles: list[str] | None = src(
        "Agent roles of this source's taskset when the pinned catalogue does not know it (as the "
        "run's roles).", "verifiers' single-agent env: ['agent']", default=None, min_length=1,
        max_length=16,
    )
    ratio: float = src(RATIO, RATIO_SOURCE, default=1.0, gt=0.0, le=MAX_RATIO)
    method: Method | None = Field(
        default=None, description="This source's method: a table with type = opd | opsd | grpo | "
        "sft (e.g. OPD here, GRPO on the run's taskset). Unset: the run's method, written into the "
        "source explicitly. Its samples, temperature and max_tokens are this source's; its "
        "learning_rate is not read: one optimizer trains every source (the run's method's).",
    )
    name: str | None = src(
        "The source's name in prime-rl's logs, metrics and buffer; unique among the training "
        "sources ('agg' is reserved). Unset: its taskset id, or '<taskset>-<method>' where "
        "sources share a taskset.", "prime-rl EnvConfig.name default: the taskset id",
        default=None, min_length=1, max_length=128,
    )
    data: str | None = src(
        "This source's own JSONL file of tasks, as the run's data (one object per line with a "
        "'prompt' and the fields the method reads; rows with \"split\": \"test\" are its "
        "holdout): for targets that train from files (verl); prime-rl trains on taskset packages "
        "and refuses it. Unset: the source's taskset's built-in data; taskset is then a label.",
        "whileai: as the run's data", default=None, min_length=1, max_length=PATH_LEN,
    )
    reward: str | None = src(
        "This source's reward as an importable 'module.function' (TRL's reward_funcs signature), "
        "as the run's reward; prime-rl scores with the taskset's rubric and refuses it. Unset: the "
        "source's taskset's own reward.",
        "whileai: as the run's reward", default=None, max_length=512, pattern=REWARD_PATTERN,
    )
    eval: bool = src(
        "Evaluate on this source's taskset too (its held-out split where it has one), as its own "
        "eval source. Not read when eval.taskset names the one eval taskset or eval is off.",
        "whileai: every training taskset is evaluated", default=True,
    )
