"""The prime-rl field map: every spec field → the key(s) of the rl TOML it sets, or why prime-rl
does not read it, plus the keys whileai sets itself. The report, `whileai explain` and the
docs are derived from these rows.

Most rows are fixed (`FIELD_MAP`); the rows that depend on the taskset (its agent roles, its
arguments, the splits train and eval read, the eval taskset) and on the model (the renderer)
are built per run by `rows(run)` from the pinned taskset catalogue and the renderers data.
"""

from __future__ import annotations

from typing import Any

from whileai.catalogs import tasksets as tc
from whileai.cost import estimate as cost
from whileai.spec import mixture
from whileai.spec.run import RunSpec
from whileai.targets.fieldmap import Drop, Fix, Row, To
from whileai.targets.prime_rl import deploy, teacher
from whileai.targets.prime_rl import mixture as mix
from whileai.targets.prime_rl.algo import algo_rows, renderer_rows
from whileai.tasksets import seats

TRAIN = "orchestrator.train.source[0]"
EVAL = "orchestrator.eval.source[0]"
TEACHER_GPU_MEMORY = teacher.TEACHER_GPU_MEMORY


def _eval_on(r: RunSpec) -> bool:
    return r.eval.enabled


def _same_eval(r: RunSpec) -> bool:
    return r.eval.enabled and r.eval.taskset is None


def _ckpt(r: RunSpec) -> bool:
    return r.checkpoint.enabled


def _lora(r: RunSpec) -> bool:
    return r.lora


def local_teacher(r: RunSpec) -> bool:
    """A teacher shares GPU 0 with the policy server (whileai.targets.prime_rl.teacher)."""
    return any(p.mode == "share" for p in teacher.plans(r, r.method.type))


def _sft_only(r: RunSpec) -> bool:
    return all(e.method.off_policy for e in mixture.entries(r))


def _temperature_note(r: RunSpec) -> str:
    if not r.method.off_policy:
        return ""
    t = r.method.temperature
    return "the teacher samples the training completions" + (
        "" if t == 1.0 else f"; the trainer also divides the student's logits by {t:g} in the "
        "cross-entropy (per-token temperatures, trainer/rl/train.py: logits / temperatures), so "
        f"the student fits the teacher's tokens at temperature {t:g}")


def split(r: RunSpec) -> tc.SplitPlan:
    return tc.split_plan(r.taskset, r.taskset_args, r.eval.taskset, r.eval.taskset_args)


def _eval_note(r: RunSpec) -> str:
    return mix.eval_note(split(r), trained="training reads")


ALGO = algo_rows("orchestrator.algo")
HEAD: list[Row] = [
    ALGO[0],  # method.type -> orchestrator.algo.type, first: the report opens with it
    To("taskset", f"{TRAIN}.name", lambda r: mixture.entries(r)[0].name,
       note=lambda r: mixture.name_reason(r, mixture.entries(r)[0]) if r.sources else ""),
    To("taskset", f"{TRAIN}.env.taskset.id"),
    To("taskset", f"{EVAL}.name", when=_same_eval),
    To("taskset", f"{EVAL}.env.taskset.id", when=_same_eval, note=_eval_note),
    To("eval.taskset", f"{EVAL}.name", when=_eval_on),
    To("eval.taskset", f"{EVAL}.env.taskset.id", when=_eval_on,
       note=lambda r: "a different taskset: its rows are not training's" if not any(
           tc.plugin_key(e.taskset) == tc.plugin_key(r.eval_taskset) for e in mixture.entries(r))
       else "a taskset a training source reads (the holdout check compares their rows)"),
    Drop("eval.taskset", "eval.enabled is false: no eval source", when=lambda r: not r.eval.enabled),
]

