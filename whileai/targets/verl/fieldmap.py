"""The verl field map for `python3 -m verl.trainer.main_ppo` (GRPO, OPD): every spec field -> a
Hydra key of verl 0.9.1's `ppo_trainer` config (with its value), or the reason verl has no place
for it. SFT's two jobs are `sft.py`'s map; the report, `whileai explain` and the no-silent-drop
test read these tables.

Paths are Hydra keys (each becomes one `key=value` line of run.sh), or `<...>` for something that
is no key (an environment variable, a data file's rows). Defaults cited as file:line are verl
0.9.1's (the wheel's verl/).
"""

from __future__ import annotations

from typing import Any

from whileai.spec.run import OPD, RunSpec
from whileai.targets.fieldmap import Drop, Fix, Off, Row, To
from whileai.targets.verl import knobs, mix
from whileai.targets.verl.data import HERE, REWARD, TEST, TRAIN, rewarded
from whileai.targets.verl.mix import LOSS
from whileai.tasksets import builtin

ARR = "actor_rollout_ref"
TEACHER = "distillation.teacher_models.teacher_model"
GSM8K_ROWS = (7473, 1319)  # openai/gsm8k train and test, as gsm8k_rows.py writes them


def _is(*kinds: str) -> Any:
    return lambda r: r.method.type in kinds


def divergence(r: RunSpec) -> str:
    return str(getattr(r.method, "divergence", "reverse_kl"))


def one_node(r: RunSpec) -> bool:
    return knobs.nodes(r) == 1


def _trainer_note(r: RunSpec) -> str:
    pool = knobs.pool(r)
    if pool is None or pool.trainer == (r.gpus or 1):
        return "every GPU trains and samples"
    return f"every GPU trains and samples; the teacher's pool is {pool.placed}"


def gsm8k(r: RunSpec) -> bool:
    """gsm8k as verl's rows (whileai.targets.verl.data: gsm8k_rows.py), not whileai's generator's."""
    return r.data is None and builtin.name_of(r.taskset) == "gsm8k"


def files(r: RunSpec) -> tuple[str, str]:
    """The train and holdout files verl reads, in the run folder."""
    return ("data/train.parquet", "data/test.parquet") if gsm8k(r) else (TRAIN, TEST)


def rows(r: RunSpec) -> tuple[int, int]:
    """Train and holdout rows (a mixture: every source's, the holdouts of those evaluated)."""
    if r.sources:
        return mix.counts(r)
    if gsm8k(r):
        return GSM8K_ROWS
    t = builtin.for_run(r)
    return t.train_size, t.holdout_size


def samples(r: RunSpec) -> int:
    return int(r.method.samples)


def test_rows(r: RunSpec) -> int:
    holdout = rows(r)[1]
    return holdout if r.eval.examples < 0 else min(r.eval.examples, holdout)


def _lr_note(r: RunSpec) -> str:
    own = "" if r.method.learning_rate else (f"whileai's default for {r.method.type} with "
                                              f"{'LoRA' if r.lora else 'full weights'}; ")
    return own + "verl's own default 1e-6 (trainer/config/actor/actor.yaml:151) is not used"


_COLOCATED = ("verl colocates the rollout (vLLM) with the actor on every trainer GPU (the hybrid "
              "engine: vLLM sleeps while the actor trains), so no GPUs are set apart for inference")
_NO_TASKSETS = ("verl trains from the files in data/ (whileai's generator or your data file): "
                "taskset arguments configure prime-rl's taskset packages, which verl does not load")

