"""The hardware keys verl 0.9.1 requires, each chosen by a rule the report states.

verl runs the actor, its rollout (vLLM) and the reference on the same GPUs (the hybrid engine),
`trainer.n_gpus_per_node` x `trainer.nnodes` of them; an OPD teacher is served on a pool of its
own (`distillation.n_gpus_per_node` x `distillation.nnodes`). The rules, in verl's own terms:

- `data.train_batch_size` counts prompts; x `rollout.n` it must divide by the GPUs
  (utils/config.py:121-125);
- `ppo_mini_batch_size` = the train batch: one optimizer update a step (whileai's step is an
  optimizer step; verl runs train_batch / mini updates a step);
- `ppo_micro_batch_size_per_gpu` (and the log-prob micro batches): the largest divisor of a GPU's
  share of the mini batch (mini x n / GPUs) up to a cap by the model's size (MICRO_CAPS);
- rollout tensor parallel: the fewest GPUs, a power of two, that hold the model's bf16 weights
  plus KV headroom (whileai.cost.sizes.serve_gpus), which must divide the GPUs of a node;
- the teacher pool: the teacher's own tensor-parallel size, sized by the memory fraction whileai
  writes for it (TEACHER_MEMORY), one replica, `num_replicas x TP` summing to the pool as
  workers/config/distillation.py:281-287 requires.
"""

from __future__ import annotations

from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.spec.run import RunSpec

# (up to billions of parameters, micro batch cap), larger: 2; verl's examples run 2 to 16 a GPU
MICRO_CAPS = ((3.0, 8), (14.0, 4))
MEMORY = 0.6  # vLLM's share of a GPU while the actor sleeps: verl's GRPO examples' value
# vLLM's share of each teacher GPU: the teacher's pool is its own, nothing else is placed on it
# (trainer_base.py:837-846; teacher_model.py starts only the vLLM servers there), so vLLM takes
# what it takes on a GPU it has alone: its own default, the fraction whileai.cost.sizes sizes with
TEACHER_MEMORY = sizes.MEMORY_UTILIZATION
# verl's OPD example (examples/on_policy_distillation_trainer/run_qwen3_8b_fsdp.sh, v0.9.0)
CLAMPS = {"loss_max_clamp": 10.0, "log_prob_min_clamp": -10.0}
TEACHER = "distillation.teacher_models.teacher_model."
RULES = {
    "train_batch": "prompts per step (verl counts prompts, then samples n of each)",
    "mini": "the whole train batch: one optimizer update per step, as whileai counts steps",
    "micro": "the largest divisor of one GPU's share of the mini batch (mini x n / GPUs) up to a "
             "cap by the model's size: 8 up to 3B parameters, 4 up to 14B, else 2 (4 when unknown)",
    "memory": f"{MEMORY}: verl's GRPO examples' value for vLLM colocated with the actor (it sleeps "
              "while the actor trains)",
    "teacher_memory": f"{TEACHER_MEMORY}: the teacher's pool is its own (no actor or rollout shares it: "
                      "trainer_base.py:837-846), so vLLM takes its default share of a GPU it has alone; "
                      "verl's 0.5 (distillation.yaml:91) would leave half of each teacher GPU unused, and "
                      "the teacher's TP is sized with this fraction",
    "teacher_context": "prompt + response + 1 (data.max_prompt_length + data.max_response_length + 1): the "
                       "student's prompt and whole response the teacher scores and the one token verl "
                       "asks it for (workers/config/distillation.py:174-183); verl's default null is "
                       "the model's whole context (vllm_async_server.py:1104-1105), whose KV cache vLLM "
                       "must fit in the teacher's memory at start-up",
    "clamps": "verl's OPD example's values (examples/on_policy_distillation_trainer/"
              "run_qwen3_8b_fsdp.sh at v0.9.0): each token's distillation loss clamped to +-10 "
              "(trainer/distillation/losses.py:258-260), log-probs floored at -10 before a top-k "
              "loss (trainer/distillation/fsdp/losses.py:127-129)",
}


