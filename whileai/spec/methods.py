"""The method specs: OPD, OPSD, GRPO and SFT (one discriminated union on `type`).

Every field is described once, here; `whileai methods`, the JSON schemas and the docs read
these descriptions, and `source` names where each default comes from. The run spec that
wraps a method is in whileai.spec.run.
"""


import re
import string
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import BaseModel, Field, field_validator

from whileai.spec.base import _Spec, src, validate_raw  # noqa: F401  (validate_raw: re-exported)
from whileai.spec.endpoint import Endpoint, parse_endpoint  # noqa: F401  (re-exported)

Divergence = Literal["reverse_kl", "forward_kl", "jsd"]
# every pattern is matched in full (re.fullmatch): a trailing newline is not a match; each is
# compiled on first use (re's own cache), so a run that never meets one never compiles it
_KEY = r"[A-Za-z_][A-Za-z0-9_.\-]*"
MAX_TOKENS = 1 << 20  # no served model reads more than a million tokens of context
MAX_SAMPLES = 1024


class _Method(_Spec):
    """What every method is, as class traits: the targets, cost, budgets and rules read these
    instead of branching on `type`.

    SAMPLER  who samples the training completions: 'student' (on-policy) or 'teacher' (SFT)
    SCORER   who scores every sampled token besides a reward: 'teacher' (OPD), 'self' (OPSD's
             privileged view of the student) or None
    LOSS     'policy_gradient' (a reward), 'distillation' (a per-token divergence to a teacher;
             each target names its estimator) or 'cross_entropy' (imitating the teacher's text)
    LR       the researched default learning rate: (LoRA, full weights), as each
             `learning_rate` source says
    """

    SAMPLER: ClassVar[Literal["student", "teacher"]] = "student"
    SCORER: ClassVar[Literal["teacher", "self"] | None] = None
    LOSS: ClassVar[Literal["policy_gradient", "distillation", "cross_entropy"]] = "policy_gradient"
    LR: ClassVar[tuple[float, float]]

    @property
    def frozen_teacher(self) -> Endpoint | None:
        """The served teacher (OPD scores with it, SFT samples from it); None for OPSD (its
        teacher is the policy) and GRPO."""
        return None

    @property
    def teacher_role(self) -> Literal["teacher", "self", "sampler"] | None:
        """Who works on the sampled tokens besides the student: 'teacher' or 'self' (it scores
        them), 'sampler' (off-policy: the teacher samples every one), None (a reward)."""
        return "sampler" if self.SAMPLER == "teacher" else self.SCORER

    @property
    def distills(self) -> bool:
        """A per-token divergence to a teacher (OPD, OPSD)."""
        return self.LOSS == "distillation"

    @property
    def rewarded(self) -> bool:
        """It trains on the taskset's reward (GRPO)."""
        return self.LOSS == "policy_gradient"

    @property
    def off_policy(self) -> bool:
        """The teacher samples every training completion (SFT): the student never samples."""
        return self.SAMPLER == "teacher"

    def default_lr(self, lora: bool) -> float:
        return self.LR[0 if lora else 1]


class _Served(_Method):
    """A method whose frozen teacher is served at an endpoint (OPD scores with it, SFT samples
    from it); the teacher may be given first, `OPD(teacher)`. Each method declares its own
    `teacher` field, with its own description."""

    def __init__(self, teacher: Any = None, /, **data: Any) -> None:
        if teacher is not None:
            data["teacher"] = teacher
        super().__init__(**data)

    @property
    def frozen_teacher(self) -> Endpoint:
        return self.teacher  # type: ignore[attr-defined, no-any-return]


_T = "Sampling temperature of the student's rollouts; 1.0 keeps the estimator on-policy."
_T_SRC = "all frameworks (docs/research.md, defaults: student temperature)"
_LR = (
    "Learning rate. Unset: the method's researched default for LoRA or full weights, "
    "written explicitly into the target file."
)