COMMON: list[Row] = [
    Drop("schema_", "an editor hint ($schema), not part of the run"),
    To("accept", "<this report's warnings>", lambda r: sorted(r.accept), when=lambda r: bool(r.accept),
       note="whileai's own: each warning named is marked accepted with its reason and passes "
       "--strict; nothing of it is written to the verl run directory"),
    Drop("taskset_args", _NO_TASKSETS, when=lambda r: bool(r.taskset_args)),
    Drop("eval.taskset", "verl validates on data/test.jsonl, the held-out rows of the training data; "
         "another taskset's tasks are not generated"),
    Drop("eval.taskset_args", _NO_TASKSETS, when=lambda r: bool(r.eval.taskset_args)),
    Drop("roles", "verl trains one policy on single-turn prompts from data/: agent roles are seats "
         "of a prime-rl (verifiers) env"),
    Drop("ratio", "no sources: a run of one dataset has nothing to weigh its ratio against",
         when=lambda r: not r.sources),
    Drop("inference_gpus", _COLOCATED),
    Drop("inference_nodes", _COLOCATED),
    Drop("inference_replicas", _COLOCATED + ": one rollout engine per tensor-parallel group"),
    Drop("nodes_per_fsdp_group", "verl shards the actor with FSDP over every trainer GPU of every "
         "node; it has no islands"),
    Drop("inspect.token_export", "verl writes no per-token export (prime-rl's "
         "trainer.enable_token_export); whileai inspect --run reads prime-rl runs only"),
    Drop("method.teacher.api_key_env", "verl queries no endpoint, so no key is read"),
    To("monitor.entity", "<env WANDB_ENTITY>", note="exported by run.sh: verl's wandb logger reads "
       "no entity key"),
    To("monitor.group", "<env WANDB_RUN_GROUP>", note="exported by run.sh (wandb reads it)"),
    To("monitor.tags", "<env WANDB_TAGS>", lambda r: ",".join(r.monitor.tags),  # type: ignore[union-attr]
       when=lambda r: bool(r.monitor and r.monitor.tags), note="exported by run.sh (wandb reads it)"),
    Drop("monitor.tags", "no tags given, so WANDB_TAGS is left unset",
         when=lambda r: bool(r.monitor and not r.monitor.tags)),
    To("slurm.job_name", "<sbatch --job-name>", note="slurm.sh, the SLURM variant of the run lines"),
    To("slurm.partition", "<sbatch --partition>"),
    To("slurm.account", "<sbatch --account>"),
    To("slurm.time", "<sbatch --time>"),
    To("slurm.nodelist", "<sbatch --nodelist>"),
    To("slurm.exclude", "<sbatch --exclude>"),
    Drop("slurm.template_path", "a Jinja2 template of prime-rl's launcher: verl's SLURM recipe "
         "(docs/start/multinode.rst) is the plain sbatch script in the README"),
    To("slurm.project_dir", "<sbatch --chdir>", note="the job starts there: the run directory on a "
       "filesystem every node sees"),
    To("slurm.pre_run_command", "<sbatch script: first line>"),
    Drop("slurm.cleanup_grace_period", "prime-rl's launcher's teardown wait: verl's job ends "
         "with its Ray cluster"),
    Drop("slurm.shared_fs", "verl's recipe needs the run directory on a filesystem every node "
         "sees (data/, reward.py); there is no per-node install step"),
]

