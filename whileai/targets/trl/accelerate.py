"""TRL on several GPUs or machines: an accelerate config (accelerate.yaml) beside config.yaml,
and the `accelerate launch` command for each machine.

The strategy is chosen by rule (STRATEGY states why) from the two TRL documents and ships
templates for (trl/accelerate_configs/fsdp2.yaml, zero3.yaml):
- OPD: DeepSpeed ZeRO-3. DistillationTrainer loads the teacher in every process and shards it
  only under DeepSpeed (`prepare_deepspeed`); under FSDP accelerate's `prepare_model(...,
  evaluation_mode=True)` leaves it whole on every GPU.
- GRPO, OPSD: FSDP2, torch's own sharding (no extra package); GRPO's reference model and SDFT's
  teacher copy are sharded too (`prepare_fsdp`).
- SFT: FSDP2; `trl sft` trains the student alone: the teacher sampled before training, in one
  process of its own (sample.py), so there is no teacher in the training processes.
One process is written out too (`num_processes: 1`, `distributed_type: "NO"`, `gpu_ids: "0"`):
the `trl` CLI always goes through `accelerate launch`, which without a config file starts one
process per visible GPU, and a plain `python train.py` on a host with several GPUs is wrapped in
nn.DataParallel by transformers' Trainer. Its `mixed_precision: "no"` leaves precision to
config.yaml's bf16 (TrainingArguments reads accelerate's setting only when bf16 and fp16 are off).
The file is loaded by accelerate's own loader in the tests (load_config_from_file).
"""

from __future__ import annotations

from typing import Any

from whileai.spec.run import RunSpec
from whileai.targets.compiled import Ignore
from whileai.targets.fieldmap import Drop, Row, To

FILE = "accelerate.yaml"
PORT = 29500  # torch.distributed's default rendezvous port
COMMON: dict[str, Any] = {
    "compute_environment": "LOCAL_MACHINE", "debug": False, "downcast_bf16": "no",
    "enable_cpu_affinity": False, "machine_rank": 0, "main_training_function": "main",
    "mixed_precision": "bf16", "rdzv_backend": "static", "same_network": True, "tpu_env": [],
    "tpu_use_cluster": False, "tpu_use_sudo": False, "use_cpu": False,
}
FSDP2: dict[str, Any] = {"distributed_type": "FSDP", "fsdp_config": {
    "fsdp_activation_checkpointing": False, "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
    "fsdp_cpu_ram_efficient_loading": True, "fsdp_offload_params": False,
    "fsdp_reshard_after_forward": True, "fsdp_state_dict_type": "FULL_STATE_DICT", "fsdp_version": 2}}
ZERO3: dict[str, Any] = {"distributed_type": "DEEPSPEED", "deepspeed_config": {
    "deepspeed_multinode_launcher": "standard", "offload_optimizer_device": "none",
    "offload_param_device": "none", "zero3_init_flag": True, "zero3_save_16bit_model": True,
    "zero_stage": 3}}
STRATEGY = {
    "opd": ("DeepSpeed ZeRO-3", ZERO3, "DistillationTrainer loads the teacher in every process and "
            "shards it only under DeepSpeed (prepare_deepspeed); under FSDP it would sit whole on "
            "every GPU. Needs `pip install deepspeed`"),
    "grpo": ("FSDP2", FSDP2, "torch's own sharding of weights, gradients and optimizer state, no "
             "extra package"),
    "opsd": ("FSDP2", FSDP2, "torch's own sharding of weights, gradients and optimizer state, no "
             "extra package; SDFT's teacher copy is sharded too (prepare_fsdp)"),
    "sft": ("FSDP2", FSDP2, "torch's own sharding of weights, gradients and optimizer state, no "
            "extra package; SFTTrainer holds the student only (the teacher sampled before "
            "training, in sample.py)"),
}


def machines(run: RunSpec) -> int:
    return run.nodes or 1


def processes(run: RunSpec) -> int:
    """Training processes, one per GPU: nodes x gpus_per_node, else gpus, else one."""
    if machines(run) > 1:
        return machines(run) * run.gpus_per_node
    return run.gpus or 1


def distributed(run: RunSpec) -> bool:
    return processes(run) > 1


def strategy(run: RunSpec) -> tuple[str, str]:
    name, _, why = STRATEGY[run.method.type]
    if run.method.type == "grpo":  # GRPOTrainer loads a reference model only at beta > 0, no LoRA
        beta = run.overrides.get("beta", 0.0)
        why += ("; at beta 0 (TRL's default) GRPO loads no reference model" if not beta else
                "; with LoRA the reference is the adapter disabled" if run.lora else
                f"; at beta {beta} GRPO's reference model is sharded too (prepare_fsdp)")
    return name, why


SINGLE: dict[str, Any] = {"distributed_type": "NO", "gpu_ids": "0", "mixed_precision": "no",
                          "num_machines": 1, "num_processes": 1}


