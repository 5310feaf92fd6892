"""The shape of `whileai inspect --run`'s JSON; `schemas/inspect-run.schema.json` is generated
from it and docs/inspect-run-json.md lists every field.

Per-token quantities, all on trained tokens (loss_mask true) of prime-rl's token exports:

- `signal`: what the page colours and ranks by. Where a record carries the teacher's log-probs
  (`ref_logprobs`) it is the OPD/OPSD signal trainer_logprob − ref_logprob (log p_student −
  log p_teacher on the sampled token, a one-sample estimate of the per-token reverse KL; the
  same quantity as spec inspection's `signal`). The exporter at prime-rl 559b447 writes no
  ref_logprobs, so there the signal is the student's surprise −trainer_logprob (`nll`), and
  `signal_name` says which one a report holds.
- `advantage`: the exported advantage (GRPO: the sequence's reward minus its group mean on every
  token; 0 for OPD at the pin, which ships no advantage stream).
- `mismatch_kl`: r − log r − 1 with log r = trainer_logprob − inference_logprob, the trainer /
  inference disagreement (null when the exporter computed no ratio).
- `masked`: the trainer dropped the token from the policy-gradient term (DPPO trust region).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from whileai.tokenview.document import _InspectModel
from whileai.tokenview.teacherdocument import TeacherRun

SCHEMA_ID = "https://whileai.dev/schemas/inspect-run.schema.json"
SIGNALS = {
    "reverse_kl": "trainer_logprob − ref_logprob on the sampled token (log p_student − log p_teacher): "
                  "a one-sample estimate of the per-token reverse KL that OPD/OPSD train on.",
    "nll": "−trainer_logprob of the sampled token: the student's surprise. Shown because these "
           "exports carry no teacher log-probs (prime-rl 559b447 writes no ref_logprobs), so the "
           "teacher-minus-student signal cannot be computed from them.",
}


class StepStats(_InspectModel):
    """One step (or one env of a step): means over its trained tokens."""

    step: int = Field(description="Trainer step.")
    sequences: int = Field(description="Exported sequences (each with at least one trained token).")
    tokens: int = Field(description="Tokens of those sequences, prompt included.")
    trained_tokens: int = Field(description="Tokens with loss_mask true.")
    mean_signal: float | None = Field(description="Mean signal over trained tokens.")
    top1_share_signal: float | None = Field(
        description="Share of the positive signal mass held by the top 1% of trained tokens (at least "
        "one); null when that mass is zero.")
    mean_advantage: float | None = Field(description="Mean exported advantage over trained tokens.")
    mean_abs_advantage: float | None = Field(description="Mean |advantage| over trained tokens.")
    mean_entropy: float | None = Field(description="Mean trainer entropy (nats) over trained tokens.")
    mean_mismatch_kl: float | None = Field(
        description="Mean trainer/inference mismatch KL over trained tokens that have one (null: none).")
    top1_share_mismatch_kl: float | None = Field(
        description="Share of the mismatch-KL mass held by the top 1% of those tokens.")
    masked_fraction: float | None = Field(
        description="Fraction of trained tokens the trust region masked (is_masked; null where the "
        "exporter wrote none).")
    masked_high_fraction: float | None = Field(
        description="Fraction masked for a probability rise (is_masked_high).")
    masked_low_fraction: float | None = Field(
        description="Fraction masked for a probability fall (is_masked_low).")


class RunToken(_InspectModel):
    id: int = Field(description="Token id.")
    text: str = Field(description="The token decoded on its own (⟨id⟩ without a tokenizer).")
    trained: bool = Field(description="loss_mask: the token is trained on (false: prompt or env text).")
    signal: float | None = Field(description="The signal (see signal_name); null off the loss mask.")
    advantage: float | None = Field(description="Exported advantage.")
    entropy: float | None = Field(description="Trainer entropy (nats).")
    mismatch_kl: float | None = Field(description="Trainer/inference mismatch KL.")
    importance_ratio: float | None = Field(description="exp(trainer_logprob − inference_logprob).")
    trainer_logprob: float | None = Field(description="Trainer log-prob of the token.")
    inference_logprob: float | None = Field(description="Inference (vLLM) log-prob of the token.")
    masked: bool | None = Field(description="is_masked: dropped by the trust region.")


class Sequence(_InspectModel):
    rank: int = Field(description="Trainer rank that exported it.")
    index: int = Field(description="export_sequence_idx within that rank's file.")
    env: str | None = Field(description="env_name.")
    tokens: int = Field(description="Tokens in the exported sequence.")
    trained_tokens: int = Field(description="Trained tokens in it.")
    mean_signal: float | None = Field(description="Mean signal over its trained tokens.")
    context: str = Field(description="Its untrained prefix (the prompt), decoded, last 400 characters.")
    shown: list[RunToken] = Field(description="From the first trained token on (at most max_tokens_shown).")


class ShownStep(_InspectModel):
    step: int = Field(description="The step whose sequences are shown.")
    sequences_total: int = Field(description="Sequences in the step.")
    sequences: list[Sequence] = Field(description="The first sequences of the step, rank by rank.")


class Trend(_InspectModel):
    step: int = Field(description="Step.")
    mean_signal: float = Field(description="The token's mean signal in that step.")


class TokenTrend(_InspectModel):
    """A token id whose signal is among the highest in many steps."""

    id: int = Field(description="Token id.")
    text: str = Field(description="Decoded text (⟨id⟩ without a tokenizer).")
    steps_high: int = Field(description="Steps in which it ranked in the top 50 ids by mean signal "
                            "(among ids trained at least 3 times in the step).")
    steps_seen: int = Field(description="Steps in which it was trained at least 3 times (its ranked "
                            "steps; the counts below are over these).")
    count: int = Field(description="Trained occurrences in its ranked steps.")
    mean_signal: float = Field(description="Mean signal over those occurrences.")
    first: Trend = Field(description="Its first ranked step, and its mean signal there.")
    last: Trend = Field(description="Its last ranked step, and its mean signal there.")


class Reading(_InspectModel):
    """What was read and what was left out."""

    exports: str = Field(description="The token_exports folder read.")
    exporter: str = Field(description="The exporter whose layout this reader follows.")
    steps_found: int = Field(description="Step folders found.")
    steps_read: list[int] = Field(description="Steps read: STABLE, inside --steps.")
    steps_unstable: list[int] = Field(description="Steps left out: no STABLE marker yet (still being "
                                      "written, or the trainer stopped mid-step).")
    ranks: int = Field(description="Largest number of rank files in a step read.")
    bytes_read: int = Field(description="Bytes of the rank files read.")
    records: int = Field(description="Valid records (sequences) read.")
    torn_lines: int = Field(description="Lines cut off mid-record (skipped).")
    invalid_lines: int = Field(description="Lines that are not a record of schema_version 1 (skipped).")
    problem_examples: list[str] = Field(description="The first few skipped lines: file:line: why.")


class RunReport(_InspectModel):
    """`whileai inspect --run`: a prime-rl run's per-token statistics, step by step."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"$id": SCHEMA_ID})

    schema_version: Literal[1] = Field(default=1, description="Version of this JSON's shape.")
    whileai: str = Field(description="whileai version that wrote this.")
    run: str = Field(description="The run folder given (--run).")
    reading: Reading = Field(description="Files, steps and skipped lines.")
    signal_name: Literal["reverse_kl", "nll"] = Field(description="Which quantity `signal` is.")
    signal_definition: str = Field(description="The signal in one sentence.")
    tokenizer: str | None = Field(description="The tokenizer that decoded token text (null: ids only).")
    envs: list[str] = Field(description="env_name values seen, sorted.")
    steps: list[StepStats] = Field(description="Per step, over all envs.")
    by_env: dict[str, list[StepStats]] = Field(description="Per env, per step (only with several envs).")
    shown: ShownStep | None = Field(description="One step's sequences, token by token (null: no step read).")
    top_tokens: list[TokenTrend] = Field(description="Token ids whose signal stays high across steps, "
                                         "most steps first (up to 50).")
    timings: dict[str, float] = Field(description="Seconds: read (parse and statistics), total.")
    notes: list[str] = Field(default_factory=list, description="Caveats about this report.")
    teacher: TeacherRun | None = Field(default=None, description="The samples scored against a "
                                       "teacher (--teacher-endpoint, --local-teacher or the run's "
                                       "own); null without one.")


