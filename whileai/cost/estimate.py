"""What a run costs before it is launched: tokens, FLOPs, GPU-hours, from the spec alone.

    cost = estimate(Work(...), Pools(...))  # Cost: the report's "cost" record (to_dict(): its JSON)
    cost.line()                             # "cost: ≈ 1,234 GPU-hours ..." for the text report

The formula (docs/cost.md states it with its sources):
- tokens per rollout = prompt tokens + max_tokens: the completion at its cap (an upper bound), the
  prompt measured where the task rows are on this machine (whileai.tasksets.lengths: the mean of
  the first rows), else at its cap (`prompt_how` says which);
  tokens per step = rollouts per step x tokens per rollout; sampled tokens = rollouts x max_tokens
- student training 6·N·tokens (forward + backward, Kaplan et al. 2020, arXiv:2001.08361),
  sampling 2·N·tokens, teacher scoring 2·N_teacher·tokens (OPD; OPSD's self-teacher is the
  student, N); SFT's frozen teacher samples every token (sampling 2·N_teacher·tokens) and
  scores none; N counts the parameters a token passes through (the active ones of an MoE)
- evaluation: the student samples evaluations x examples x samples rollouts of up to
  prompt_tokens + the eval cap (sampling FLOPs, 2·N·tokens), on the policy's inference GPUs
- GPU-seconds of a stage = FLOPs / (peak x MFU of the stage); a stage's GPUs run it in
  parallel, stages on separate GPUs overlap (prime-rl is asynchronous), stages on the same GPUs
  add up (TRL), and pools that run one after another add up too (TRL's SFT samples before it
  trains); wall hours = the slowest pool (or that sum); GPU-hours held = wall hours x GPUs held.
The vocabulary (rollouts, sampled tokens, teacher-scored tokens, GPU-seconds/hours) is the one
whileai's result budgets use for finished runs. Pure: no I/O, no heavy imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Annotated, Any, NamedTuple

from pydantic import ConfigDict, Field

from whileai.cost.sizes import GPU, PEAK_TFLOPS, Size

MFU = {"train": 0.40, "sample": 0.10, "teacher": 0.40, "eval": 0.10}
MFU_SOURCE = {
    "train": "Llama 3 (Dubey et al. 2024, arXiv:2407.21783): 38-43% BF16 MFU on H100s",
    "sample": "whileai's assumption: autoregressive decoding is memory-bound (10% of peak)",
    "teacher": "scoring known tokens is one prefill pass, compute-bound like training (40%)",
    "eval": "the student samples the eval rollouts: decoding, like sample (10%)",
}
FLOPS_PER_TOKEN = {"train": 6, "sample": 2, "teacher": 2, "eval": 2}
FORMULA = ("tokens = rollouts x (prompt tokens + max_tokens): completions at the cap, prompts "
           "measured where the rows are on this machine, else at the cap; FLOPs: train 6*N*tokens, "
           "sample 2*N*tokens (SFT: 2*N_teacher*tokens, the teacher samples), teacher "
           "2*N_teacher*tokens; eval 2*N*eval tokens (evaluations x examples x samples x "
           "(prompt tokens + the eval cap)); GPU-hours = FLOPs / (peak x MFU) / 3600")
DOCS = "docs/cost.md"


class Work(NamedTuple):
    """What the run computes: from the spec and the target's compiled batch."""

    steps: int
    rollouts_per_step: int
    prompt_tokens: int
    max_tokens: int
    student: Size | None
    teacher: Size | None  # OPD's or SFT's teacher; OPSD scores with the student itself
    scorer: str | None  # "teacher" (OPD), "self" (OPSD) or None (GRPO: a reward; SFT)
    student_name: str
    teacher_name: str | None = None
    stages: tuple[str, ...] = ("train", "sample", "teacher")  # what runs (fake data: train only)
    sampler: str = "student"  # who samples the completions: "teacher" for SFT (off-policy)
    parts: tuple[Part, ...] = ()  # a mixture's sources (unset: one part, the fields above)
    eval_rollouts: int = 0  # every evaluation's rollouts over the run (the student samples them)
    eval_max_tokens: int = 0  # the eval completion cap
    eval_how: str = ""  # how eval_rollouts was counted (or why it is not)
    prompt_how: str = ""  # "prompt lengths: measured ..." or "prompt lengths: assumed ..."


def parts(work: Work) -> tuple[Part, ...]:
    return work.parts or (Part(1.0, work.max_tokens, work.scorer, work.sampler, work.teacher,
                               work.teacher_name),)


class Part(NamedTuple):
    """One training source of a mixture: its share of each step's rollouts, its completion cap,
    who samples and who scores its tokens; `pools` maps its stages to pools where they differ
    from the run's (a source whose teacher is served on its own GPUs)."""

    share: float
    max_tokens: int
    scorer: str | None
    sampler: str
    teacher: Size | None
    teacher_name: str | None
    pools: Mapping[str, str | None] | None = None