class OPD(_Served):
    """On-policy distillation: the student samples, a frozen teacher scores every token."""

    SCORER = "teacher"
    LOSS = "distillation"
    LR = (1e-4, 1e-6)

    type: Literal["opd"] = Field(default="opd", description="Selects this method.")
    teacher: Endpoint = src("The frozen teacher, served at an endpoint.", "")
    divergence: Divergence = src(
        "Per-token divergence between student and teacher.",
        "Lu 2025 (Thinking Machines); Agarwal 2024 (arXiv:2306.13649)",
        default="reverse_kl",
    )
    top_k: Annotated[int, Field(ge=1, le=MAX_TOKENS)] | Literal["full"] | None = src(
        "Restrict the teacher's support to its top-k tokens (renormalised); 'full' (or None) = the "
        "full vocabulary.",
        "Fu 2026 (arXiv:2603.25562, verl default 32); Li 2026 (arXiv:2604.13016) §6.3",
        default=32,
    )
    samples: int = src(
        "Completions sampled per prompt.", "Lu 2025; tinker-cookbook group_size 4", default=4, ge=1,
        le=MAX_SAMPLES,
    )
    temperature: float = src(_T, _T_SRC, default=1.0, gt=0.0, le=2.0)
    max_tokens: int = src(
        "Cap on completion tokens per rollout.",
        "Li 2026 (arXiv:2604.13016) §6.1: 8k cap, longer runs collapse late",
        default=8192,
        ge=1, le=MAX_TOKENS,
    )
    learning_rate: float | None = src(
        _LR, "LoRA 1e-4 (tinker-cookbook); full weights 1e-6 (TRL DistillationConfig)",
        default=None, gt=0.0, le=1.0,
    )
    task_reward_kl_coef: float | None = src(
        "Train on the taskset's reward beside the teacher: the loss is the reward's policy-gradient "
        "loss plus this coefficient times the distillation loss (the teacher's KL as a penalty on "
        "the reward). Unset: the teacher alone, no task reward. verl only (distillation_loss."
        "use_task_rewards with distillation_loss_coef); prime-rl's and TRL's OPD train on the "
        "teacher alone and refuse it.",
        "verl 0.9.1 trainer/distillation/losses.py:210-224; tinker-cookbook kl_penalty_coef; slime "
        "--opd-kl-coef", default=None, gt=0.0, le=1e6,
    )

    @field_validator("top_k")
    @classmethod
    def _full(cls, v: int | str | None) -> int | None:
        return None if v == "full" else v  # type: ignore[return-value]


class OPSD(_Method):
    """On-policy self-distillation: the model, shown privileged information, is the teacher."""

    SCORER = "self"
    LOSS = "distillation"
    LR = (5e-6, 5e-6)

    type: Literal["opsd"] = Field(default="opsd", description="Selects this method.")
    privileged: str = src(
        "Key of the privileged information in each task (its info, then its top-level fields), "
        "e.g. 'answer'.",
        "Zhao 2026 (arXiv:2601.18734): the reference answer as the hint",
        default="answer", max_length=256,
    )
    divergence: Divergence = src(
        "Per-token divergence between student and self-teacher.",
        "Zhao 2026 (arXiv:2601.18734); Hübotter 2026 (arXiv:2601.20802)",
        default="reverse_kl",
    )
    anchor: str = src(
        "What the self-teacher's weights are: 'ema:<rate>' (moving average of the student), "
        "'initial' (frozen starting weights) or 'live' (the current student).",
        "Shenfeld 2026 (arXiv:2601.19897); Hübotter 2026 (arXiv:2601.20802): EMA 0.01",
        default="ema:0.01",
    )
    samples: int = src(
        "Completions sampled per prompt.", "Zhao 2026 (arXiv:2601.18734): one rollout per prompt",
        default=1, ge=1, le=MAX_SAMPLES,
    )
    temperature: float = src(_T, _T_SRC, default=1.0, gt=0.0, le=2.0)
    max_tokens: int = src(
        "Cap on completion tokens per rollout.", "whileai: half the OPD cap; short hints",
        default=4096, ge=1, le=MAX_TOKENS,
    )
    template: str = src(
        "How the privileged information is shown to the self-teacher: a str.format template "
        "whose one field is {demonstration} (write literal braces as {{ and }}).",
        "whileai",
        default=(
            "A reference solution for this task follows. Use it to judge each step of your "
            "own reply.\n<demonstration>\n{demonstration}\n</demonstration>"
        ), max_length=20000,
    )
    learning_rate: float | None = src(
        _LR, "docs/research.md, defaults: OPSD 5e-6 (Zhao 2026)", default=None, gt=0.0, le=1.0
    )

    @field_validator("privileged")
    @classmethod
    def _key(cls, v: str) -> str:
        if not re.fullmatch(_KEY, v):
            raise ValueError("expected a field name such as 'answer'")
        return v

    @field_validator("anchor")
    @classmethod
    def _anchor(cls, v: str) -> str:
        anchor_rate(v)
        return v

    @field_validator("template")
    @classmethod
    def _template(cls, v: str) -> str:
        try:
            fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(v)
                      if f is not None]
        except ValueError:
            raise ValueError("unbalanced brace: write a literal brace as {{ or }}") from None
        if any(f != "demonstration" for f, _, _ in fields):
            raise ValueError("{demonstration} is the only placeholder allowed; write a literal "
                             "brace as {{ or }}")
        if not fields:
            raise ValueError("the template must contain the placeholder {demonstration} "
                             "({{demonstration}} is literal text)")
        if any(spec or conv for _, spec, conv in fields):
            raise ValueError("write the placeholder as plain {demonstration}, with no "
                             "conversion or format spec")
        return v


