"""whileai's rules on GPUs and batch sizes where verl 0.9.1 is lax (see whileai.targets.verl.lax).

Each takes one job (whileai.targets.verl.job.Job) and returns its refusals, with the verl source
it mirrors: rollout TP against the GPUs, memory utilization in range, greedy sampling with n > 1,
the train / mini / micro batch arithmetic (the use_dynamic_bsz path verl skips included), and the
teacher pool of on-policy distillation.
"""

from __future__ import annotations

from whileai.targets.verl.job import Job, Refusal
from whileai.targets.verl.values import parse_value
from whileai.words import counted

_ROLLOUT = "actor_rollout_ref.rollout."
_ACTOR = "actor_rollout_ref.actor."


def _pool(run: Job, prefix: str = "trainer.") -> tuple[int, int] | None:
    got = run.ints(prefix + "n_gpus_per_node", prefix + "nnodes")
    return (got[0], got[1]) if got else None


def tensor_parallel(run: Job) -> list[Refusal]:
    """rollout-tp: verl checks it only when the rollout workers start (engine_workers.py:659)."""
    gpus, world, tp = _pool(run), run.world(_ROLLOUT), run.size(_ROLLOUT + "tensor_model_parallel_size")
    if run.job == "sft_trainer" or not gpus or not world or not tp:
        return []
    (per_node, nodes), key = gpus, _ROLLOUT + "tensor_model_parallel_size"
    fails = "lets it through: the rollout fails when its workers start (workers/engine_workers.py:659)"
    gpus_of = f"{per_node} GPU" + "s" * (per_node != 1)
    if (per_node * nodes) % world:
        said = f"TP {tp} is more than a node's {gpus_of}" if tp > per_node and nodes == 1 else \
            f"TP x DP x PP = {world} does not divide the {per_node * nodes} GPUs ({per_node} x {nodes} nodes)"
        return [run.refuse(key, f"rollout {said}", f"TP x DP x PP dividing {per_node * nodes}, TP at most "
                           f"{per_node} (verl #1191, #1785)", fails, "rollout-tp")]
    if tp > per_node:  # it divides the GPUs, but each replica spans nodes
        return [run.refuse(key, f"rollout TP {tp} spans nodes of {gpus_of}: every layer's all-reduce "
                           "crosses the network", f"a TP that divides {per_node} (more replicas instead: "
                           "verl #1785)", "lets it through (no config check reads the rollout's TP)",
                           "rollout-tp")]
    return []


def memory(run: Job) -> list[Refusal]:
    """memory-utilization: no verl config check reads the range (RolloutConfig takes any float)."""
    out = []
    for key, (written, raw) in run.set.items():
        value = parse_value(raw)
        if key.endswith("gpu_memory_utilization") and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and not 0 < value <= 1:
            out.append(Refusal(written, raw, f"{value} is not a fraction of a GPU's memory",
                               "a fraction in (0, 1]; colocated with the actor, 0.4-0.7 (verl #2588, #855)",
                               "lets it through: the inference engine meets it when the rollout starts",
                               "memory-utilization"))
    return out


def greedy(run: Job) -> list[Refusal]:
    """greedy-samples: verl asserts it in main_generation_server only (lines 130-133)."""
    n, temperature, sample = (run.get(_ROLLOUT + k) for k in ("n", "temperature", "do_sample"))
    if run.job == "sft_trainer" or type(n) is not int or n <= 1:
        return []
    greedy = "temperature" if temperature in (0, 0.0) and temperature is not False else \
        "do_sample" if sample is False else ""
    if not greedy:
        return []
    verl = ("refuses it (When temperature=0, n_samples must be 1: main_generation_server.py:132)"
            if run.job == "main_generation_server" and greedy == "temperature" else
            "refuses it, for validation sampling only (utils/config.py:202)" if greedy == "temperature"
            and run.get(_ROLLOUT + "val_kwargs.do_sample") is True else
            "lets it through: all n samples of a prompt are the same answer, so GRPO's advantages are 0")
    return [run.refuse(_ROLLOUT + greedy, f"greedy sampling ({greedy}) with n = {n} samples a prompt",
                    "temperature > 0 and do_sample=True when n > 1", verl, "greedy-samples")]