FIELD_MAP: list[Row] = [
    *COMMON,
    To("method.type", "algorithm.adv_estimator", lambda r: "grpo",
       note=lambda r: "group-relative advantages (trainer/ppo/core_algos.py)" if r.method.type ==
       "grpo" else "verl's OPD example keeps GRPO's estimator; with task rewards off the "
       "advantage is the teacher's negative KL (trainer/distillation/losses.py:283)" if not rewarded(r)
       else "GRPO's advantages of the task reward, plus the teacher's negative KL "
       "(trainer/distillation/losses.py:210-224)"),
    To("taskset", "data.train_files", lambda r: HERE + files(r)[0], when=lambda r: r.data is None,
       note=lambda r: "openai/gsm8k as verl's rows: run.sh first runs gsm8k_rows.py, written by "
       "whileai (verl's columns, the hub dataset at a pinned revision; verl's built-in gsm8k "
       "reward)" if gsm8k(r) else
       f"{r.taskset} generated locally as verl's rows (rl_dataset.py reads JSON lines)"),
    Drop("taskset", "a label only: the tasks come from data", when=lambda r: r.data is not None),
    To("data", "data.train_files", lambda r: HERE + TRAIN if r.data else None,
       note="copied as verl's rows: prompt (chat), data_source, reward_model.ground_truth, extra_info"),
    Fix("data.val_files", lambda r: HERE + files(r)[1], "verl builds its validation set at start "
        "even when it never validates (its default names ~/data/rlhf/gsm8k/test.parquet)"),
    To("prompt_tokens", "data.max_prompt_length"),
    To("method.max_tokens", "data.max_response_length"),
    To("prompts", "data.train_batch_size", note=knobs.RULES["train_batch"]),
    To("seed", "data.seed", note="the loader's shuffle"),
    To("seed", "actor_rollout_ref.rollout.seed", note="vLLM's sampling seed, plus each replica's "
       "rank (workers/rollout/vllm_rollout/vllm_async_server.py:343); verl's default is 42"),
    To("taskset", "reward.custom_reward_function.path", lambda r: HERE + REWARD,
       when=lambda r: r.data is None and r.reward is None and not gsm8k(r)),
    To("reward", "reward.custom_reward_function.path", lambda r: HERE + REWARD if r.reward else None,
       when=rewarded),
    Drop("reward", "only GRPO (or OPD with task_reward_kl_coef) trains on a reward",
         when=lambda r: not rewarded(r)),
    Fix("reward.custom_reward_function.path", HERE + REWARD, "verl scores every rollout for its "
        "metrics: reward.py logs 0.0 where no reward is trained on",
        when=lambda r: r.data is not None and r.reward is None),
    Fix("reward.custom_reward_function.name", "compute_score", "the function reward.py defines",
        when=lambda r: not gsm8k(r) or r.reward is not None),
    To("model", f"{ARR}.model.path"),
    To("lora", f"{ARR}.model.lora_rank", lambda r: r.lora_rank if r.lora else 0,
       note=lambda r: "LoRA on every linear layer (target_modules all-linear)" if r.lora else
       "0: full weights"),
    To("lora_rank", f"{ARR}.model.lora_alpha", lambda r: 2 * r.lora_rank, when=lambda r: r.lora,
       note="alpha = 2 x rank (verl's default 16 is for its rank-8 examples)"),
    Fix(f"{ARR}.model.target_modules", "all-linear", "verl's default, written out",
        when=lambda r: r.lora),
    Drop("lora_rank", "lora is false: full weights are trained", when=lambda r: not r.lora),
    To("method.learning_rate", f"{ARR}.actor.optim.lr", lambda r: r.learning_rate, note=_lr_note),
    To("prompts", f"{ARR}.actor.ppo_mini_batch_size", note=knobs.RULES["mini"]),
    To("prompts", f"{ARR}.actor.ppo_micro_batch_size_per_gpu", lambda r: knobs.micro(r, samples(r)),
       note=knobs.RULES["micro"]),
    Fix(f"{ARR}.actor.use_kl_loss", False, "no reference model: whileai's GRPO and OPD have no KL "
        "penalty to the initial policy (verl's default use_kl_loss is false; its examples set it)"),
    Fix(f"{ARR}.rollout.name", "vllm", "verl's default engine, written out"),
    To("method.samples", f"{ARR}.rollout.n"),
    To("method.temperature", f"{ARR}.rollout.temperature"),
    To("inference_tp", f"{ARR}.rollout.tensor_model_parallel_size"),
    Fix(f"{ARR}.rollout.tensor_model_parallel_size",
        lambda r: knobs.rollout_tp(r)[0], lambda r: "rollout TP: " + knobs.rollout_tp(r)[1],
        when=lambda r: r.inference_tp is None),
    Fix(f"{ARR}.rollout.gpu_memory_utilization", knobs.MEMORY, knobs.RULES["memory"]),
    To("prompts", f"{ARR}.rollout.log_prob_micro_batch_size_per_gpu", lambda r: knobs.micro(r, samples(r)),
       note="the actor's micro batch (issue #6280: a different one recomputes old log-probs in "
       "other shapes)"),
    To("prompts", f"{ARR}.ref.log_prob_micro_batch_size_per_gpu", lambda r: knobs.micro(r, samples(r)),
       note="the reference's, written too: an override that turns use_kl_loss on needs it "
       "(utils/config.py:172-177)"),
    Fix(f"{ARR}.rollout.val_kwargs.do_sample", True, "validation samples as training does",
        when=lambda r: r.eval.enabled),
    To("method.temperature", f"{ARR}.rollout.val_kwargs.temperature", when=lambda r: r.eval.enabled),
    Fix(f"{ARR}.rollout.val_kwargs.n", 1, "one completion per holdout prompt", when=lambda r: r.eval.enabled),
    *[Drop(f"eval.{f}", "eval.enabled is false: trainer.test_freq -1 and no validation before "
           "training", when=lambda r: not r.eval.enabled) for f in ("interval", "examples")],
    Drop("max_off_policy_steps", "verl's trainer here is synchronous (trainer.v1.trainer_mode "
         "sync): every step samples with the current weights, so no rollout is stale"),
    # -- OPD: the teacher on verl's own pool -----------------------------------------------------
    To("method.type", "distillation.enabled", lambda r: True, when=_is("opd"),
       note="verl's on-policy distillation (trainer/config/distillation/distillation.yaml)"),
    To("method.divergence", "distillation.distillation_loss.loss_mode", lambda r: LOSS[divergence(r)],
       when=_is("opd"), note=lambda r: "reverse KL as verl's OPD example runs it: k1 with policy "
       "gradient" if divergence(r) == "reverse_kl" else "forward KL over the teacher's top k"),
    Fix("distillation.distillation_loss.use_policy_gradient", True, "k1 is a per-token estimate "
        "used as the advantage (losses.py:283); verl refuses k1 without it",
        when=lambda r: isinstance(r.method, OPD) and r.method.divergence == "reverse_kl"),
    To("method.top_k", "distillation.distillation_loss.topk",
       when=lambda r: isinstance(r.method, OPD) and r.method.divergence == "forward_kl"),
    Drop("method.top_k", "k1 scores the sampled token only: no top-k support",
         when=lambda r: isinstance(r.method, OPD) and r.method.divergence == "reverse_kl"),
    *[Fix(f"distillation.distillation_loss.{k}", v, knobs.RULES["clamps"], when=_is("opd"))
      for k, v in knobs.CLAMPS.items()],
    Fix("distillation.distillation_loss.use_task_rewards", False, "task_reward_kl_coef unset: OPD "
        "trains on the teacher alone (verl's default adds the task reward)",
        when=lambda r: _is("opd")(r) and not rewarded(r)),
    To("method.task_reward_kl_coef", "distillation.distillation_loss.use_task_rewards", lambda r: True,
       when=lambda r: getattr(r.method, "task_reward_kl_coef", None) is not None,
       note="the task reward's policy-gradient loss beside the distillation loss (trainer/"
       "distillation/losses.py:210-217)"),
    To("method.task_reward_kl_coef", "distillation.distillation_loss.distillation_loss_coef",
       note="the distillation loss's weight beside the task reward's (losses.py:221-224)"),
    To("method.teacher.model", f"{TEACHER}.model_path", when=lambda r: _is("opd")(r) and not
       mix.several(r), note="served by verl on its own GPU pool; it must share the student's "
       "vocabulary"),
    Drop("method.teacher.url", "verl starts its own teacher on its distillation pool and has no "
         "external teacher URL (trainer/ppo/v1/trainer_base.py:837-846)", when=_is("opd")),
]


