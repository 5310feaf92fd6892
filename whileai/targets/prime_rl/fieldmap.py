"""The prime-rl field map: every spec field → the key(s) of the rl TOML it sets, or why prime-rl
does not read it, plus the keys whileai sets itself. The report, `whileai explain` and the
docs are derived from these rows.

`rows(plan)` builds the map for one run from its plan (whileai.targets.prime_rl.plan): the
values worked out once there (the batch, the layout, the sources, the teachers) are read from
it, and the rows that depend on the taskset (its agent roles, its arguments, the splits train
and eval read, the eval taskset) and on the model (the renderer) come from the pinned taskset
catalogue and the renderers data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai.catalogs import tasksets as tc
from whileai.cost import estimate as cost
from whileai.spec import mixture
from whileai.spec.run import RunSpec
from whileai.targets.compiled import counted
from whileai.targets.fieldmap import Drop, Fix, Off, Row, To, const
from whileai.targets.prime_rl import deploy, teacher
from whileai.targets.prime_rl import mixture as mix
from whileai.targets.prime_rl.algo import algo_rows, renderer_rows
from whileai.targets.prime_rl.pin import HARNESS_DAY

if TYPE_CHECKING:
    from whileai.targets.prime_rl.plan import CompilePlan

TRAIN = "orchestrator.train.source[0]"
EVAL = "orchestrator.eval.source[0]"
TEACHER_GPU_MEMORY = teacher.TEACHER_GPU_MEMORY
HARNESS_WHY = ("the harness runs as a uv script with unpinned openai and httpx (verifiers a60a606); "
               "held to the pin's day, not the newest (openai 3.63 on httpx2 fails every rollout at the "
               "pin); set for the orchestrator and its env servers, not before `uv run`, which would "
               "re-lock prime-rl")


def _eval_on(r: RunSpec) -> bool:
    return r.eval.enabled


def _same_eval(r: RunSpec) -> bool:
    return r.eval.enabled and r.eval.taskset is None


def _ckpt(r: RunSpec) -> bool:
    return r.checkpoint.enabled


def _lora(r: RunSpec) -> bool:
    return r.lora


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


VLLM_SEED = 0  # inference.vllm.seed's default (prime_rl/configs/inference.py:99)
ALGO = algo_rows("orchestrator.algo")


def _head(p: CompilePlan) -> list[Row]:
    first = p.entries[0]
    trained = any(tc.plugin_key(e.taskset) == tc.plugin_key(p.run.eval_taskset) for e in p.entries)
    return [
        ALGO[0],  # method.type -> orchestrator.algo.type, first: the report opens with it
        To("taskset", f"{TRAIN}.name", const(first.name),
           note=mixture.name_reason(p.run, first) if p.run.sources else ""),
        To("taskset", f"{TRAIN}.env.taskset.id"),
        To("taskset", f"{EVAL}.name", when=_same_eval),
        To("taskset", f"{EVAL}.env.taskset.id", when=_same_eval, note=_eval_note),
        To("eval.taskset", f"{EVAL}.name", when=_eval_on),
        To("eval.taskset", f"{EVAL}.env.taskset.id", when=_eval_on,
           note="a taskset a training source reads (the holdout check compares their rows)"
           if trained else "a different taskset: its rows are not training's"),
        Drop("eval.taskset", "eval.enabled is false: no eval source",
             when=lambda r: not r.eval.enabled),
    ]


def _batch_note(p: CompilePlan) -> str:
    per = f"{counted(p.prompts, 'prompts')} x {counted(p.samples, 'samples')}"
    if p.seats.traces == 1:
        return f"prime-rl counts rollouts: {per}"
    return f"prime-rl counts trainable traces, and {p.seats.how}: {per} x {p.seats.traces} seats"


def _map(p: CompilePlan) -> list[Row]:
    sft_only = all(e.method.off_policy for e in p.entries)
    shared = any(t.mode == "share" for t in p.teachers)  # beside the policy on GPU 0 (teacher.py)
    return [
        To("model", "model.name", note="shared: fills trainer, orchestrator and inference"),
        *renderer_rows("orchestrator.renderer"),
        To("steps", "max_steps"),
        To("prompts", "orchestrator.batch_size", const(p.batch), note=_batch_note(p)),
        To("method.samples", "orchestrator.group_size"),
        *deploy.rows(p),
        Fix("inference", {}, "rl launches the policy's inference server", when=const(p.serves)),
        Fix("orchestrator.env_vars.UV_EXCLUDE_NEWER", HARNESS_DAY, HARNESS_WHY, when=const(p.serves)),
        *deploy.engine_rows(p),
        To("lora", "inference.vllm.enable_lora", lambda r: True, when=_lora),
        To("lora", "orchestrator.model.lora.name", lambda r: f"whileai-r{r.lora_rank}", when=_lora,
           note="the adapter name inference serves"),
        To("lora", "inference.vllm.enable_lora", lambda r: False, when=lambda r: not r.lora,
           note="full weights: no [trainer.model.lora]"),
        To("lora_rank", "trainer.model.lora.rank", when=_lora),
        To("lora_rank", "inference.vllm.max_lora_rank", when=_lora, note="vLLM must admit the rank"),
        Drop("lora_rank", "lora is false: full weights are trained", when=lambda r: not r.lora),
        To("seed", "inference.vllm.seed", when=lambda r: p.serves and r.seed != VLLM_SEED,
           note="vLLM's sampling seed: prime-rl has no run seed (orchestrator.seed was removed), so "
           "a repeat's seed reaches its rollouts here"),
        Drop("seed", f"vLLM's sampling seed defaults to {VLLM_SEED}, this seed (prime-rl has no run "
             "seed): nothing to write; another seed is written as inference.vllm.seed",
             when=lambda r: p.serves and r.seed == VLLM_SEED),
        Drop("seed", "prime-rl has no run seed (orchestrator.seed was removed) and this run serves "
             "no policy inference, whose vLLM seed is the only one", when=const(not p.serves)),
        To("prompt_tokens", "seq_len", lambda r: r.prompt_tokens + p.max_tokens,
           note=lambda r: "seq_len = prompt_tokens + the longest source's max_tokens" if r.sources
           else "seq_len = prompt_tokens + max_tokens"),
        To("max_off_policy_steps", "orchestrator.max_off_policy_steps", when=const(not sft_only)),
        Drop("max_off_policy_steps", "no effect on SFT: the frozen teacher samples every trace, and a "
             "teacher-sampled trace never goes stale (orchestrator/train_sink.py _drop_stale: an "
             "episode with no policy span is kept)", when=const(sft_only)),
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
           note=lambda r: cost.export_note(r.rollouts * (r.prompt_tokens + p.max_tokens), r.steps)),
        Drop("inspect.token_export", "false: prime-rl's default, no token exports are written",
             when=lambda r: bool(r.inspect and not r.inspect.token_export)),
        To("accept", "<this report's warnings>", lambda r: sorted(r.accept), when=lambda r: bool(r.accept),
           note="whileai's own: each warning named is marked accepted with its reason and passes "
           "--strict; nothing of it is written to the prime-rl config"),
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
            when=const(shared)),
    ]


# the keys a spec field's value turns off (whileai.targets.story: an override of one is refused)
OFF = [
    Off("lora", ("trainer.model.lora", "orchestrator.model.lora", "inference.vllm.max_lora_rank",
                 "inference.vllm.max_loras", "inference.vllm.max_cpu_loras",
                 "inference.vllm.lora_target_modules"), "lora = true (and lora_rank)",
        when=lambda r: not r.lora),
    Off("checkpoint.enabled", ("ckpt", "trainer.ckpt", "orchestrator.ckpt"),
        "[checkpoint] enabled = true (and its interval, keep_last)",
        when=lambda r: not r.checkpoint.enabled),
    Off("eval.enabled", ("orchestrator.eval",), "[eval] enabled = true (and its interval, examples)",
        when=lambda r: not r.eval.enabled),
]


def rows(p: CompilePlan) -> list[Row]:
    """The whole map for one run's plan: the run's rows with the per-run rows in their places."""
    return [*_head(p), *_sources(p.run), *_map(p), *mix.rows(p)]


def _sources(run: RunSpec) -> list[Row]:
    out: list[Row] = []
    for key, value in run.taskset_args.items():
        out.append(To("taskset_args", f"{TRAIN}.env.taskset.{key}", const(value)))
    plan = split(run)
    if plan.train_reason:
        out.append(To("taskset", f"{TRAIN}.env.taskset.{plan.arg}", const(plan.train),
                      note=plan.train_reason))
    out += mix.role_rows(TRAIN, run.taskset, run.roles, "roles")
    if not run.eval.enabled:
        return out
    if run.eval_same_taskset:
        for key, value in run.taskset_args.items():
            if key not in run.eval.taskset_args and not (plan.eval_reason and key == plan.arg):
                out.append(To("taskset_args", f"{EVAL}.env.taskset.{key}", const(value)))
    for key, value in run.eval.taskset_args.items():
        out.append(To("eval.taskset_args", f"{EVAL}.env.taskset.{key}", const(value),
                      note="the eval source's own argument"))
    if plan.eval_reason:
        out.append(To("taskset", f"{EVAL}.env.taskset.{plan.arg}", const(plan.eval),
                      note=plan.eval_reason))
    return out + mix.role_rows(EVAL, run.eval_taskset,
                               run.roles if run.eval_same_taskset else None, "roles")
