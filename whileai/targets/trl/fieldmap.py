"""The TRL field map: every spec field → a TRL config key (with its value), or the reason TRL
has no place for it. The report, `whileai explain` and the no-silent-drop test read this table.

Paths are top-level YAML keys of the command's parser (checked against the pinned catalogue),
`env.NAME` for TrlParser's `env` table, or `<...>` for something that is not a YAML key (the
command itself, a dataset column): those never reach config.yaml.
"""

from __future__ import annotations

import string
from typing import Any

from whileai.spec.run import OPD, OPSD, RunSpec, anchor_rate
from whileai.targets.compiled import counted
from whileai.targets.fieldmap import Drop, Fix, Off, Row, To
from whileai.targets.trl.accelerate import ROWS as ACCELERATE_ROWS
from whileai.targets.trl.accelerate import processes
from whileai.targets.trl.teacher import ROWS as TEACHER_ROWS
from whileai.targets.trl.teacher import is_shape, shape
from whileai.tasksets.builtin import for_run

COMMANDS = {"opd": "distillation", "grpo": "grpo", "opsd": "sdft", "sft": "sft"}
TRAIN_PY = {"sdft": "sdft.py", "gold": "gold.py", "server": "served.py"}  # commands run through a
# script whileai ships, written into the run directory as train.py
BATCH_CAP = 8  # per-device micro-batch cap: TRL's default per_device_train_batch_size
BETA = {"forward_kl": 0.0, "reverse_kl": 1.0, "jsd": 0.5}
KIND = {"initial": "base", "live": "live"}
DATA = "data"
SAMPLES = "teacher_samples"  # where SFT's sample.py writes the teacher's completions
SAMPLE_PY = "sample.py"


def _is(*kinds: str) -> Any:
    return lambda r: r.method.type in kinds


def command_name(run: RunSpec) -> str:
    """The parser a config is for: 'distillation', 'grpo', 'sdft' (whileai's train.py), 'sft', or
    for OPD across tokenizers 'gold' and with a served teacher 'server' (whileai.targets.trl.teacher;
    both through a train.py)."""
    return shape(run) or COMMANDS[run.method.type]


def one_per_prompt(run: RunSpec) -> bool:
    """DistillationTrainer and its experimental kin (GOLD with num_generations 1, the served
    teacher's) sample one completion per prompt, whatever `samples` says: every OPD run."""
    return isinstance(run.method, OPD)


def completions(run: RunSpec) -> int:
    """Completions per optimizer step as TRL counts them (DistillationTrainer: one per prompt)."""
    return run.prompts * (1 if one_per_prompt(run) else run.method.samples)


