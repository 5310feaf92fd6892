"""The shape of `whileai inspect`'s JSON; `schemas/inspect.schema.json` is generated from it.

Every field is described once, here: the schema, docs/inspect-json.md and the page's legend
read these descriptions. Two per-token quantities, never mixed:

- `signal`: the sampled-token log-ratio log p_sampler(x_t) − log p_other(x_t) on the sampled
  token x_t. For OPD and OPSD the sampler is the student, so this is log p_s(x_t) − log p_t(x_t):
  a one-sample estimate of the per-token reverse KL(p_s‖p_t), what prime-rl's opd/opsd loss uses
  (its advantage is the negative). It can be negative on a single token; its mean over tokens
  estimates the reverse KL.
- `full_kl`: Σ_v p_sampler(v) (log p_sampler(v) − log p_other(v)) over the whole vocabulary at
  that position, KL(p_s‖p_t) for OPD/OPSD, what TRL's DistillationTrainer (beta 1) uses; always
  ≥ 0. Needs both full distributions, so only when both models run locally (null otherwise: an
  OpenAI-compatible endpoint returns the top-k log-probs only).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from whileai.vocab.compare import TokenizerCheck

SCHEMA_ID = "https://whileai.dev/schemas/inspect.schema.json"
SIGNAL = ("log p_sampler(x_t) − log p_other(x_t) on the sampled token x_t (OPD/OPSD: log p_student − "
          "log p_teacher, a one-sample estimate of the per-token reverse KL; prime-rl's opd/opsd "
          "estimator). Log-probs at temperature 1, as vLLM's prompt log-probs and prime-rl's loss.")
FULL_KL = ("Σ_v p_sampler(v)·(log p_sampler(v) − log p_other(v)) over the full vocabulary at each "
           "position (OPD/OPSD: KL(p_student‖p_teacher), TRL DistillationTrainer's loss at beta 1). "
           "Local models only; null when either side is an endpoint (top-k log-probs only) or the "
           "vocabularies differ in size.")


class _InspectModel(BaseModel):
    """Every object of inspect's JSON, and of inspect --run's (whileai.tokenview.rundocument): no
    key beyond those named."""

    model_config = ConfigDict(extra="forbid")


class Alternative(_InspectModel):
    """One of the teacher's most likely tokens at a position."""

    id: int | None = Field(description="Token id (null: the endpoint's echo form names tokens by text).")
    text: str = Field(description="The token's text.")
    logprob: float = Field(description="The teacher's log-probability of it.")


class Token(_InspectModel):
    """One sampled completion token, scored under both models."""

    id: int = Field(description="Token id, as sampled.")
    text: str = Field(description="The token's text (decoded alone).")
    student_logprob: float = Field(description="log p_student(x_t) given the student's context.")
    teacher_logprob: float = Field(description="log p_teacher(x_t) given the teacher's context.")
    signal: float = Field(description=SIGNAL)
    full_kl: float | None = Field(description=FULL_KL)
    teacher_rank: int | None = Field(
        description="Rank of x_t under the teacher (1 = its most likely token); null when x_t is "
        "outside the top-k an endpoint returned.")
    teacher_top: list[Alternative] = Field(description="The teacher's top-k tokens at this position.")


class Stats(_InspectModel):
    """Statistics over a set of tokens (one completion, or all of them)."""

    tokens: int = Field(description="Tokens counted.")
    mean_signal: float | None = Field(description="Mean of signal: the reverse-KL estimate per token.")
    sum_signal: float = Field(description="Sum of signal (the sequence-level estimate).")
    top1_share_signal: float | None = Field(
        description="Share of the positive signal mass carried by the top 1% of tokens by signal "
        "(at least one token): sum of max(signal, 0) over them / over all tokens. Null when no "
        "token has a positive signal.")
    mean_full_kl: float | None = Field(description="Mean of full_kl (null: not available).")
    top1_share_full_kl: float | None = Field(
        description="Share of the total full_kl carried by the top 1% of tokens by full_kl (at "
        "least one token); null when not available or zero.")
    teacher_top_k_hit: float | None = Field(
        description="Share of tokens the teacher ranks within its top-k (k = settings.top_k): "
        "the overlap OPD raises (Li 2026, arXiv:2604.13016).")


class PositionBin(_InspectModel):
    """Completion positions [start, end): the signal by position in the completion."""

    start: int = Field(description="First position (0 = the first completion token).")
    end: int = Field(description="One past the last position.")
    tokens: int = Field(description="Tokens at these positions, over all completions.")
    mean_signal: float = Field(description="Mean signal of those tokens.")
    mean_full_kl: float | None = Field(description="Mean full_kl of those tokens (null: not available).")


class Place(_InspectModel):
    """A token's place: which completion, which position."""

    completion: int = Field(description="Index into completions.")
    position: int = Field(description="Token position in that completion.")


class TokenRow(_InspectModel):
    """One token id, aggregated over every place it was sampled."""

    id: int = Field(description="Token id.")
    text: str = Field(description="The token's text.")
    count: int = Field(description="Times it was sampled.")
    mean_signal: float = Field(description="Mean signal over those places.")
    sum_signal: float = Field(description="Total signal over those places.")
    max_signal: float = Field(description="Largest signal at one place.")
    mean_full_kl: float | None = Field(description="Mean full_kl (null: not available).")
    worst: Place = Field(description="Where its largest signal was.")


