"""Runs that between them set every spec field: the field-map docs (scripts/gen_docs.py) and the
schema and catalogue tests compile these. Fixture data of this repository (the own-data runs read
examples/own-data/tasks.jsonl from the checkout), so it lives with the scripts, not in the package.

    from sample_runs import sample_runs   # with scripts/ on sys.path
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whileai.spec.run import RunSpec

_TEACHER = "vllm:PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://localhost:8001/v1"
_REMOTE = {"url": "http://teacher.internal:8001/v1", "model": "Qwen/Qwen3-8B", "api_key_env": "TEACHER_KEY"}
_CLUSTER = {"url": "http://teacher-node:8001/v1", "model": "Qwen/Qwen3-32B"}
_SLURM = {"job_name": "grpo-32b", "partition": "gpu", "account": "team", "time": "2-00:00:00",
          "nodelist": "gpu[01-04]", "exclude": "gpu09", "template_path": "my_rl.sbatch.j2",
          "project_dir": "/shared/prime-rl", "pre_run_command": "echo start",
          "cleanup_grace_period": 600, "shared_fs": True}
_MONITOR = {"project": "whileai", "entity": "team", "name": "arm", "group": "pair-1", "tags": ["a"]}


_OWN_DATA = str(Path(__file__).resolve().parents[1] / "examples" / "own-data" / "tasks.jsonl")


def sample_runs() -> dict[str, RunSpec]:
    """Runs that between them set every spec field (all methods, LoRA and full weights, W&B
    monitor, eval set, unset and off, checkpoints, tasksets beyond reverse-text with their
    arguments and roles, several nodes on SLURM, SFT, a two-stage run): the catalogue checks and
    the field-map docs
    compile these."""
    base = {"taskset": "reverse-text", "model": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"}
    opd = {"type": "opd", "teacher": _TEACHER}
    runs: dict[str, dict[str, Any]] = {
        "opd-lora": {"method": opd | {"learning_rate": 2e-4}, "monitor": _MONITOR, "gpus": 4,
                     "inspect": {"token_export": True},
                     "inference_gpus": 1, "eval": {"interval": 10, "examples": 64},
                     "accept": {"needs-grpo-arm": "the GRPO arm runs beside it"}},
        "opd-full": {"method": {"type": "opd", "divergence": "forward_kl", "top_k": 16, "teacher": _REMOTE},
                     "lora": False},
        "opsd-lora": {"method": {"type": "opsd"}, "monitor": {"project": "whileai"},
                      "accept": {"opsd-small-model": "a 0.6B demo on purpose"}},
        "opsd-full-live": {"method": {"type": "opsd", "anchor": "live", "divergence": "jsd"}, "lora": False},
        "opsd-initial": {"method": {"type": "opsd", "anchor": "initial", "samples": 2}},
        "grpo-lora": {"method": {"type": "grpo"}, "monitor": _MONITOR | {"tags": []}},
        "grpo-full": {"method": {"type": "grpo", "samples": 4, "temperature": 0.8}, "lora": False,
                      "seed": 7, "output_dir": "runs/grpo"},
        "grpo-own-data": {"method": {"type": "grpo", "samples": 4}, "data": _OWN_DATA,
                          "reward": "rewards.contains_answer", "ratio": 1.5},
        "grpo-nodes": {"method": {"type": "grpo"}, "model": "Qwen/Qwen3-32B", "lora": False,
                       "nodes": 4, "inference_nodes": 2, "inference_replicas": 1,
                       "nodes_per_fsdp_group": 1, "output_dir": "/shared/runs", "slurm": _SLURM},
        "opd-nodes": {"method": {"type": "opd", "teacher": _CLUSTER}, "model": "Qwen/Qwen3-8B",
                      "nodes": 2, "gpus": 16, "gpus_per_node": 8, "inference_tp": 1,
                      "output_dir": "/shared/runs", "slurm": {"partition": "gpu"}},
        # other tasksets (prime-rl reads them; TRL trains from the data file)
        "opd-gsm8k": {"taskset": "gsm8k", "model": "Qwen/Qwen3-0.6B", "method": opd,
                      "data": _OWN_DATA, "eval": {"examples": -1},
                      "checkpoint": {"interval": 20, "keep_last": 2}},
        "grpo-alphabet-sort": {"taskset": "alphabet-sort", "model": "Qwen/Qwen3-0.6B",
                               "method": {"type": "grpo"}, "data": _OWN_DATA,
                               "reward": "rewards.contains_answer",
                               "taskset_args": {"min_turns": 3, "max_turns": 5},
                               "eval": {"enabled": False}, "checkpoint": {"enabled": False}},
        "grpo-own-env": {"taskset": "my-org/my-env@0.1", "roles": ["player"], "method": {"type": "grpo"},
                         "data": _OWN_DATA, "reward": "rewards.contains_answer",
                         "taskset_args": {"level": 2},
                         "eval": {"taskset": "gsm8k", "taskset_args": {"split": "test"}}},
        "sft-lora": {"method": {"type": "sft", "teacher": _TEACHER}},
        "sft-full": {"method": {"type": "sft", "teacher": _REMOTE, "samples": 2, "temperature": 0.7,
                                "max_tokens": 1024, "learning_rate": 1e-5}, "lora": False},
        "sft-then-opd": {"method": {"type": "sft", "teacher": _TEACHER, "max_tokens": 1024},
                         "lora": False, "then": {"method": opd, "steps": 50, "prompts": 32,
                                                 "lora": True, "lora_rank": 64}},
        "sft-nodes": {"method": {"type": "sft", "teacher": _CLUSTER}, "model": "Qwen/Qwen3-8B",
                      "lora": False, "nodes": 2, "gpus_per_node": 8, "output_dir": "/shared/runs",
                      "slurm": {"partition": "gpu"}},
        # a mixture (prime-rl; TRL refuses it): every source field, a method of its own and none
        "grpo-opd-mixture": {"method": {"type": "grpo", "samples": 8}, "ratio": 2.0, "lora": False,
                             "sources": [
                                 {"taskset": "gsm8k", "taskset_args": {"split": "train"}, "ratio": 1.0,
                                  "name": "math-opd", "method": opd, "eval": True},
                                 {"taskset": "my-org/my-env@0.1", "roles": ["player"],
                                  "taskset_args": {"level": 2}, "eval": False}]},
        # OPD with the task reward beside the teacher (verl; prime-rl and TRL refuse it)
        "opd-task-reward": {"method": opd | {"task_reward_kl_coef": 0.5}},
        # a teacher per source (verl: a teacher_models entry each, keyed by data_source; prime-rl:
        # an algo table each, refusing the source's own data and reward; TRL refuses it)
        "opd-two-teachers": {"method": opd, "sources": [
            {"taskset": "my-org/my-env@0.1", "roles": ["player"], "taskset_args": {"level": 2},
             "name": "mine", "data": _OWN_DATA,
             "reward": "rewards.contains_answer", "method": {"type": "opd", "teacher": "vllm:Qwen/Qwen3-1.7B@http://localhost:8002/v1"}}]},
    }
    return {name: RunSpec.model_validate(base | fields) for name, fields in runs.items()}


def for_backend(run: RunSpec, backend: str) -> RunSpec | None:
    """The run as that backend takes it: prime-rl refuses `data` and `reward` (it trains on the
    taskset package's rows and rubric), so its copy leaves them out, or is None where the taskset
    is only a label of the data; prime-rl refuses a divergence but reverse KL (its only OPD/OPSD
    loss), so its copy trains reverse KL; TRL takes the run whole. Only verl trains OPD on the
    task reward beside the teacher: the others' copies leave task_reward_kl_coef out."""
    if backend != "verl" and getattr(run.method, "task_reward_kl_coef", None) is not None:
        method = run.method.model_copy(update={"task_reward_kl_coef": None})
        run = run.model_copy(update={"method": method})
    if backend != "prime-rl":
        return run
    run = reverse_kl(run)
    own = [i for i, s in enumerate(run.sources) if s.data is not None or s.reward is not None]
    if own:  # a source's own tasks: refused as the run's are
        run = run.model_copy(update={"sources": [s.model_copy(update={"data": None, "reward": None})
                                                 for s in run.sources]})
    if run.data is None and run.reward is None:
        return run
    try:
        return RunSpec.model_validate(run.model_dump(exclude={"data", "reward"}, exclude_unset=True))
    except ValueError:  # pydantic's ValidationError: a label taskset is no prime-rl taskset
        return None


def reverse_kl(run: RunSpec) -> RunSpec:
    """The run with every method's divergence reverse KL (its own, a second stage's, a source's)."""
    def kl(m: Any) -> Any:
        return m.model_copy(update={"divergence": "reverse_kl"}) if hasattr(m, "divergence") else m
    then = run.then.model_copy(update={"method": kl(run.then.method)}) if run.then else None
    return run.model_copy(update={"method": kl(run.method), "then": then, "sources": [
        s.model_copy(update={"method": kl(s.method)}) for s in run.sources]})