class Pools(NamedTuple):
    """Which GPUs run which stage. Stages in one pool share its GPUs one after another (TRL's
    processes sample, score and train in turn); pools run at once (prime-rl's trainer and
    inference are asynchronous). A stage in no pool runs outside the run (a teacher served
    elsewhere): its compute is counted, its time and GPUs are not."""

    gpus: int  # GPUs the run holds
    nodes: int
    gpus_per_node: int
    pool_gpus: dict[str, int]  # pool → its GPUs
    stage_pool: Mapping[str, str | None]  # stage ("train", "sample", "teacher") → pool
    teacher_gpus: int | None = None  # GPUs held for the teacher besides `gpus`
    serial: bool = False  # the pools run one after another (TRL's SFT: sample.py, then trl sft)


def _num(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


@dataclass(frozen=True, kw_only=True)
class Flops:
    """One number per stage (FLOPs, or GPU-hours of compute = FLOPs / (peak x MFU) / 3600)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # the report schema's: no other keys

    train: Annotated[float, Field(description="Student training: 6 x N x tokens.")]
    sample: Annotated[float | None, Field(description="Sampling: 2 x N x tokens (SFT: the teacher's N; "
                                          "null without inference or, for SFT, an unknown teacher "
                                          "size).")]
    teacher: Annotated[float | None, Field(description="Teacher scoring: 2 x N_teacher x tokens (OPD), "
                                           "2 x N x tokens (OPSD's self-teacher); null for GRPO or an "
                                           "unknown teacher size.")]
    eval: Annotated[float | None, Field(description="Evaluation: 2 x N x eval tokens, the student samples "
                                        "every evaluation's rollouts; null without evaluation.")]


@dataclass(frozen=True, kw_only=True)
class GpuHours(Flops):
    """GPU-hours of compute per stage, and their sum."""

    total: Annotated[float, Field(description="The sum of the stages.")]


@dataclass(frozen=True, kw_only=True)
class Cost:
    """The run's size and an estimate of its compute before launch (docs/cost.md)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # the report schema's: no other keys

    gpus: Annotated[int, Field(description="GPUs the run holds (trainer + inference; TRL: processes).")]
    nodes: Annotated[int, Field(description="Machines.")]
    gpus_per_node: Annotated[int, Field(description="GPUs in each machine.")]
    teacher_gpus: Annotated[int | None, Field(description="GPUs held for a teacher served apart (its own "
                                              "GPUs or SLURM job); null when it shares the run's or is "
                                              "served elsewhere.")]
    steps: Annotated[int, Field(description="Optimizer steps.")]
    rollouts_per_step: Annotated[int, Field(description="Completions sampled per step.")]
    rollouts: Annotated[int, Field(description="Completions sampled in the whole run.")]
    tokens_per_rollout: Annotated[int, Field(description="prompt_tokens (below) + max_tokens, the "
                                             "completion cap.")]
    tokens_per_step: Annotated[int, Field(description="rollouts_per_step x tokens_per_rollout.")]
    sampled_tokens: Annotated[int, Field(description="rollouts x max_tokens: an upper bound.")]
    teacher_tokens: Annotated[int, Field(description="Sampled tokens a teacher (or self-teacher) scores, "
                                         "or (SFT) the tokens the teacher samples; 0 for GRPO.")]
    sampler: Annotated[str, Field(description="Who samples the completions: student (on-policy methods) "
                                  "or teacher (SFT, off-policy; its sampling counts 2 x N_teacher x "
                                  "tokens).")]
    eval_rollouts: Annotated[int, Field(description="Evaluation rollouts over the run: evaluations x "
                                        "examples x samples (x seats); 0 without evaluation or where "
                                        "not counted (see eval_how).")]
    eval_tokens: Annotated[int, Field(description="eval_rollouts x (prompt_tokens + the eval cap).")]
    eval_how: Annotated[str, Field(description="How eval_rollouts was counted, and what was not.")]
    prompt_tokens: Annotated[int, Field(description="Tokens per prompt in the estimate: the mean measured "
                                        "on the task rows where they are on this machine (TRL: the "
                                        "built-in taskset or data), else the prompt cap.")]
    prompt_how: Annotated[str, Field(description="Which: 'prompt lengths: measured on N rows of <source>, "
                                     "median, mean' (4 characters per token, no tokenizer loaded) or "
                                     "'prompt lengths: assumed <tokens>, <its source>'.")]
    student_params_b: Annotated[float | None, Field(description="Student parameters, billions; null: "
                                                    "unknown.")]
    student_active_params_b: Annotated[float | None, Field(description="Parameters a token passes "
                                                           "through (MoE: the active ones).")]
    teacher_params_b: Annotated[float | None, Field(description="Teacher parameters, billions (OPD).")]
    teacher_active_params_b: Annotated[float | None, Field(description="Teacher's active parameters.")]
    flops: Annotated[Flops | None, Field(description="FLOPs per stage; null when the student's size is "
                                         "unknown.")]
    gpu_hours: Annotated[GpuHours | None, Field(description="GPU-hours of compute per stage and in "
                                                "total.")]
    gpu_seconds: Annotated[float | None, Field(description="gpu_hours.total x 3600.")]
    wall_hours: Annotated[float | None, Field(description="Hours the slowest pool of GPUs is busy.")]
    held_gpu_hours: Annotated[float | None, Field(description="wall_hours x the GPUs held (the run's and "
                                                  "a teacher's own): what the allocation costs.")]
    formula: Annotated[str, Field(description="The formula, in one line.")]
    assumptions: Annotated[list[str], Field(description="GPU peak, MFU per stage and what is not "
                                            "counted.")]
    unknown: Annotated[str, Field(description="What could not be estimated and why; '' when nothing.")]

    @property
    def held_gpus(self) -> int:
        """The run's GPUs and those held for a teacher served apart."""
        return self.gpus + (self.teacher_gpus or 0)

    def to_dict(self) -> dict[str, Any]:
        """The report's "cost" key: the fields, in order."""
        return asdict(self)

    def line(self) -> str:
        """One line for the text report."""
        measured = "measured" in self.prompt_how
        head = f"cost: {_num(self.tokens_per_step)} tokens per step " + (
            "(prompts as measured, completions at the cap)" if measured else "at the caps")
        how = f"; {self.prompt_how}" if self.prompt_how else ""
        if self.gpu_hours is None:
            return f"{head}; no GPU-hour estimate: {self.unknown}{how} ({DOCS})"
        h = self.gpu_hours
        parts = ", ".join(f"{name} {_num(v)}" for name in ("train", "sample", "teacher", "eval")
                          if (v := getattr(h, name)))
        out = f"{head}; ≈ {_num(h.total or 0)} GPU-hours of compute ({parts})"
        if self.wall_hours is not None:
            out += (f"; ≈ {_num(self.wall_hours)} h on {self.held_gpus} GPU"
                    f"{'s' if self.held_gpus != 1 else ''} = "
                    f"{_num(self.wall_hours * self.held_gpus)} GPU-hours held")
        if self.unknown:
            out += f" ({self.unknown})"
        return out + f"{how} (formula and assumptions: {DOCS})"


def assumptions() -> list[str]:
    return [f"{GPU}: {PEAK_TFLOPS:g} TFLOP/s dense BF16 peak (NVIDIA datasheet)",
            *(f"MFU {stage} {MFU[stage]:.0%}: {MFU_SOURCE[stage]}" for stage in MFU),
            "every completion at its cap (max_tokens): an upper bound; every prompt at its cap "
            "(prompt_tokens) unless measured on task rows on this machine (prompt_how)",
            "activation-checkpoint recompute and LoRA's skipped weight gradients are not counted"]


def assumed(tokens: int, source: str) -> str:
    """The cost line's words for a prompt length that was not measured."""
    return f"prompt lengths: assumed {tokens:,} tokens each ({source})"


def estimate(work: Work, pools: Pools) -> Cost:
    if work.student is None:
        return _cost(work, pools, None, None, None,
                     f"the student's size is unknown from its name ({work.student_name!r}; "
                     "no 'NB' in it and not in whileai.cost.sizes.TABLE)")
    flops: dict[str, float] = {}
    busy: dict[str, float] = {}
    unknown: list[str] = []
    for part in parts(work):
        tokens = work.steps * work.rollouts_per_step * part.share * (work.prompt_tokens + part.max_tokens)
        n, missing = _sizes(work, part)
        unknown += missing
        where = part.pools or pools.stage_pool
        for stage, b in n.items():
            f = FLOPS_PER_TOKEN[stage] * b * 1e9 * tokens
            flops[stage] = flops.get(stage, 0.0) + f
            pool = where.get(stage)
            if pool is not None and pools.pool_gpus.get(pool):
                busy[pool] = busy.get(pool, 0.0) + _hours(stage, f) / pools.pool_gpus[pool]
    if work.eval_rollouts and "sample" in work.stages:  # the student samples every evaluation
        f = FLOPS_PER_TOKEN["eval"] * work.student.active_b * 1e9 * work.eval_rollouts * (
            work.prompt_tokens + work.eval_max_tokens)
        flops["eval"] = f
        pool = pools.stage_pool.get("eval")
        if pool is not None and pools.pool_gpus.get(pool):
            busy[pool] = busy.get(pool, 0.0) + _hours("eval", f) / pools.pool_gpus[pool]
    hours = {stage: _hours(stage, f) for stage, f in flops.items()}
    every: dict[str, Any] = {stage: None for stage in MFU}  # a stage that does not run: None
    wall = (sum(busy.values()) if pools.serial else max(busy.values())) if busy else None
    return _cost(work, pools, Flops(**(every | flops)),
                 GpuHours(**(every | hours), total=sum(hours.values())), wall,
                 "; ".join(dict.fromkeys(unknown)))


def _cost(work: Work, pools: Pools, flops: Flops | None, gpu_hours: GpuHours | None,
          wall: float | None, unknown: str) -> Cost:
    """The record of an estimate: the run's size, its tokens, and the FLOPs and hours computed."""
    w, p = work, pools
    rollouts = w.steps * w.rollouts_per_step
    per_rollout = w.prompt_tokens + round(sum(x.share * x.max_tokens for x in parts(w)))
    sampled = rollouts * sum(x.share * x.max_tokens for x in parts(w))
    taught = rollouts * sum(x.share * x.max_tokens for x in parts(w) if x.scorer or x.sampler == "teacher")
    held = p.gpus + (p.teacher_gpus or 0)
    return Cost(
        gpus=p.gpus, nodes=p.nodes, gpus_per_node=p.gpus_per_node, teacher_gpus=p.teacher_gpus,
        steps=w.steps, rollouts_per_step=w.rollouts_per_step, rollouts=rollouts,
        tokens_per_rollout=per_rollout, tokens_per_step=w.rollouts_per_step * per_rollout,
        sampled_tokens=round(sampled) if "sample" in w.stages else 0,
        teacher_tokens=round(taught) if "sample" in w.stages else 0,
        sampler="/".join(dict.fromkeys(x.sampler for x in parts(w))),
        eval_rollouts=w.eval_rollouts,
        eval_tokens=w.eval_rollouts * (w.prompt_tokens + w.eval_max_tokens), eval_how=w.eval_how,
        prompt_tokens=w.prompt_tokens, prompt_how=w.prompt_how,
        student_params_b=w.student.total_b if w.student else None,
        student_active_params_b=w.student.active_b if w.student else None,
        teacher_params_b=w.teacher.total_b if w.teacher else None,
        teacher_active_params_b=w.teacher.active_b if w.teacher else None,
        flops=flops, gpu_hours=gpu_hours,
        gpu_seconds=None if gpu_hours is None else gpu_hours.total * 3600,
        wall_hours=wall, held_gpu_hours=None if wall is None else wall * held,
        formula=FORMULA, assumptions=assumptions(), unknown=unknown)


def _hours(stage: str, flops: float) -> float:
    return flops / (PEAK_TFLOPS * 1e12 * MFU[stage]) / 3600


def _sizes(work: Work, part: Part) -> tuple[dict[str, float], list[str]]:
    """Parameters per token of each stage that runs for this part, and what is unknown."""
    assert work.student is not None
    n = {"train": work.student.active_b}
    if "sample" not in work.stages:
        return n, []
    missing: list[str] = []

    def teacher(stage: str, what: str) -> None:
        if part.teacher is None:
            missing.append(f"teacher {what} not counted: {part.teacher_name!r}'s size is unknown "
                           "from its name")
        else:
            n[stage] = part.teacher.active_b

    if part.sampler == "teacher":
        teacher("sample", "sampling")
    else:
        n["sample"] = work.student.active_b
    if part.scorer == "self":
        n["teacher"] = work.student.active_b
    elif part.scorer == "teacher":
        teacher("teacher", "scoring")
    return n, missing


# prime-rl 559b447's token export (trainer.enable_token_export): ~190 bytes of JSON per exported
# token (17 aligned columns, float32 values as doubles), measured on records of its layout
# (tests/tokenview/token_export_gen.py); every trained sequence, prompt included, of every step.
EXPORT_BYTES_PER_TOKEN = 190


def export_note(tokens_per_step: int, steps: int) -> str:
    """The disk a run's token exports take, at the caps (an upper bound)."""
    total = tokens_per_step * steps * EXPORT_BYTES_PER_TOKEN
    size = next(f"{total / d:.3g} {u}" for d, u in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1, "bytes"))
                if total >= d or u == "bytes")
    return (f"token exports take up to {size} on disk ({tokens_per_step:,} tokens per step at the caps "
            f"x {steps} steps x ~{EXPORT_BYTES_PER_TOKEN} bytes per token); read them with whileai "
            "inspect --run")


__all__ = ["DOCS", "EXPORT_BYTES_PER_TOKEN", "FLOPS_PER_TOKEN", "FORMULA", "MFU", "MFU_SOURCE", "Cost",
           "Flops", "GpuHours", "Part", "Pools", "Work", "assumed", "assumptions", "estimate", "export_note",
           "parts"]
