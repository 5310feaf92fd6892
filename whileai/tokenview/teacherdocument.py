"""The teacher's part of `whileai inspect --run`'s JSON (`RunReport.teacher`): the run's own
samples scored against a teacher, per step and per sample. The scored tokens themselves, one
sample at a time, are in the companion inspect-run-teacher.json: spec inspection's document
(whileai.tokenview.document.InspectReport), so the two views read alike.

Per token: signal = trainer_logprob (the exports' student log-prob) − the teacher's prompt
log-prob of the same id given the sample's own preceding ids, on trained tokens (loss_mask).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from whileai.tokenview.document import PositionBin, Side, Stats, _InspectModel

FILLER_NOTE = ("filler: a token whose text is whitespace or punctuation only, or one of the "
               "discourse words in whileai.tokenview.stats.FILLER_WORDS (wait, hmm, so, well, ...)")


class TeacherStep(_InspectModel):
    step: int = Field(description="Trainer step.")
    sequences: int = Field(description="Samples of the step scored against the teacher.")
    stats: Stats = Field(description="Statistics over their scored tokens.")
    filler_share_signal: float | None = Field(
        description="Share of the positive signal on filler tokens (null: no token text, or no "
        "positive signal).")


class TeacherSample(_InspectModel):
    step: int = Field(description="Trainer step.")
    rank: int = Field(description="Trainer rank that exported it.")
    index: int = Field(description="export_sequence_idx within that rank's file.")
    env: str | None = Field(description="env_name.")
    tokens: int = Field(description="Tokens of the sample, prompt included (all sent to the teacher).")
    picked_by: float | None = Field(description="The value it was picked by (see pick): mean "
                                    "student surprise or mean advantage over its trained tokens.")
    stats: Stats = Field(description="Statistics over its scored tokens.")
    shown: int | None = Field(description="Its index among inspect-run-teacher.json's completions "
                              "(null: not shown token by token).")


class TeacherRun(_InspectModel):
    """The run's samples scored against a teacher."""

    teacher: Side = Field(description="How the teacher was run.")
    route: str = Field(description="What was sent to score a sample.")
    pick: Literal["surprise", "advantage", "all"] = Field(
        description="Which samples of each step were scored: the per_step with the largest mean "
        "student surprise (−trainer_logprob), with the lowest mean advantage (GRPO: reward minus "
        "its group's mean; the exports carry no reward), or all.")
    per_step: int = Field(description="Samples scored per step (pick surprise or advantage).")
    top_k: int = Field(description="Teacher alternatives kept per token.")
    tokenizer_note: str = Field(description="The teacher's tokenizer against the run's, measured.")
    full_kl_note: str = Field(description="Why the full-vocabulary KL is or is not here.")
    overall: Stats = Field(description="Over every scored token.")
    filler_share_signal: float | None = Field(description="Share of the positive signal on filler "
                                              "tokens, over every scored token. " + FILLER_NOTE)
    by_position: list[PositionBin] = Field(description="Signal by position among a sample's trained "
                                           "tokens (0 = its first trained token).")
    steps: list[TeacherStep] = Field(description="Per step.")
    samples: list[TeacherSample] = Field(description="Every scored sample, in reading order.")
    page: str = Field(description="The file with the scored tokens of the samples with the largest "
                      "mean signal (spec inspection's page and JSON).")
    timings: dict[str, float] = Field(description="Seconds: load (teacher), score (requests or "
                                      "forward passes, and folding).")
