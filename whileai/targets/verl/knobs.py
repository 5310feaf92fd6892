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
- the teacher pool (`Pool`, `pool`): the teacher's own tensor-parallel size, sized by the memory
  fraction whileai writes for it (TEACHER_MEMORY), `num_replicas x TP` summing to the pool as
  workers/config/distillation.py:281-287 requires. verl places it as a Ray resource pool of its own
  beside the trainer's (trainer/ppo/v1/trainer_base.py:818-846) and refuses to start when the two
  ask for more GPUs than the cluster has (single_controller/ray/base.py:234-242). On one node it
  sits beside the trainer where the node has room, else it is carved out of the node's GPUs; past
  one node it gets a node of its own, which the run lines start.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.spec.run import OPD, RunSpec

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
    samples and trains on the same GPUs, so one GPU runs a whole GRPO run), less an OPD
    teacher's pool where the node has no room beside them (`pool`)."""
    if nodes(run) > 1:
        return run.gpus_per_node
    got = pool(run)
    return got.trainer if got else (run.gpus or 1)


def all_nodes(run: RunSpec) -> int:
    """The nodes the run lines start: the trainer's and, past one node, the teacher's own."""
    got = pool(run)
    return nodes(run) + (got.extra_nodes if got else 0)


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


class Pool(NamedTuple):
    """Where an OPD run's GPUs go: the trainer's (actor and rollout) and the teacher's own pool."""

    trainer: int  # trainer.n_gpus_per_node
    per_node: int  # distillation.n_gpus_per_node
    nnodes: int  # distillation.nnodes
    replicas: int  # num_replicas: per_node x nnodes / tp
    tp: int  # the teacher's tensor-parallel size
    memory: float  # the teacher's gpu_memory_utilization, which its TP is sized by
    extra_nodes: int  # nodes the run lines add for the teacher (past one node)
    held: int  # GPUs held for the teacher: its pool, or its whole nodes past one node
    why: str  # why that TP
    placed: str  # how the pool was placed, for the report
    each: tuple[tuple[str, int, int, str], ...] = ()  # several teachers: (entry, replicas, TP, why)

    @property
    def gpus(self) -> int:
        return self.per_node * self.nnodes


def _given(run: RunSpec, key: str) -> Any:
    value = run.overrides.get(key)
    return value if type(value) is int else None


def node_gpus(run: RunSpec) -> int:
    """The GPUs one node of the run has: `gpus_per_node` (the spec refuses more `gpus` than that on
    one node). The teacher's pool is placed on it (`pool`), and the rehearsal declares it to Ray."""
    return run.gpus_per_node