def nodes(run: RunSpec) -> int:
    return run.nodes or 1


def gpus_per_node(run: RunSpec) -> int:
    """trainer.n_gpus_per_node: every GPU of each node past one node; else `gpus` (default 1: verl
    samples and trains on the same GPUs, so one GPU runs a whole GRPO run)."""
    return run.gpus_per_node if nodes(run) > 1 else (run.gpus or 1)


def gpus(run: RunSpec) -> int:
    return gpus_per_node(run) * nodes(run)


def check_batch(run: RunSpec, samples: int) -> None:
    """verl's own rule (utils/config.py:121-125) before verl sees it, in spec terms."""
    n = gpus(run)
    if run.prompts * samples % n:
        raise SpecError("prompts", run.prompts, f"a number whose rollouts (prompts x samples = "
                        f"{run.prompts} x {samples}) divide by the {n} GPUs: verl splits every "
                        "step's rollouts evenly over them (utils/config.py:121-125)")


def cap(model: str) -> int:
    """Sequences of `model` one GPU runs forward and backward at once (RULES["micro"])."""
    size = sizes.params(model)
    if size is None:
        return 4
    return next((c for most, c in MICRO_CAPS if size.total_b <= most), 2)


def micro(run: RunSpec, samples: int, model: str | None = None) -> int:
    share = max(1, run.prompts * samples // gpus(run))
    return max(d for d in range(1, min(share, cap(model or run.model)) + 1) if share % d == 0)


def tp(model: str, per_node: int, *, given: int | None = None, field: str = "model",
       memory: float = sizes.MEMORY_UTILIZATION) -> tuple[int, str]:
    """Tensor-parallel GPUs of one vLLM engine for `model` given `memory` of each GPU, and why."""
    if given is not None:
        if per_node % given:
            raise SpecError("inference_tp", given, f"a divisor of the {per_node} GPUs of a node: "
                            "verl's rollout engines tile each node's GPUs")
        return given, "inference_tp"
    size = sizes.params(model)
    if size is None:
        return 1, f"{model}'s size is unknown from its name: one GPU an engine"
    need = sizes.serve_gpus(size.total_b, memory)
    if need > per_node:
        raise SpecError(field, model, f"a model whose engine fits the {per_node} GPUs of a node "
                        f"({size.text()} needs {need} at gpu_memory_utilization {memory:g}): raise "
                        "gpus (or gpus_per_node)")
    formula = sizes.SERVE_FORMULA.replace(f"x {sizes.MEMORY_UTILIZATION})", f"x {memory:g})")
    why = (f"{size.text()}: {sizes.weights_gb(size.total_b):g} GB of bf16 weights plus KV "
           f"headroom take {need} GPU{'s' if need > 1 else ''} ({formula})")
    return need, why


def teacher_pool(run: RunSpec, teacher: str) -> dict[str, int | str]:
    """The OPD teacher's pool: TP from its size at the memory fraction it is served with
    (TEACHER_MEMORY, or the overrides'), one replica."""
    memory = run.overrides.get(TEACHER + "inference.gpu_memory_utilization", TEACHER_MEMORY)
    memory = float(memory) if isinstance(memory, (int, float)) and not isinstance(memory, bool) \
        else TEACHER_MEMORY
    tp_, why = tp(teacher, run.gpus_per_node, field="method.teacher.model", memory=memory)
    return {"tp": tp_, "replicas": 1, "gpus_per_node": tp_, "nnodes": 1, "why": why}


def epochs(steps: int, prompts: int, rows: int) -> int:
    """trainer.total_epochs that reach `steps`: verl's loader drops the last partial batch, and
    stops at total_training_steps or after total_epochs passes, whichever comes first."""
    per_epoch = rows // prompts
    if per_epoch < 1:
        raise SpecError("prompts", prompts, f"at most the {rows} training rows: verl's loader "
                        "drops a partial batch, so an epoch would hold no step")
    return -(-steps // per_epoch)