def batches(run: Job) -> list[Refusal]:
    """batch-gpus, mini-batch: what validate_config checks, and the dynamic-batch path it skips."""
    gpus = _pool(run)
    got = run.ints("data.train_batch_size", _ROLLOUT + "n", _ACTOR + "ppo_mini_batch_size")
    if run.job != "main_ppo" or not gpus or not got or min(got) < 1:
        return []
    (train, n, mini), total = got, gpus[0] * gpus[1]
    dynamic = run.get(_ACTOR + "use_dynamic_bsz") is True
    if (train * n) % total:
        verl = ("lets it through: use_dynamic_bsz=True skips the check (utils/config.py:103)" if dynamic
                else "refuses it at validate_config (utils/config.py:124)")
        return [run.refuse("data.train_batch_size", f"train_batch_size x n = {train} x {n} = "
                        f"{train * n} samples do not split over {total} GPUs", f"train_batch_size x n "
                        f"divisible by {total} (verl #473, #606, #1004)", verl, "batch-gpus")]
    allowed = "ppo_mini_batch_size dividing train_batch_size (both count prompts; verl #1524, #3095)"
    if mini > train or train % mini:
        verl = ("refuses it at validate_config (workers/config/actor.py:225)" if mini > train and
                not dynamic else "lets it through: workers/config/actor.py:225 checks only mini <= train"
                + (", and not under use_dynamic_bsz" if dynamic else ""))
        return [run.refuse(_ACTOR + "ppo_mini_batch_size", f"{train} prompts a step do not split "
                        f"into mini batches of {mini}", allowed, verl, "mini-batch")]
    if (mini * n) % total:
        return [run.refuse(_ACTOR + "ppo_mini_batch_size", f"a mini batch of {mini} x {n} samples "
                        f"does not split over {total} GPUs", f"ppo_mini_batch_size x n divisible by {total}",
                        "lets it through: no config check splits the mini batch", "mini-batch")]
    micro = run.get(_ACTOR + "ppo_micro_batch_size_per_gpu")
    if not dynamic and type(micro) is int and micro > 0 and (mini * n // total) % micro:
        return [run.refuse(_ACTOR + "ppo_micro_batch_size_per_gpu", f"a GPU's share of a mini batch "
                        f"({counted(mini * n // total, 'samples')}) does not split into micro batches of "
                        f"{micro}",
                        f"a divisor of {mini * n // total} (verl #833, #382, #559)",
                        "lets it through: validate_config checks the deprecated global micro batch only "
                        "(workers/config/actor.py:233); the first update fails (data size must be "
                        "divisible by ... micro_batch_size_per_gpu: workers/engine/utils.py:125)",
                        "mini-batch")]
    return []


def sft_batches(run: Job) -> list[Refusal]:
    """sft-gpus: the SFT trainer splits train_batch_size over torchrun's ranks and floors it."""
    if run.job != "sft_trainer":
        return []
    nodes_set = run.ints("trainer.n_gpus_per_node", "trainer.nnodes")
    if run.launcher and "trainer.n_gpus_per_node" in run.set and nodes_set \
            and (nodes_set[0], nodes_set[1]) != run.launcher:
        per_node, nodes = run.launcher
        return [run.refuse("trainer.n_gpus_per_node", f"torchrun starts {per_node} x {nodes} GPUs, and "
                           "the SFT trainer uses those", f"{per_node} (torchrun's --nproc_per_node), "
                           "or no such key", "lets it through: the SFT trainer never reads "
                           "trainer.n_gpus_per_node or trainer.nnodes", "sft-gpus")]
    total = run.launcher[0] * run.launcher[1] if run.launcher else None
    train, sp = run.get("data.train_batch_size"), run.size("engine.ulysses_sequence_parallel_size")
    if not total or type(train) is not int or not sp or total % sp:
        return []
    ranks = total // sp
    if train % ranks:
        return [run.refuse("data.train_batch_size", f"{train} samples a step over {ranks} data-parallel "
                           f"ranks: each takes {train // ranks}, {train % ranks} are dropped",
                           f"a multiple of {ranks}", "lets it through: each rank takes "
                           "train_batch_size // ranks (trainer/sft_trainer.py:241)", "sft-gpus")]
    return []


def dropped(run: Job) -> list[Refusal]:
    """teacher-dropped: a `teacher_model` key set beside a named teacher; verl pops the default
    entry when the dict holds another (workers/config/distillation.py:309-310), so the run keeps
    only the named teachers and the rows keyed to teacher_model find none."""
    named = [n for n in run.teachers() if n != "teacher_model"]
    at = "distillation.teacher_models.teacher_model."
    mine = sorted((k for k in run.set if k.startswith(at)),
                  key=lambda k: (k not in (at + "key", at + "model_path"), k))  # its name first
    if run.job != "main_ppo" or run.get("distillation.enabled") is not True or not named or not mine \
            or teachers(run):  # the pool then misses the dropped teacher: verl refuses the sum itself
        return []
    return [run.refuse(mine[0], f"teacher_model set beside the named teacher{'s' * (len(named) > 1)} "
                       f"{', '.join(named)}: verl drops teacher_model then, keeping only "
                       f"{', '.join(named)}", "every teacher under a name of its own (teacher_1, "
                       "teacher_2, ...) with its key, or teacher_model alone",
                       "lets it through: it pops teacher_model when another teacher is named "
                       "(workers/config/distillation.py:309-310; its YAML's comment above "
                       "teacher_model)", "teacher-dropped")]


def teachers(run: Job) -> list[Refusal]:
    """teacher-pool: verl checks the sum for several teachers and resets one teacher's count."""
    gpus = _pool(run, "distillation.")
    if run.job != "main_ppo" or run.get("distillation.enabled") is not True or not gpus:
        return []
    pool, sizes, names = gpus[0] * gpus[1], [], run.teachers()
    for name in names:
        at = f"distillation.teacher_models.{name}."
        replicas, world = run.get(at + "num_replicas"), run.world(at + "inference.")
        if type(replicas) is not int or not world:
            return []
        sizes.append((at, replicas, world))
    if names == ["teacher_model"]:  # one teacher: verl fills the pool with it
        at, replicas, world = sizes[0]
        if pool % world:
            return [run.refuse(at + "inference.tensor_model_parallel_size", f"a teacher replica of "
                               f"{world} GPUs does not divide the teacher pool of {pool}", f"TP x DP x PP "
                               f"dividing {pool}", "refuses it at the distillation config "
                               "(workers/config/distillation.py:303)", "teacher-pool")]
        if at + "num_replicas" in run.set and replicas and replicas * world != pool:
            return [run.refuse(at + "num_replicas", f"{replicas} replicas x {world} GPUs each = "
                               f"{replicas * world} is not the teacher pool of {pool} GPUs",
                               f"{pool // world} (the pool / the replica's TP x DP x PP)",
                               "lets it through: with one teacher verl sets num_replicas to pool / TP "
                               "without a word (workers/config/distillation.py:306)", "teacher-pool")]
        return []
    total = sum(r * w for _, r, w in sizes)
    if total != pool:
        return [run.refuse(sizes[0][0] + "num_replicas", f"the teachers' num_replicas x GPUs sum to "
                           f"{total}, not the teacher pool of {pool}", f"a sum of {pool}", "refuses it at "
                           "the distillation config (workers/config/distillation.py:284)", "teacher-pool")]
    return []
