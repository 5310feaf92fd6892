"""What a run costs before it is launched: tokens, FLOPs, GPU-hours, from the spec alone.

    est = estimate(Work(...), Pools(...))   # Estimate: to_dict() is the report's "cost" key
    est.line()                              # "cost: ≈ 1,234 GPU-hours ..." for the text report

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
from typing import Any, NamedTuple

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
    """What the run computes: from the spec and the backend's compiled batch."""

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


class Estimate(NamedTuple):
    work: Work
    pools: Pools
    flops: dict[str, float | None] | None
    gpu_hours: dict[str, float | None] | None
    wall_hours: float | None
    unknown: str

    @property
    def tokens_per_rollout(self) -> int:
        """prompt_tokens + max_tokens (a mixture: each source's cap weighed by its share)."""
        return self.work.prompt_tokens + round(sum(x.share * x.max_tokens for x in parts(self.work)))

    @property
    def held_gpus(self) -> int:
        return self.pools.gpus + (self.pools.teacher_gpus or 0)

    @property
    def held_gpu_hours(self) -> float | None:
        return None if self.wall_hours is None else self.wall_hours * self.held_gpus

    def to_dict(self) -> dict[str, Any]:
        w, p = self.work, self.pools
        rollouts = w.steps * w.rollouts_per_step
        total = None if self.gpu_hours is None else self.gpu_hours["total"]
        sampled = rollouts * sum(x.share * x.max_tokens for x in parts(w))
        taught = rollouts * sum(x.share * x.max_tokens for x in parts(w)
                                if x.scorer or x.sampler == "teacher")
        return {
            "gpus": p.gpus, "nodes": p.nodes, "gpus_per_node": p.gpus_per_node,
            "teacher_gpus": p.teacher_gpus, "steps": w.steps,
            "rollouts_per_step": w.rollouts_per_step, "rollouts": rollouts,
            "tokens_per_rollout": self.tokens_per_rollout,
            "tokens_per_step": w.rollouts_per_step * self.tokens_per_rollout,
            "sampled_tokens": round(sampled) if "sample" in w.stages else 0,
            "teacher_tokens": round(taught) if "sample" in w.stages else 0,
            "sampler": "/".join(dict.fromkeys(x.sampler for x in parts(w))),
            "eval_rollouts": w.eval_rollouts,
            "eval_tokens": w.eval_rollouts * (w.prompt_tokens + w.eval_max_tokens),
            "eval_how": w.eval_how,
            "prompt_tokens": w.prompt_tokens, "prompt_how": w.prompt_how,
            "student_params_b": w.student.total_b if w.student else None,
            "student_active_params_b": w.student.active_b if w.student else None,
            "teacher_params_b": w.teacher.total_b if w.teacher else None,
            "teacher_active_params_b": w.teacher.active_b if w.teacher else None,
            "flops": self.flops, "gpu_hours": self.gpu_hours,
            "gpu_seconds": None if total is None else total * 3600,
            "wall_hours": self.wall_hours, "held_gpu_hours": self.held_gpu_hours,
            "formula": FORMULA,
            "assumptions": assumptions(),
            "unknown": self.unknown,
        }

    def line(self) -> str:
        """One line for the text report."""
        w = self.work
        tokens = w.rollouts_per_step * self.tokens_per_rollout
        measured = "measured" in w.prompt_how
        head = f"cost: {_num(tokens)} tokens per step " + (
            "(prompts as measured, completions at the cap)" if measured else "at the caps")
        how = f"; {w.prompt_how}" if w.prompt_how else ""
        if self.gpu_hours is None:
            return f"{head}; no GPU-hour estimate: {self.unknown}{how} ({DOCS})"
        h = self.gpu_hours
        parts = ", ".join(f"{name} {_num(v)}" for name in ("train", "sample", "teacher", "eval")
                          if (v := h.get(name)))
        out = f"{head}; ≈ {_num(h['total'] or 0)} GPU-hours of compute ({parts})"
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


def estimate(work: Work, pools: Pools) -> Estimate:
    if work.student is None:
        return Estimate(work, pools, None, None, None,
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
    return Estimate(work, pools, every | flops, every | hours | {"total": sum(hours.values())},
                    wall, "; ".join(dict.fromkeys(unknown)))


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


__all__ = ["DOCS", "EXPORT_BYTES_PER_TOKEN", "FLOPS_PER_TOKEN", "FORMULA", "MFU", "MFU_SOURCE",
           "Estimate", "Part", "Pools", "Work", "assumed", "assumptions", "estimate", "export_note", "parts"]