def per_process(run: RunSpec) -> int:
    """Completions each training process makes per step (whileai.targets.trl.compile checks that the
    step splits evenly over the processes)."""
    return max(1, completions(run) // processes(run))


def per_device(run: RunSpec) -> int:
    """Largest divisor of a process's completions that fits the micro-batch cap."""
    total = per_process(run)
    return max(d for d in range(1, min(total, BATCH_CAP) + 1) if total % d == 0)


def accumulation(run: RunSpec) -> int:
    return per_process(run) // per_device(run)


def eval_batch(run: RunSpec) -> int:
    """GRPO and SDFT need the eval batch to divide by the number of generations."""
    s = run.method.samples
    return s * max(1, BATCH_CAP // s)


def _beta(run: RunSpec) -> float:
    """TRL's interpolation coefficient: 0 forward KL, 1 reverse KL, 0.5 JSD (beta / alpha)."""
    return BETA[getattr(run.method, "divergence", "reverse_kl")]


def anchor_kind(run: RunSpec) -> str:
    a = run.method.anchor  # type: ignore[union-attr]
    return "ema" if a.startswith("ema:") else KIND[a]


def teacher_template(template: str) -> str:
    """whileai's OPSD template (a str.format string whose one field is {demonstration}) →
    SDFT's teacher_prompt_template, which SDFT fills with `.format(prompt=...,
    privileged_context=...)`: the teacher sees the prompt, a blank line, then the template."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(literal.replace("{", "{{").replace("}", "}}"))
        if field is not None:
            parts.append("{privileged_context}")
    return "{prompt}\n\n" + "".join(parts)


def max_prompt(run: RunSpec) -> int:
    """Room for the teacher prompt: the prompt, the privileged context (a demonstration, sized
    like a completion) and the template's own text (at most one token per UTF-8 byte)."""
    m = run.method
    assert isinstance(m, OPSD)
    return run.prompt_tokens + m.max_tokens + len(m.template.encode())


def _eval_on(run: RunSpec) -> bool:
    return run.eval.enabled


def _builtin(run: RunSpec) -> bool:
    return run.data is None


def dataset(run: RunSpec) -> str:
    """The folder config.yaml trains on: the tasks, or (SFT) the teacher's completions of them."""
    return SAMPLES if run.method.off_policy else DATA


def _dataset_note(run: RunSpec, what: str) -> str:
    head = (f"{what}: data/train.jsonl ({for_run(run).train_size} rows), data/test.jsonl "
            f"({test_rows(run)} rows)")
    if run.method.off_policy:
        return head + (f"; {SAMPLE_PY} writes the teacher's completions of them to {SAMPLES}/, "
                       "the dataset trained on")
    return head


def test_rows(run: RunSpec) -> int:
    holdout = for_run(run).holdout_size
    return holdout if run.eval.examples < 0 else min(run.eval.examples, holdout)


def _batch_note(run: RunSpec) -> str:
    if one_per_prompt(run):
        head = f"TRL counts completions per process; DistillationTrainer makes one per prompt: {run.prompts}"
    else:
        head = (f"TRL counts completions per process: {counted(run.prompts, 'prompts')} x "
                f"{counted(run.method.samples, 'generations')} = {completions(run)}")
    n = processes(run)
    where = "on one process" if n == 1 else f"on each of {n} processes (accelerate)"
    return (f"{head} = {per_device(run)} per device x "
            f"{counted(accumulation(run), 'accumulation steps')} {where}")


_ONE_PROCESS = ("TRL's process count comes from accelerate, not from the YAML; generation runs "
                "inside the training processes")

def _one_each(r: RunSpec) -> str:
    """What an OPD trainer samples per prompt, as whileai writes it."""
    if shape(r) == "gold":  # GOLDConfig.num_generations (gold_config.py:257) left at its 1
        return ("GOLDTrainer is written with num_generations 1 (its default: one completion per "
                "prompt, each step's batch all unique prompts, as for TRL's other OPD trainer)")
    trainer = "ServerDistillationTrainer" if shape(r) == "server" else "DistillationTrainer"
    return f"{trainer} samples one completion per prompt (no num_generations)"


FIELD_MAP: list[Row] = [
    Drop("schema_", "an editor hint ($schema), not part of the run"),
    To("method.type", "<command>", lambda r: f"trl {COMMANDS['opd']}", when=is_shape("distillation"),
       note="trl.DistillationTrainer (stable)"),
    To("method.type", "<command>", lambda r: "trl grpo", when=_is("grpo"),
       note="trl.GRPOTrainer"),
    To("method.type", "<command>", lambda r: "python train.py", when=_is("opsd"),
       note="trl.experimental.sdft.SDFTTrainer through the train.py beside the config"),
    To("method.type", "<command>", lambda r: f"python {SAMPLE_PY}; trl sft", when=_is("sft"),
       note=f"the teacher samples first ({SAMPLE_PY} beside the config), then trl.SFTTrainer "
       "trains on its completions"),
    To("taskset", "dataset_name", dataset, when=_builtin,
       note=lambda r: _dataset_note(r, f"{for_run(r).name} generated locally")),
    Drop("taskset", "a label only: the tasks come from data", when=lambda r: not _builtin(r)),
    To("data", "dataset_name", lambda r: dataset(r) if r.data else None,
       note=lambda r: _dataset_note(r, "copied")),
    To("taskset", "reward_funcs", lambda r: [f"{for_run(r).module}.{for_run(r).reward}"],
       when=lambda r: r.method.rewarded and _builtin(r) and r.reward is None,
       note=lambda r: f"{for_run(r).module}.py beside the config: "
       "LCS ratio of the <reversed_text> answer, as prime-rl's taskset scores it"),
    To("reward", "reward_funcs", lambda r: [r.reward] if r.reward else None,
       when=lambda r: r.method.rewarded,
       note="TRL imports it by dotted path: the module must be importable where TRL runs"),
    Drop("reward", "only GRPO trains on a reward", when=lambda r: not r.method.rewarded),
    To("accept", "<this report's warnings>", lambda r: sorted(r.accept), when=lambda r: bool(r.accept),
       note="whileai's own: each warning named is marked accepted with its reason and passes "
       "--strict; nothing of it is written to the TRL run directory"),
    To("model", "model_name_or_path"),
    To("steps", "max_steps"),
    To("prompts", "per_device_train_batch_size", per_device, note=_batch_note),
    To("prompts", "gradient_accumulation_steps", accumulation),
    *ACCELERATE_ROWS,
    Drop("inference_gpus", _ONE_PROCESS + ": there are no separate inference GPUs"),
    To("lora", "use_peft", note=lambda r: "needs peft; LoRA on peft's default target modules for the "
       "architecture (override lora_target_modules to change)" if r.lora else "full weights"),
    To("lora_rank", "lora_r", when=lambda r: r.lora),
    Drop("lora_rank", "lora is false: full weights are trained", when=lambda r: not r.lora),
    To("seed", "seed"),
    To("prompt_tokens", "max_prompt_length", max_prompt, when=_is("opsd"),
       note="prompt_tokens + max_tokens (the privileged context) + the template's bytes: SDFT "
       "truncates the teacher prompt from the left at this length"),
    Drop("prompt_tokens", "DistillationConfig and GRPOConfig in TRL 1.16 have no prompt-length "
         "cap: prompts are passed whole",
         when=lambda r: r.method.type == "grpo" or shape(r) in ("distillation", "server")),
    To("prompt_tokens", "max_length", lambda r: r.prompt_tokens + r.method.max_tokens, when=_is("sft"),
       note="prompt_tokens + max_tokens: SFT truncates longer prompt + completion sequences"),
    Drop("max_off_policy_steps", lambda r: "SFT's completions come from the frozen teacher, all "
         "sampled before training: there is no policy lag to bound" if r.method.off_policy else
         "TRL trains synchronously: every step samples with the current weights, so no rollout is "
         "ever stale"),
    To("eval.enabled", "eval_strategy", lambda r: "steps" if r.eval.enabled else "no",
       note=lambda r: "evaluate every eval_steps" if r.eval.enabled else "no evaluation"),
    To("eval.interval", "eval_steps", lambda r: r.eval_interval, when=_eval_on,
       note=lambda r: "" if r.eval.interval else "unset: about a quarter of the "
       "steps, a divisor of them (the final step is evaluated)"),
    To("eval.examples", "<data/test.jsonl rows>", test_rows, when=_eval_on,
       note=lambda r: f"the first rows of the {for_run(r).holdout_size}-row holdout"),
    *[Drop(f"eval.{f}", "eval.enabled is false: eval_strategy 'no'", when=lambda r: not r.eval.enabled)
      for f in ("interval", "examples")],
    Drop("eval.taskset", "TRL evaluates on data/test.jsonl, the held-out rows of the training "
         "data (generated or your data file); another taskset's tasks are not generated"),
    Drop("eval.taskset_args", "TRL's holdout is data/test.jsonl: taskset arguments configure "
         "prime-rl's taskset packages, which TRL does not load",
         when=lambda r: bool(r.eval.taskset_args)),
    Drop("taskset_args", "TRL trains from the files in data/ (whileai's local generator or your "
         "data file): taskset arguments configure prime-rl's taskset packages, which TRL does "
         "not load", when=lambda r: bool(r.taskset_args)),
    Drop("roles", "TRL trains one policy on single-turn prompts from data/: agent roles are "
         "seats of a prime-rl (verifiers) env"),
    Drop("ratio", "TRL trains on one dataset: a source's sampling weight only matters in a mixture "
         "(sources), which TRL does not offer"),
    Fix("per_device_eval_batch_size", eval_batch, "the eval batch must divide by the number of "
        "generations", when=lambda r: r.eval.enabled and r.method.type in ("grpo", "opsd")),
    To("checkpoint.enabled", "save_strategy", lambda r: "steps" if r.checkpoint.enabled else "no",
       note=lambda r: "checkpoints every save_steps" if r.checkpoint.enabled else
       "no checkpoints; the trained model is still saved at the end (trl's script: save_model)"),
    To("checkpoint.interval", "save_steps", when=lambda r: r.checkpoint.enabled),
    Fix("save_steps", lambda r: r.steps, "checkpoint.interval unset: one checkpoint, at the last "
        "step (TRL's default save_steps 500 could save none)",
        when=lambda r: r.checkpoint.enabled and r.checkpoint.interval is None),
    To("checkpoint.keep_last", "save_total_limit", when=lambda r: r.checkpoint.enabled),
    *[Drop(f"checkpoint.{f}", "checkpoint.enabled is false: save_strategy 'no'",
           when=lambda r: not r.checkpoint.enabled) for f in ("interval", "keep_last")],
    Fix("report_to", ["wandb"], "monitor is set", when=lambda r: r.monitor is not None),
    To("monitor.project", "env.WANDB_PROJECT", note="TRL's W&B callback reads the project from "
       "the environment; TrlParser exports the config's env table"),
    To("monitor.entity", "env.WANDB_ENTITY"),
    To("monitor.name", "run_name"),
    Fix("run_name", lambda r: f"{r.method.type}-{r.taskset}", "monitor.name unset",
        when=lambda r: r.monitor is not None and r.monitor.name is None),
    To("monitor.group", "env.WANDB_RUN_GROUP"),
    To("monitor.tags", "env.WANDB_TAGS", lambda r: ",".join(r.monitor.tags),  # type: ignore[union-attr]
       when=lambda r: bool(r.monitor and r.monitor.tags)),
    Drop("monitor.tags", "no tags given, so WANDB_TAGS is left unset",
         when=lambda r: bool(r.monitor and not r.monitor.tags)),
    To("output_dir", "output_dir"),
    Drop("inspect.token_export", "TRL's trainers write no per-token export (prime-rl's "
         "trainer.enable_token_export); whileai inspect --run reads prime-rl runs only"),
    # -- the method ------------------------------------------------------------------------------
    To("method.temperature", "temperature", when=lambda r: not r.method.off_policy,
       note=lambda r: "sampling, and both models' logits in the loss (divided by it)"
       if r.method.distills else "sampling"),
    To("method.max_tokens", "max_completion_length", when=lambda r: not r.method.off_policy),
    To("method.learning_rate", "learning_rate", lambda r: r.learning_rate,
       note=lambda r: "" if r.method.learning_rate else
       f"default for {r.method.type} with {'LoRA' if r.lora else 'full weights'}"),
    To("method.samples", "num_generations", when=_is("grpo", "opsd")),
    # SFT: sample.py's options (the command) and the trainer's loss
    To("method.teacher.model", f"<{SAMPLE_PY} --teacher>", when=_is("sft"),
       note="the teacher generates in-process (transformers): a local folder or a cached hub id"),
    To("method.samples", f"<{SAMPLE_PY} --samples>", when=_is("sft"), note="completions per prompt"),
    To("method.temperature", f"<{SAMPLE_PY} --temperature>", when=_is("sft"),
       note="the teacher's sampling"),
    To("method.max_tokens", f"<{SAMPLE_PY} --max-new-tokens>", when=_is("sft")),
    To("seed", f"<{SAMPLE_PY} --seed>", when=_is("sft"), note="prompt order and sampling"),
    To("steps", f"<{SAMPLE_PY} --prompts>", lambda r: r.steps * r.prompts, when=_is("sft"),
       note="steps x prompts: fresh teacher completions for every step (the train split cycled)"),
    Fix("completion_only_loss", True, "cross-entropy on the teacher's completion tokens only, never "
        "the prompt", when=_is("sft")),
    Drop("method.samples", lambda r: f"{_one_each(r)}: {r.prompts} rollouts per step, not "
         f"{r.rollouts}", when=lambda r: isinstance(r.method, OPD) and r.method.samples > 1),
    Drop("method.samples", lambda r: f"{_one_each(r)}; nothing to set",
         when=lambda r: isinstance(r.method, OPD) and r.method.samples == 1),
    # OPD
    To("method.teacher.model", "teacher_model_name_or_path", when=is_shape("distillation"),
       note="loaded in-process; it must share the student's vocabulary"),
    Drop("method.teacher.url", "the stable DistillationTrainer loads the teacher in-process from "
         "teacher_model_name_or_path and cannot query a served endpoint (TRL issue 6734); a teacher "
         "URL on another host than localhost compiles to TRL's ServerDistillationTrainer",
         when=is_shape("distillation")),
    Drop("method.teacher.url", f"{SAMPLE_PY} loads the teacher in-process from teacher.model and "
         "generates with transformers; it does not query the endpoint", when=_is("sft")),
    Drop("method.teacher.api_key_env", lambda r: "TRL's VLLMClient sends no Authorization header: "
         "the server must take requests without a key" if shape(r) == "server"
         else "no endpoint is queried, so no key is read"),
    To("method.divergence", "beta", _beta, when=_is("opd"),
       note="TRL's beta: 0 forward KL(teacher||student), 1 reverse KL(student||teacher), "
       "between: generalized JSD"),
    Drop("method.top_k", lambda r: ("GOLDTrainer's" if shape(r) == "gold" else "DistillationTrainer's")
         + " loss always spans the full vocabulary; TRL's top_k is a sampling filter and stays 0",
         when=lambda r: shape(r) != "server"),
    Drop("method.task_reward_kl_coef", "unset only: TRL's distillation trainers (Distillation, GOLD, "
         "ServerDistillation) take no reward (trl/trainer/distillation_trainer.py:1531), so a set "
         "coefficient is refused at compile"),
    *TEACHER_ROWS,
    # OPSD
    To("method.privileged", "<privileged_context column>",
       note="each row's privileged_context is this field of the task"),
    To("method.divergence", "distillation_alpha", _beta,
       when=_is("opsd"), note="0 forward KL, 1 reverse KL (student||teacher), 0.5 JSD"),
    Fix("distillation_mode", "full_logits", "OPSD has no top-k: score the full vocabulary "
        "(SDFT's default topk_logits keeps only the student's top 100)", when=_is("opsd")),
    To("method.anchor", "teacher_model_kind", anchor_kind,
       note=lambda r: {"ema": "moving average of the student's weights" if not r.lora else
                       "with LoRA, TRL's adapter EMA: a moving average of the LoRA A and B matrices "
                       "separately, each from zero, not of the student's weights (ema-lora-adapter)",
                       "base": "frozen initial weights",
                       "live": "the current student: unanchored"}[anchor_kind(r)]),
    To("method.anchor", "teacher_update_rate", lambda r: anchor_rate(r.method.anchor),  # type: ignore
       when=lambda r: r.method.type == "opsd" and anchor_kind(r) == "ema"),
    To("method.template", "teacher_prompt_template", lambda r: teacher_template(r.method.template),  # type: ignore
       note="the teacher sees the prompt, a blank line, then the template"),
]

# the keys a spec field's value turns off (whileai.targets.story: an override of one is refused)
OFF = [
    Off("lora", ("lora_r", "lora_alpha", "lora_dropout", "lora_target_modules",
                 "lora_target_parameters", "lora_modules_to_save", "lora_task_type", "use_rslora",
                 "use_dora"), "lora = true (and lora_rank)", when=lambda r: not r.lora),
    Off("checkpoint.enabled", ("save_steps", "save_total_limit", "save_only_model",
                               "save_on_each_node"),
        "[checkpoint] enabled = true (and its interval, keep_last)",
        when=lambda r: not r.checkpoint.enabled),
    Off("eval.enabled", ("eval_steps", "eval_on_start", "eval_delay", "per_device_eval_batch_size"),
        "[eval] enabled = true (and its interval, examples)", when=lambda r: not r.eval.enabled),
]

CPU_ROWS: list[Row] = [
    Fix("use_cpu", True, "compiled for the CPU (cpu=True)"),
    Fix("bf16", False, "compiled for the CPU: bf16 mixed precision needs a GPU"),
]


def privileged_key(run: RunSpec) -> str | None:
    return run.method.privileged if isinstance(run.method, OPSD) else None
