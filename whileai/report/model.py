"""The `--json` report as a pydantic model: the shape `Compiled.to_dict()` returns.

`schemas/report.schema.json` is generated from `Report`; a test validates every report the
tests produce against both this model and that schema, so the contract cannot drift from
`whileai.targets.compiled`. Every key is required (`out` may be null), as `to_dict()` always writes all.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from whileai.rules.base import Finding
from whileai.spec.run import RunSpec


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Read(_Row):
    """A spec field the target reads: where, and with which value."""

    field: str = Field(description="Spec field, method fields without the 'method.' prefix.")
    path: str = Field(description="Dotted key in the target file ('a.b[0].c' for list items).")
    value: Any = Field(description="The value written there (JSON; other types as their text).")
    note: str = Field(description="How the value was derived, or ''.")


class Ignore(_Row):
    """A spec field the target does not read, and why."""

    field: str = Field(description="Spec field, method fields without the 'method.' prefix.")
    value: Any = Field(description="The field's value in the spec.")
    reason: str = Field(description="Why the target does not read it.")


class Fixed(_Row):
    """A key whileai sets that no spec field produced (a loader rule, a safe default)."""

    path: str = Field(description="Dotted key in the target file.")
    value: Any = Field(description="The value whileai writes there.")
    reason: str = Field(description="Why whileai sets it.")


class Flops(_Row):
    """One number per stage (FLOPs, or GPU-hours of compute = FLOPs / (peak x MFU) / 3600)."""

    train: float = Field(description="Student training: 6 x N x tokens.")
    sample: float | None = Field(description="Sampling: 2 x N x tokens (SFT: the teacher's N; null "
                                 "without inference or, for SFT, an unknown teacher size).")
    teacher: float | None = Field(description="Teacher scoring: 2 x N_teacher x tokens (OPD), "
                                  "2 x N x tokens (OPSD's self-teacher); null for GRPO or an "
                                  "unknown teacher size.")
    eval: float | None = Field(description="Evaluation: 2 x N x eval tokens, the student samples "
                               "every evaluation's rollouts; null without evaluation.")


class GpuHours(Flops):
    """GPU-hours of compute per stage, and their sum."""

    total: float = Field(description="The sum of the stages.")


class Cost(_Row):
    """The run's size and an estimate of its compute before launch (docs/cost.md)."""

    gpus: int = Field(description="GPUs the run holds (trainer + inference; TRL: processes).")
    nodes: int = Field(description="Machines.")
    gpus_per_node: int = Field(description="GPUs in each machine.")
    teacher_gpus: int | None = Field(description="GPUs held for a teacher served apart (its own "
                                     "GPUs or SLURM job); null when it shares the run's or is "
                                     "served elsewhere.")
    steps: int = Field(description="Optimizer steps.")
    rollouts_per_step: int = Field(description="Completions sampled per step.")
    rollouts: int = Field(description="Completions sampled in the whole run.")
    tokens_per_rollout: int = Field(description="prompt_tokens (below) + max_tokens, the "
                                    "completion cap.")
    tokens_per_step: int = Field(description="rollouts_per_step x tokens_per_rollout.")
    sampled_tokens: int = Field(description="rollouts x max_tokens: an upper bound.")
    teacher_tokens: int = Field(description="Sampled tokens a teacher (or self-teacher) scores, "
                                "or (SFT) the tokens the teacher samples; 0 for GRPO.")
    sampler: str = Field(description="Who samples the completions: student (on-policy methods) or "
                         "teacher (SFT, off-policy; its sampling counts 2 x N_teacher x tokens).")
    eval_rollouts: int = Field(description="Evaluation rollouts over the run: evaluations x "
                               "examples x samples (x seats); 0 without evaluation or where not "
                               "counted (see eval_how).")
    eval_tokens: int = Field(description="eval_rollouts x (prompt_tokens + the eval cap).")
    eval_how: str = Field(description="How eval_rollouts was counted, and what was not.")
    prompt_tokens: int = Field(description="Tokens per prompt in the estimate: the mean measured "
                               "on the task rows where they are on this machine (TRL: the "
                               "built-in taskset or data), else the prompt cap.")
    prompt_how: str = Field(description="Which: 'prompt lengths: measured on N rows of <source>, "
                            "median, mean' (4 characters per token, no tokenizer loaded) or "
                            "'prompt lengths: assumed <tokens>, <its source>'.")
    student_params_b: float | None = Field(description="Student parameters, billions; null: unknown.")
    student_active_params_b: float | None = Field(description="Parameters a token passes through "
                                                  "(MoE: the active ones).")
    teacher_params_b: float | None = Field(description="Teacher parameters, billions (OPD).")
    teacher_active_params_b: float | None = Field(description="Teacher's active parameters.")
    flops: Flops | None = Field(description="FLOPs per stage; null when the student's size is unknown.")
    gpu_hours: GpuHours | None = Field(description="GPU-hours of compute per stage and in total.")
    gpu_seconds: float | None = Field(description="gpu_hours.total x 3600.")
    wall_hours: float | None = Field(description="Hours the slowest pool of GPUs is busy.")
    held_gpu_hours: float | None = Field(description="wall_hours x the GPUs held (the run's and "
                                         "a teacher's own): what the allocation costs.")
    formula: str = Field(description="The formula, in one line.")
    assumptions: list[str] = Field(description="GPU peak, MFU per stage and what is not counted.")
    unknown: str = Field(description="What could not be estimated and why; '' when nothing.")