class Completion(_InspectModel):
    """One sampled completion and its scored tokens."""

    prompt: int = Field(description="Index into prompts.")
    sample: int = Field(description="Sample number for that prompt (0-based).")
    text: str = Field(description="The completion decoded.")
    finished: bool = Field(description="It ended with an end-of-sequence token (else max_tokens cut it).")
    tokens: list[Token] = Field(description="Its tokens, in order.")
    stats: Stats = Field(description="Statistics over its tokens.")


class Prompt(_InspectModel):
    """One task prompt and the two contexts scored."""

    index: int = Field(description="Index in this report.")
    row: int = Field(description="Row number in the task data's split.")
    prompt: str | list[dict[str, Any]] = Field(description="The task prompt: text or chat messages.")
    privileged: str | None = Field(description="The privileged text shown to the teacher (OPSD); "
                                   "null otherwise.")
    student_context: str = Field(description="The student's context, decoded (chat template applied).")
    teacher_context: str = Field(description="The teacher's context, decoded.")
    student_context_ids: list[int] = Field(description="Token ids the student's log-probs condition on.")
    teacher_context_ids: list[int] = Field(description="Token ids the teacher's log-probs condition on.")


class Side(_InspectModel):
    """How one model was run."""

    role: Literal["student", "teacher"] = Field(description="Which side this is.")
    kind: Literal["local", "endpoint"] = Field(description="A local model (transformers) or an "
                                                   "OpenAI-compatible endpoint.")
    model: str = Field(description="Local path or model id; for an endpoint, the served model name.")
    url: str | None = Field(description="The endpoint's base URL (null for local).")
    api_key_env: str | None = Field(description="Environment variable the API key was read from "
                                    "(the name only; null for local).")
    logprobs: str = Field(description="Where the log-probs come from: 'forward pass' (local), "
                          "'prompt_logprobs' or 'echo' (endpoint).")
    full_distribution: bool = Field(description="Whole-vocabulary distributions available.")


class Settings(_InspectModel):
    """What was sampled, and how."""

    prompts: int = Field(description="Prompts sampled from the task data.")
    samples: int = Field(description="Completions per prompt.")
    max_tokens: int = Field(description="Cap on completion tokens.")
    temperature: float = Field(description="Sampling temperature (the spec's method.temperature).")
    top_k: int = Field(description="Teacher alternatives kept per position.")
    seed: int = Field(description="Seed of the prompt choice and the sampling.")
    split: Literal["train", "holdout"] = Field(description="The split the prompts come from.")
    data: str = Field(description="Where the tasks come from (the spec's data file or built-in taskset).")


class Method(_InspectModel):
    """The spec's method, as inspect runs it (whileai.inspect.adapters)."""

    type: str = Field(description="The spec's method type.")
    sampler: Literal["student", "teacher"] = Field(description="Which model generated the completions.")
    teacher_context: str = Field(description="What the teacher conditions on.")


class Definitions(_InspectModel):
    """The two per-token quantities, defined; and whether the full-vocabulary one is here."""

    signal: str = Field(default=SIGNAL, description="What Token.signal is.")
    full_kl: str = Field(default=FULL_KL, description="What Token.full_kl is.")
    full_kl_available: bool = Field(description="Whether full_kl was computed in this report.")
    full_kl_note: str = Field(description="Why full_kl is or is not available here.")


class InspectReport(_InspectModel):
    """`whileai inspect`: every completion token scored under student and teacher."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"$id": SCHEMA_ID})

    schema_version: Literal[1] = Field(default=1, description="Version of this JSON's shape.")
    whileai: str = Field(description="whileai version that wrote this.")
    spec: str = Field(description="The spec file inspected.")
    taskset: str = Field(description="The spec's taskset.")
    method: Method = Field(description="Who sampled, what the teacher saw.")
    student: Side = Field(description="How the student was run.")
    teacher: Side = Field(description="How the teacher was run.")
    settings: Settings = Field(description="Prompts, samples, token cap, temperature, top-k, seed, "
                               "split, data.")
    definitions: Definitions = Field(description="What signal and full_kl are.")
    tokenizer_check: TokenizerCheck | None = Field(
        description="Teacher vs student tokenizers compared from local files (null: not both "
        "local, or one model for both).")
    tokenizer_note: str = Field(description="The tokenizer check in one sentence, or why it fell back.")
    overall: Stats = Field(description="Statistics over every completion token.")
    by_position: list[PositionBin] = Field(description="Signal by completion position.")
    top_tokens: list[TokenRow] = Field(description="Token ids by total signal, largest first (up to 50).")
    prompts: list[Prompt] = Field(description="The prompts drawn, with both contexts as ids.")
    completions: list[Completion] = Field(description="Every completion, prompt by prompt.")
    timings: dict[str, float] = Field(description="Seconds: load, generate, score, total.")
    notes: list[str] = Field(default_factory=list, description="Caveats about this report.")