FIELD_MAP: list[Row] = [
    To("model", "model.name", note="shared: fills trainer, orchestrator and inference"),
    *renderer_rows("orchestrator.renderer"),
    To("steps", "max_steps"),
    To("prompts", "orchestrator.batch_size", lambda r: r.rollouts * seats.per_episode(r).traces,
       note=lambda r: f"prime-rl counts rollouts: {r.prompts} prompts x {r.method.samples} samples"
       if seats.per_episode(r).traces == 1 else f"prime-rl counts trainable traces, and "
       f"{seats.per_episode(r).how}: {r.prompts} prompts x {r.method.samples} samples x "
       f"{seats.per_episode(r).traces} seats"),
    To("method.samples", "orchestrator.group_size"),
    *deploy.DEPLOY_ROWS,
    Fix("inference", {}, "rl launches the policy's inference server", when=deploy.serves),
    *deploy.ENGINE_ROWS,
    To("lora", "inference.vllm.enable_lora", lambda r: True, when=_lora),
    To("lora", "orchestrator.model.lora.name", lambda r: f"whileai-r{r.lora_rank}", when=_lora,
       note="the adapter name inference serves"),
    To("lora", "inference.vllm.enable_lora", lambda r: False, when=lambda r: not r.lora,
       note="full weights: no [trainer.model.lora]"),
    To("lora_rank", "trainer.model.lora.rank", when=_lora),
    To("lora_rank", "inference.vllm.max_lora_rank", when=_lora, note="vLLM must admit the rank"),
    Drop("lora_rank", "lora is false: full weights are trained", when=lambda r: not r.lora),
    Drop("seed", "prime-rl has no run seed (orchestrator.seed was removed); only vLLM sampling "
         "takes one, --set inference.vllm.seed=N"),
    To("prompt_tokens", "seq_len", lambda r: r.prompt_tokens + mixture.max_tokens(r),
       note=lambda r: "seq_len = prompt_tokens + the longest source's max_tokens" if r.sources
       else "seq_len = prompt_tokens + max_tokens"),
    To("max_off_policy_steps", "orchestrator.max_off_policy_steps", when=lambda r: not _sft_only(r)),
    Drop("max_off_policy_steps", "no effect on SFT: the frozen teacher samples every trace, and a "
         "teacher-sampled trace never goes stale (orchestrator/train_sink.py _drop_stale: an "
         "episode with no policy span is kept)", when=_sft_only),
    To("eval.enabled", "<[orchestrator.eval] written>", when=_eval_on,
       note=lambda r: "an eval table with one source" if not r.sources else
       "an eval table: the run's taskset and each source's own (sources[i].eval)"),
    To("eval.enabled", "<no [orchestrator.eval]>", when=lambda r: not r.eval.enabled,
       note="prime-rl runs no evaluation without the table (an empty one is refused)"),
    To("eval.interval", "orchestrator.eval.interval", lambda r: r.eval_interval, when=_eval_on),
    Fix("orchestrator.eval.interval", lambda r: r.eval_interval,
        "eval.interval unset: about a quarter of the steps, a divisor of them (the final step "
        "is evaluated)",
        when=lambda r: r.eval.enabled and r.eval.interval is None),
    To("eval.examples", "orchestrator.eval.num_examples", when=_eval_on),
    *[Drop(f"eval.{f}", "eval.enabled is false: no eval table is written",
           when=lambda r: not r.eval.enabled) for f in ("interval", "examples")],
    Drop("eval.taskset_args", "eval.enabled is false: no eval table is written",
         when=lambda r: not r.eval.enabled and bool(r.eval.taskset_args)),
    To("monitor.project", "monitors.wandb.project"),
    To("monitor.entity", "monitors.wandb.entity"),
    To("monitor.name", "monitors.wandb.name"),
    Fix("monitors.wandb.name", lambda r: f"{r.method.type}-{r.taskset}", "monitor.name unset",
        when=lambda r: r.monitor is not None and r.monitor.name is None),
    To("monitor.group", "monitors.wandb.group"),
    To("monitor.tags", "monitors.wandb.tags", when=lambda r: bool(r.monitor and r.monitor.tags)),
    Drop("monitor.tags", "empty", when=lambda r: bool(r.monitor and not r.monitor.tags)),
    To("output_dir", "output_dir"),
    To("inspect.token_export", "trainer.enable_token_export",
       when=lambda r: bool(r.inspect and r.inspect.token_export),
       note=lambda r: cost.export_note(r.rollouts * (r.prompt_tokens + mixture.max_tokens(r)), r.steps)),
    Drop("inspect.token_export", "false: prime-rl's default, no token exports are written",
         when=lambda r: bool(r.inspect and not r.inspect.token_export)),
    Drop("data", "prime-rl reads its tasks from the taskset package named by taskset"),
    Drop("reward", "prime-rl scores rollouts with the taskset's own rubric"),
    To("checkpoint.enabled", "ckpt", lambda r: {}, when=_ckpt,
       note=lambda r: "[ckpt] turns checkpoints on for trainer and orchestrator"
       + ("; saved at the end of training only" if r.checkpoint.interval is None else "")),
    To("checkpoint.enabled", "<no [ckpt]>", when=lambda r: not r.checkpoint.enabled,
       note="prime-rl writes no resumable checkpoint without the table"),
    To("checkpoint.interval", "ckpt.interval", when=_ckpt, note="copied to trainer and orchestrator"),
    To("checkpoint.keep_last", "ckpt.keep_last", when=_ckpt),
    *[Drop(f"checkpoint.{f}", "checkpoint.enabled is false: no [ckpt] table is written",
           when=lambda r: not r.checkpoint.enabled) for f in ("interval", "keep_last")],
    # the method: the per-run rows here, its algo table from prime_rl_algo (a mixture's source
    # reuses those rows at orchestrator.train.source[i].algo)
    To("method.temperature", "orchestrator.train.sampling.temperature", note=_temperature_note),
    To("method.max_tokens", "orchestrator.train.sampling.max_completion_tokens"),
    To("method.max_tokens", "orchestrator.eval.sampling.max_completion_tokens", when=_eval_on),
    To("method.learning_rate", "trainer.optim.lr", lambda r: r.learning_rate,
       note=lambda r: "" if r.method.learning_rate else
       f"default for {r.method.type} with {'LoRA' if r.lora else 'full weights'}"),
    *ALGO[1:],
    Fix("inference.vllm.gpu_memory_utilization", TEACHER_GPU_MEMORY,
        "the local teacher shares GPU 0 with the policy server (prime-rl's ci opd config)",
        when=local_teacher),
]