def anchor_rate(anchor: str) -> float | None:
    """'ema:0.01' → 0.01; 'initial'/'live' → None; anything else raises ValueError."""
    if anchor in ("initial", "live"):
        return None
    m = re.fullmatch(r"ema:(\d*\.?\d+(?:[eE]-?\d+)?)", anchor)
    if m and 0.0 < float(m.group(1)) <= 1.0:
        return float(m.group(1))
    raise ValueError("expected 'ema:<rate>' with 0 < rate <= 1, 'initial' or 'live'")


class GRPO(_Method):
    """GRPO baseline: group-relative advantages from the taskset's reward."""

    LR = (5e-5, 3e-6)

    type: Literal["grpo"] = Field(default="grpo", description="Selects this method.")
    samples: int = src(
        "Completions per prompt (the group).", "TRL GRPOConfig num_generations 8",
        default=8, ge=2, le=MAX_SAMPLES,
    )
    temperature: float = src(_T, _T_SRC, default=1.0, gt=0.0, le=2.0)
    max_tokens: int = src(
        "Cap on completion tokens per rollout.", "whileai: matches the OPSD cap",
        default=4096, ge=1, le=MAX_TOKENS,
    )
    learning_rate: float | None = src(
        _LR, "LoRA 5e-5 (prime-rl ci-reverse-text-lora); full weights 3e-6 (prime-rl reverse-text)",
        default=None, gt=0.0, le=1.0,
    )


class SFT(_Served):
    """Off-policy distillation: a frozen teacher samples, the student imitates it (cross-entropy)."""

    SAMPLER = "teacher"
    LOSS = "cross_entropy"
    LR = (1e-4, 3e-6)

    type: Literal["sft"] = Field(default="sft", description="Selects this method.")
    teacher: Endpoint = src("The frozen teacher that writes the completions, served at an endpoint.",
                            "")
    samples: int = src(
        "Teacher completions sampled per prompt.",
        "prime-rl configs/debug/algo/sft_distill.toml (group_size 4); matches OPD's 4",
        default=4, ge=1, le=MAX_SAMPLES,
    )
    temperature: float = src(
        "Sampling temperature of the teacher's completions; 1.0 samples the teacher's own "
        "distribution.", "all frameworks' sampling default", default=1.0, gt=0.0, le=2.0,
    )
    max_tokens: int = src(
        "Cap on completion tokens per teacher completion (exposure bias grows with length).",
        "whileai: matches the GRPO/OPSD cap", default=4096, ge=1, le=MAX_TOKENS,
    )
    learning_rate: float | None = src(
        _LR, "LoRA 1e-4 (prime-rl sft_distill_lora.toml); full weights 3e-6 (prime-rl "
        "sft_distill.toml)", default=None, gt=0.0, le=1.0,
    )


Method = Annotated[Union[OPD, OPSD, GRPO, SFT], Field(discriminator="type")]
METHODS: dict[str, type[BaseModel]] = {"opd": OPD, "opsd": OPSD, "grpo": GRPO, "sft": SFT}