def pool(run: RunSpec) -> Pool | None:
    """An OPD run's teacher pool (None for other methods): the teacher's TP from its size at
    TEACHER_MEMORY (or the overrides'), then placed. One node holds `gpus_per_node` GPUs
    (knobs.node_gpus): the pool sits beside the trainer's `gpus` where they fit, else it is carved
    out of them, the trainer keeping the most GPUs its batch and rollout TP split over and the
    teacher the rest in whole replicas; where no split works, a SpecError. Past one node, the
    teacher gets a node of its own (its replicas fill it), which the run lines add. Pool keys set
    in `overrides` are kept as given."""
    if not isinstance(run.method, OPD):
        return None
    from whileai.targets.verl import mix

    if mix.several(run):
        return _several(run, mix.teachers(run))
    teacher = run.method.teacher.model
    memory = run.overrides.get(TEACHER + "inference.gpu_memory_utilization", TEACHER_MEMORY)
    memory = float(memory) if isinstance(memory, (int, float)) and not isinstance(memory, bool) \
        and 0 < memory <= 1 else TEACHER_MEMORY  # out of range: the memory-utilization rule refuses it
    several = nodes(run) > 1
    cap = node_gpus(run)
    tp_ = _given(run, TEACHER + "inference.tensor_model_parallel_size")
    why = "set in overrides"
    if tp_ is None:
        tp_, why = tp(teacher, cap, field="method.teacher.model", memory=memory)
    set_per, set_nodes = _given(run, "distillation.n_gpus_per_node"), _given(run, "distillation.nnodes")
    set_replicas = _given(run, TEACHER + "num_replicas")
    if several:
        per = set_per or (cap // tp_) * tp_
        nnodes_ = set_nodes or 1
        extra = nnodes_ * -(-per // run.gpus_per_node)
        return Pool(run.gpus_per_node, per, nnodes_, set_replicas or per * nnodes_ // tp_, tp_, memory,
                    extra, extra * run.gpus_per_node, why, f"on {_n(extra, 'node')} of its own beside "
                    f"the trainer's {_n(nodes(run), 'node')}: the run lines start {nodes(run) + extra}")
    want = run.gpus or 1
    size = set_per * (set_nodes or 1) if set_per else tp_ * (set_replicas or 1)
    if want + size <= cap:
        return Pool(want, set_per or size, set_nodes or 1, set_replicas or size // tp_, tp_, memory, 0,
                    size, why, f"beside the trainer's {_n(want, 'GPU')} on one node of {cap}")
    samples, rollout = int(run.method.samples), _rollout_tp(run)
    fits = [t for t in range(cap - size, 0, -1) if run.prompts * samples % t == 0 and t % rollout == 0]
    if not fits:
        batch = run.prompts * samples
        least = next((t for t in range(rollout, batch + 1, rollout) if batch % t == 0), None)
        need = (f"gpus >= {size + least} on one node, or nodes >= 2 (the teacher on a node of its own)"
                if least else f"prompts x samples divisible by the rollout TP {rollout}")
        raise SpecError("gpus", run.gpus, f"a node with room for the teacher's pool of {size} "
                        f"({teacher} at TP {tp_}) and a trainer the batch splits over (prompts x "
                        f"samples = {batch} divisible by its GPUs, a multiple of the rollout TP "
                        f"{rollout}): {need}",
                        hint=f"verl places the trainer's and the teacher's pools side by side and "
                        f"refuses a cluster with fewer GPUs than both (single_controller/ray/base.py:"
                        f"234-242); one node here holds {cap}")
    trainer = fits[0]
    if set_per:
        return Pool(trainer, set_per, set_nodes or 1, set_replicas or size // tp_, tp_, memory, 0, size,
                    why, f"carved out of the node's {cap} GPUs: the trainer keeps {trainer}")
    size = (cap - trainer) // tp_ * tp_
    return Pool(trainer, size, 1, size // tp_, tp_, memory, 0, size, why,
                f"carved out of the node's {cap} GPUs: the trainer keeps {trainer}, the most that "
                f"prompts x samples = {run.prompts * samples} split over (a multiple of the rollout "
                f"TP {rollout}), the teacher the rest in replicas of TP {tp_}")


def _several(run: RunSpec, teachers: list[Any]) -> Pool:
    """Several teachers (a mixture): one replica of each at its own TP, side by side in one pool;
    placed as one teacher's pool is (beside the trainer, carved out of the node, or past one node
    on a node of its own, where each teacher gets as many replicas as the node holds sets of all)."""
    cap = node_gpus(run)
    sized = [(t.entry, *tp(t.model, cap, field=f"{t.field}.model", memory=TEACHER_MEMORY))
             for t in teachers]
    one = sum(t for _, t, _ in sized)
    if one > cap:
        raise SpecError(teachers[-1].field + ".model", teachers[-1].model, f"teachers whose replicas "
                        f"fit the {cap} GPUs of a node together (TP {' + '.join(str(t) for _, t, _ in sized)}"
                        f" = {one}): raise gpus_per_node")
    whys = "; ".join(f"{e}: TP {t}, {w}" for e, t, w in sized)
    if nodes(run) > 1:
        k = cap // one
        each = tuple((e, k, t, w) for e, t, w in sized)
        return Pool(run.gpus_per_node, k * one, 1, k * len(sized), 0, TEACHER_MEMORY, 1, cap, whys,
                    f"on 1 node of its own beside the trainer's {_n(nodes(run), 'node')}: the run lines "
                    f"start {nodes(run) + 1}; {k} replica{'s' if k != 1 else ''} of each teacher", each)
    each = tuple((e, 1, t, w) for e, t, w in sized)
    want = run.gpus or 1
    if want + one <= cap:
        return Pool(want, one, 1, len(sized), 0, TEACHER_MEMORY, 0, one, whys,
                    f"beside the trainer's {_n(want, 'GPU')} on one node of {cap}", each)
    rollout, batch = _rollout_tp(run), run.prompts * int(run.method.samples)
    fits = [t for t in range(cap - one, 0, -1) if batch % t == 0 and t % rollout == 0]
    if not fits:
        raise SpecError("gpus", run.gpus, f"a node with room for the teachers' pool of {one} (one "
                        f"replica each) and a trainer the batch splits over (prompts x samples = "
                        f"{batch}, a multiple of the rollout TP {rollout}): gpus_per_node >= "
                        f"{one + rollout}, or nodes >= 2 (the teachers on a node of their own)")
    k = (cap - fits[0]) // one
    each = tuple((e, k, t, w) for e, t, w in sized)
    return Pool(fits[0], k * one, 1, k * len(sized), 0, TEACHER_MEMORY, 0, k * one, whys,
                f"carved out of the node's {cap} GPUs: the trainer keeps {fits[0]}, the most that "
                f"prompts x samples = {batch} split over, the teachers {_n(k, 'replica')} each", each)


def rollout_tp(run: RunSpec) -> tuple[int, str]:
    """The student's rollout TP on a node of the trainer's GPUs, sized with the memory the
    colocated rollout is written (MEMORY), and why."""
    return tp(run.model, gpus_per_node(run), memory=MEMORY)


def _rollout_tp(run: RunSpec) -> int:
    """The student's rollout TP, as the field map sizes it, before the trainer's GPUs are known."""
    if run.inference_tp is not None:
        return run.inference_tp
    size = sizes.params(run.model)
    return sizes.serve_gpus(size.total_b, MEMORY) if size else 1


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'s' if count != 1 else ''}"


def epochs(steps: int, prompts: int, rows: int) -> int:
    """trainer.total_epochs that reach `steps`: verl's loader drops the last partial batch, and
    stops at total_training_steps or after total_epochs passes, whichever comes first."""
    per_epoch = rows // prompts
    if per_epoch < 1:
        raise SpecError("prompts", prompts, f"at most the {rows} training rows: verl's loader "
                        "drops a partial batch, so an epoch would hold no step")
    return -(-steps // per_epoch)