def rows(run: RunSpec) -> list[Row]:
    """The whole map for one run: the fixed rows with the per-run rows in their places."""
    return [*HEAD, *_sources(run), *FIELD_MAP, *mix.rows(run)]


def _sources(run: RunSpec) -> list[Row]:
    out: list[Row] = []
    for key, value in run.taskset_args.items():
        out.append(To("taskset_args", f"{TRAIN}.env.taskset.{key}", _const(value)))
    plan = split(run)
    if plan.train_reason:
        out.append(To("taskset", f"{TRAIN}.env.taskset.{plan.arg}", _const(plan.train),
                      note=plan.train_reason))
    out += mix.role_rows(TRAIN, run.taskset, run.roles, "roles")
    if not run.eval.enabled:
        return out
    if run.eval_same_taskset:
        for key, value in run.taskset_args.items():
            if key not in run.eval.taskset_args and not (plan.eval_reason and key == plan.arg):
                out.append(To("taskset_args", f"{EVAL}.env.taskset.{key}", _const(value)))
    for key, value in run.eval.taskset_args.items():
        out.append(To("eval.taskset_args", f"{EVAL}.env.taskset.{key}", _const(value),
                      note="the eval source's own argument"))
    if plan.eval_reason:
        out.append(To("taskset", f"{EVAL}.env.taskset.{plan.arg}", _const(plan.eval),
                      note=plan.eval_reason))
    return out + mix.role_rows(EVAL, run.eval_taskset,
                               run.roles if run.eval_same_taskset else None, "roles")


def _const(value: Any) -> Any:
    return lambda r: value