def trainer_rows(at: str = "", keep: str = "max_actor_ckpt_to_keep") -> list[Row]:
    """The `trainer.*` keys main_ppo and sft_trainer share (`at`: the job's prefix in sft's map)."""
    t = f"{at}trainer."
    return [
        To("steps", f"{t}total_training_steps"),
        To("nodes", f"{t}nnodes"),
        Fix(f"{t}nnodes", 1, "nodes unset: one machine", when=lambda r: r.nodes is None),
        To("gpus", f"{t}n_gpus_per_node", lambda r: knobs.gpus_per_node(r) if r.gpus else None,
           when=one_node, note=_trainer_note),
        Fix(f"{t}n_gpus_per_node", knobs.gpus_per_node, lambda r: "gpus unset: one GPU (verl samples "
            "and trains on the same GPUs)" + _trainer_note(r).removeprefix("every GPU trains and samples"),
            when=lambda r: one_node(r) and r.gpus is None),
        To("gpus_per_node", f"{t}n_gpus_per_node", when=lambda r: not one_node(r)),
        To("gpus_per_node", "<one node's GPUs: the trainer's and the OPD teacher's pool>",
           lambda r: max(r.gpus or 1, r.gpus_per_node), when=lambda r: one_node(r) and _is("opd")(r),
           note="whileai places the teacher's pool beside the trainer where the node has room, else "
           "carves it out of the trainer's GPUs: verl refuses a cluster with fewer GPUs than both "
           "(single_controller/ray/base.py:234-242)"),
        Drop("gpus_per_node", "one machine: its GPUs are `gpus`",
             when=lambda r: one_node(r) and not _is("opd")(r)),
        Drop("gpus", "several machines: every GPU of each (nodes x gpus_per_node)",
             when=lambda r: not one_node(r)),
        To("eval.enabled", f"{t}test_freq", lambda r: r.eval_interval if r.eval.enabled else -1,
           note=lambda r: "validate every test_freq steps" if r.eval.enabled else "-1: no validation"),
        Fix(f"{t}val_before_train", False, "eval.enabled is false: no validation at all",
            when=lambda r: not r.eval.enabled),
        To("eval.interval", f"{t}test_freq", lambda r: r.eval_interval, when=lambda r: r.eval.enabled,
           note=lambda r: "" if r.eval.interval else "unset: about a quarter of the steps, a "
           "divisor of them (the final step is validated)"),
        To("eval.examples", f"{at}data.val_max_samples",
           lambda r: -1 if r.eval.examples < 0 else test_rows(r), when=lambda r: r.eval.enabled,
           note=lambda r: "-1: the whole holdout" if r.eval.examples < 0 else "holdout rows verl "
           "validates on: a random subset seeded by data.seed (data.shuffle, rl_dataset.py:185-191)"),
        To("checkpoint.enabled", f"{t}save_freq",
           lambda r: (r.checkpoint.interval or r.steps) if r.checkpoint.enabled else -1,
           note=lambda r: ("-1: no checkpoints" if not r.checkpoint.enabled else "" if
                           r.checkpoint.interval else "interval unset: one, at the last step")),
        To("checkpoint.interval", f"{t}save_freq", when=lambda r: r.checkpoint.enabled),
        To("checkpoint.keep_last", f"{t}{keep}", when=lambda r: r.checkpoint.enabled),
        *[Drop(f"checkpoint.{f}", "checkpoint.enabled is false: trainer.save_freq -1",
               when=lambda r: not r.checkpoint.enabled) for f in ("interval", "keep_last")],
        To("output_dir", f"{t}default_local_dir",
           lambda r: r.output_dir if r.output_dir.startswith("/") else HERE + r.output_dir,
           note="verl writes global_step_<n>/ there (absolute: Ray's workers save it)"),
        Fix(f"{t}logger", lambda r: ["console", "wandb"] if r.monitor else ["console"],
            lambda r: "monitor is set" if r.monitor else "no monitor: console only (verl's "
            "default also logs to wandb)"),
        To("monitor.project", f"{t}project_name"),
        To("monitor.name", f"{t}experiment_name"),
        Fix(f"{t}experiment_name", lambda r: f"{r.method.type}-{r.taskset.split('/')[-1]}",
            "monitor.name unset", when=lambda r: r.monitor is None or r.monitor.name is None),
    ]


FIELD_MAP += trainer_rows()

# the pool keys (and the teacher's TP), set after the overrides: compile.teacher_rows
POOL = ("distillation.n_gpus_per_node", "distillation.nnodes", f"{TEACHER}.num_replicas",
        f"{TEACHER}.inference.tensor_model_parallel_size")

OFF = [
    Off("lora", (f"{ARR}.model.lora_alpha", f"{ARR}.model.target_modules"),
        "lora = true (and lora_rank)", when=lambda r: not r.lora),
    Off("checkpoint.enabled", ("trainer.max_actor_ckpt_to_keep",),
        "[checkpoint] enabled = true (and its interval, keep_last)",
        when=lambda r: not r.checkpoint.enabled),
]