class Teacher(_Row):
    """Where a frozen teacher (OPD, SFT) is served and on how many GPUs (its size from its name)."""

    model: str = Field(description="The teacher model.")
    url: str = Field(description="Where the run reaches it.")
    mode: str = Field(description="share (beside the policy on GPU 0), local (GPUs of its own on "
                      "the run's node), job (its own SLURM job), endpoint (already served), "
                      "in-process (TRL loads it into every training process; SFT: into sample.py, "
                      "before training).")
    params_b: float | None = Field(description="Parameters, billions; null: unknown from the name.")
    active_params_b: float | None = Field(description="Active parameters (MoE).")
    gpus: int | None = Field(description="GPUs one server needs: bf16 weights plus KV headroom.")
    held_gpus: int | None = Field(description="GPUs held for it besides the run's.")
    file: str | None = Field(description="The `uv run inference` config whileai wrote for it.")
    formula: str = Field(description="How `gpus` is computed.")
    note: str = Field(description="The report's line about it.")


class Report(_Row):
    """What `whileai compile --json` prints for one spec (for several, a JSON array of these)."""

    backend: str = Field(description="The backend that compiled the spec: prime-rl or trl.")
    target: str = Field(description="The pinned target, with its version or commit.")
    out: str | None = Field(description="Where the main file was written; null when nothing was.")
    main: str = Field(description="Name of the main file in `files`.")
    summary: list[str] = Field(description="The report's header lines: method, model, GPUs, batch.")
    spec: RunSpec = Field(description="The run spec with every default filled in (unset fields left out).")
    reads: list[Read] = Field(description="Spec fields the target reads, one row per target key.")
    ignores: list[Ignore] = Field(description="Spec fields the target does not read, with reasons.")
    fixed: list[Fixed] = Field(description="Keys whileai sets that no spec field produced.")
    warnings: list[Finding] = Field(description="Research-backed warnings for this run.")
    run: list[str] = Field(description="Shell commands that start the run, in order.")
    files: dict[str, str] = Field(description="Every emitted file: name relative to the output -> text.")
    cost: Cost | None = Field(description="The run's size and GPU-hour estimate (docs/cost.md).")
    teacher: Teacher | None = Field(description="Where an OPD or SFT teacher is served (a mixture's "
                                    "first); null otherwise.")
    teachers: list[Teacher] = Field(description="Every teacher of the run, one per distinct server "
                                    "(a mixture's sources may name several); [] without one.")
    stages: list[Report] = Field(description="A two-stage run (`then`): each stage's own report, in "
                                 "order (the fields above then cover both); [] for one stage.")