def config(run: RunSpec, cpu: bool = False) -> dict[str, Any]:
    """The accelerate config: several processes with their strategy, or exactly one process
    (on GPU 0; cpu: on the CPU)."""
    if not distributed(run):
        return dict(sorted((dict(COMMON) | SINGLE | ({"use_cpu": True} if cpu else {})).items()))
    out = dict(COMMON) | STRATEGY[run.method.type][1]
    out |= {"num_machines": machines(run), "num_processes": processes(run)}
    if machines(run) > 1:
        out["main_process_port"] = PORT
    return dict(sorted(out.items()))


def for_cpu(run: RunSpec) -> tuple[RunSpec, RunSpec, list[Ignore]]:
    """A CPU run is one process: (the spec, the run the field map reads, what is ignored)."""
    if not distributed(run):
        return run, run, []
    why = f"compiled for the CPU (--cpu): one process ({FILE}: num_processes 1, use_cpu)"
    gone = [Ignore(field=f, value=getattr(run, f), reason=why) for f in ("gpus", "nodes")
            if getattr(run, f) is not None]
    return run, run.model_copy(update={"gpus": None, "nodes": None}), gone


_WHERE = f"<{FILE}: "
_ONE = f"one process on one machine ({FILE}: num_processes 1)"
_NO_SERVER = ("TRL generates inside its training processes (transformers' generate, no vLLM "
              "server): there are no inference nodes, replicas or engines")
ROWS: list[Row] = [
    To("gpus", _WHERE + "num_processes>", processes, when=lambda r: machines(r) == 1 and distributed(r),
       note="one training process per GPU; each takes its share of the step's batch"),
    To("gpus", _WHERE + "distributed_type>", lambda r: strategy(r)[0],
       when=lambda r: machines(r) == 1 and distributed(r), note=lambda r: strategy(r)[1]),
    To("nodes", _WHERE + "num_machines>", when=lambda r: r.nodes is not None,
       note=lambda r: "start the command on every machine with its --machine_rank" if machines(r) > 1
       else "one machine"),
    To("gpus_per_node", _WHERE + "num_processes>", processes, when=lambda r: machines(r) > 1,
       note="nodes x gpus_per_node processes, one per GPU"),
    To("gpus_per_node", _WHERE + "distributed_type>", lambda r: strategy(r)[0],
       when=lambda r: machines(r) > 1, note=lambda r: strategy(r)[1]),
    Drop("gpus_per_node", lambda r: "one machine: gpus is the process count" if distributed(r)
         else _ONE, when=lambda r: machines(r) == 1),
    Drop("gpus", lambda r: f"several machines take whole nodes: nodes x gpus_per_node = "
         f"{processes(r)} processes", when=lambda r: machines(r) > 1 and r.gpus is not None),
    Drop("inference_nodes", _NO_SERVER),
    Drop("inference_replicas", _NO_SERVER),
    Drop("inference_tp", _NO_SERVER),
    Drop("nodes_per_fsdp_group", "prime-rl's FSDP islands; accelerate's FSDP and ZeRO-3 shard "
         "over every process"),
    *[Drop(f"slurm.{key}", "TRL's run directory has no SLURM script: run the per-machine command "
           "from your own sbatch (one task per node)")
      for key in ("job_name", "partition", "account", "time", "nodelist", "exclude",
                  "template_path", "project_dir", "pre_run_command", "cleanup_grace_period",
                  "shared_fs")],
]


def commands(run: RunSpec, script: str, where: str = "", env: str = "") -> list[str]:
    """`script` is the TRL command (`trl grpo --config config.yaml`) or `python train.py ...`."""
    rank = ' --machine_rank "$MACHINE_RANK" --main_process_ip "$MAIN_IP"' if machines(run) > 1 else ""
    if script.startswith("python "):
        line = f"accelerate launch --config_file {FILE}{rank} {script.removeprefix('python ')}"
    else:
        line = f"{script} --accelerate_config {FILE}{rank}"
    if machines(run) == 1:
        return [f"{where}{env}{line}"]  # one machine: one process, or one per GPU
    n = machines(run)
    return [f"# on each of the {n} machines: MACHINE_RANK=0..{n - 1} (0 on the main machine), "
            f"MAIN_IP=<the main machine's address>, port {PORT} open between them",
            f"{where}{env}{line}"]


def readme(run: RunSpec, cpu: bool = False) -> str:
    if not distributed(run) and cpu:
        return (f"One process on the CPU, through `accelerate launch` with {FILE} (num_processes 1, "
                "use_cpu): without it accelerate starts one process per visible GPU.")
    if not distributed(run):
        return (f"One process on one GPU (GPU 0; edit gpu_ids in {FILE} for another), through "
                f"`accelerate launch` with {FILE} (num_processes 1): without it accelerate starts "
                "one process per visible GPU. For several GPUs set gpus (or nodes) in the spec and "
                "recompile.")
    name, why = strategy(run)
    where = (f"{machines(run)} machines x {run.gpus_per_node} GPUs" if machines(run) > 1
             else f"{processes(run)} GPUs")
    return (f"{processes(run)} processes on {where} through `accelerate launch` with {FILE}: "
            f"{name}, because {why}. Each optimizer step is split across the processes.")


__all__ = ["FILE", "ROWS", "SINGLE", "STRATEGY", "commands", "config", "distributed", "for_cpu",
           "machines", "processes", "readme", "strategy"]
