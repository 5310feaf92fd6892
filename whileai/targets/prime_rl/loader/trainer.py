"""The trainer's load-time rules (prime-rl 559b447 configs/trainer.py): its ModelConfig and
TrainerConfig validators, which `rl` (at `trainer`), `trainer` (the whole file) and `sft`
(its own model, optimizer and scheduler) all run.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from whileai.targets.prime_rl.loader.view import Found, RuleSet, View

MODEL = RuleSet("trainer ModelConfig")
TRAINER = RuleSet("TrainerConfig and SFTConfig alike")
TRAINER_ONLY = RuleSet("TrainerConfig only")
STEPS = RuleSet("scheduler and traces against max_steps")  # TrainerConfig and SFTConfig alike
RESUME = RuleSet("ResumeConfig")
CUSTOM = ("custom", "auto")


@MODEL("trust-remote-code-impl", "trainer.py:266")
def _trust(m: View) -> Found:
    if m["trust_remote_code"] is True and m["impl"] not in ("hf", "auto"):
        return "impl", "trust_remote_code needs impl 'hf' or 'auto'"
    return None


@MODEL("vlm-impl", "trainer.py:274")
def _vlm_impl(m: View) -> Found:
    if m.present("vlm") and m["impl"] != "custom":
        return "impl", "VLM training needs impl = 'custom'"
    return None


@MODEL("vlm-cp-ulysses", "trainer.py:280")
def _vlm_cp(m: View) -> Found:
    if m.present("vlm") and m.get("cp", int, 1) > 1 and m["cp_style"] != "ulysses":
        return "cp_style", "a VLM with context parallelism (cp > 1) needs cp_style = 'ulysses'"
    return None


@MODEL("cp-attention", "trainer.py:286")
def _cp(m: View) -> Found:
    if m.get("cp", int, 1) <= 1:
        return None
    if m["attn"] not in ("flash_attention_2", "flash_attention_3", "flash_attention_4", "auto"):
        return "attn", "context parallelism (cp > 1) needs flash attention 2, 3 or 4 (or 'auto')"
    if m["impl"] not in CUSTOM:
        return "impl", "context parallelism (cp > 1) needs impl 'custom' or 'auto'"
    return None


@MODEL("selective-ac-targets", "trainer.py:41")
def _ac_targets(m: View) -> Found:
    if m.present("ac") and m["ac.mode"] == "selective" and m["ac.targets"] == []:
        return "ac.targets", "selective activation checkpointing needs at least one target"
    return None


@MODEL("selective-ac-impl", "trainer.py:304")
def _ac_impl(m: View) -> Found:
    ac_on = m.present("ac") or m.present("ac_offloading")  # offloading re-enables ac (:297)
    if ac_on and m["ac.mode"] == "selective" and m["impl"] not in CUSTOM:
        return "ac.mode", "selective activation checkpointing needs impl 'custom' or 'auto'"
    return None


@MODEL("cpu-offload-exclusive", "trainer.py:310")
def _offload(m: View) -> Found:
    full = m["full_offload"] not in (None, False)
    if m["fsdp_cpu_offload"] is True and (m["optim_cpu_offload"] is True or full):
        return "fsdp_cpu_offload", "fsdp_cpu_offload cannot be combined with optimizer CPU offload"
    if m["optim_cpu_offload"] is True and full:
        return "full_offload", ("full_offload needs optim_cpu_offload = false (it defaults to "
                                "true; the two cannot both be on)")
    return None


@MODEL("flash-attention-4-impl", "trainer.py:321")
def _fa4(m: View) -> Found:
    if m["attn"] in ("flash_attention_4", "auto") and m["impl"] not in CUSTOM:
        return "attn", (f"attn {m['attn']!r} (auto may pick flash attention 4) needs impl "
                        "'custom' or 'auto'; set attn explicitly for impl 'hf'")
    return None


@MODEL("quantization-impl", "trainer.py:328")
def _quant(m: View) -> Found:
    if m.present("quantization") and m["impl"] not in CUSTOM:
        return "quantization", "quantized training needs impl 'custom' or 'auto'"
    return None


@MODEL("ep-comm-backend", "trainer.py:334")
def _ep_backend(m: View) -> Found:
    ep = m["ep"]
    if m["ep_comm_backend"] != "torch" and isinstance(ep, int) and ep <= 1:
        return "ep_comm_backend", f"ep_comm_backend {m['ep_comm_backend']!r} needs ep > 1"
    return None


@MODEL("mxfp8-torch-backend", "trainer.py:344")
def _mxfp8(m: View) -> Found:
    if m["quantization.type"] == "mxfp8" and m.present("quantization") and m["ep_comm_backend"] != "torch":
        return "quantization", "MXFP8 quantization needs ep_comm_backend = 'torch'"
    return None


@TRAINER("full-offload-optimizer", "trainer.py:676")
def _full_optim(t: View) -> Found:
    if t["model.full_offload"] not in (None, False) and t["optim.type"] not in ("adamw", "sign_sgd"):
        return "optim.type", "full_offload works only with the adamw or sign_sgd optimizer"
    return None


@TRAINER("vlm-bfloat16", "trainer.py:693")
def _vlm_dtype(t: View) -> Found:
    if t.present("model.vlm") and (t["model.optimization_dtype"] != "bfloat16"
                                   or t["model.reduce_dtype"] != "bfloat16"):
        return "model", "a VLM needs optimization_dtype and reduce_dtype 'bfloat16'"
    return None


@TRAINER("vlm-unfrozen-lora", "trainer.py:703")
def _vlm_lora(t: View) -> Found:
    if t.present("model.vlm") and t["model.vlm.freeze_vision_encoder"] is False and t.present("model.lora"):
        return "model.vlm.freeze_vision_encoder", "an unfrozen vision encoder cannot train with LoRA"
    return None


@TRAINER("muon-fsdp-offload", "trainer.py:728")
def _muon(t: View) -> Found:
    if t["optim.type"] == "muon" and t["model.fsdp_cpu_offload"] is True:
        return "optim.type", "the muon optimizer does not support fsdp_cpu_offload"
    return None


@TRAINER_ONLY("lora-in-memory-broadcast", "trainer.py:734")
def _lora_broadcast(t: View) -> Found:
    if t.present("model.lora") and t["weight_broadcast.type"] in ("nccl", "nixl"):
        return "weight_broadcast.type", ("LoRA needs filesystem weight transfer (in-memory "
                                         "broadcast does not support LoRA)")
    return None


@TRAINER("ep-impl", "trainer.py:748")
def _ep_impl(t: View) -> Found:
    ep = t["model.ep"]
    if ep not in (1, "auto") and t["model.impl"] not in CUSTOM:
        return "model.ep", "expert parallelism needs impl 'custom' or 'auto'"
    return None


@TRAINER_ONLY("router-replay-impl", "trainer.py:755")
def _replay(t: View) -> Found:
    if t["enable_router_replay"] is True and t["model.impl"] not in CUSTOM:
        return "enable_router_replay", "router replay needs impl 'custom' or 'auto'"
    return None


@STEPS("trace-steps", "trainer.py:712; sft.py:553")
def _trace(t: View) -> Found:
    if not t["trace_path"]:
        return None
    steps = t["max_steps"]
    if steps is None:
        return "max_steps", "tracing (trace_path) needs max_steps"
    if isinstance(steps, int) and steps >= 10:
        return "max_steps", f"tracing (trace_path) allows fewer than 10 steps, not {steps}"
    return None


@STEPS("scheduler-steps", "trainer.py:393 validate_scheduler")
def _scheduler(t: View) -> Found:
    kind, steps = t["scheduler.type"], t["max_steps"]
    warmup = t.get("scheduler.warmup_steps", int, 0)
    if kind == "linear":
        decay = t.get("scheduler.decay_steps", int, 0)
        if warmup == 0 and decay == 0:
            return "scheduler", "a linear scheduler needs warmup_steps or decay_steps > 0"
        if decay > 0 and steps is None:
            return "max_steps", "a linear scheduler with decay_steps > 0 needs max_steps"
        if decay > 0 and isinstance(steps, int) and warmup + decay > steps:
            return "scheduler", f"warmup_steps + decay_steps ({warmup + decay}) exceed max_steps ({steps})"
    if kind == "cosine":
        if steps is None:
            return "max_steps", "a cosine scheduler needs max_steps"
        if isinstance(steps, int) and warmup >= steps:
            return "scheduler.warmup_steps", f"warmup_steps ({warmup}) must be below max_steps ({steps})"
    return None


@RESUME("resume-step-or-dir", "shared.py:58")
def _resume(r: View) -> Found:
    directory = r["dir"]
    if r["step"] is not None and directory is not None:
        return "dir", "resume.step and resume.dir exclude each other (the step is the directory's)"
    if isinstance(directory, str) and not re.fullmatch(r"step_\d+", PurePosixPath(directory).name):
        return "dir", f"{directory!r} must be a checkpoint step directory (.../step_<N>)"
    return None


def protected_env_vars(view: View, rel: str = "env_vars") -> Found:
    """shared.py:27: launcher-managed variables cannot be set in any env_vars table."""
    table = view[rel]
    hit = sorted(PROTECTED & set(table)) if isinstance(table, dict) else []
    if hit:
        return rel, f"cannot set launcher-managed variables {hit} (the launcher sets them)"
    return None


PROTECTED = frozenset({"CUDA_VISIBLE_DEVICES", "PRL_RUN_ID", "PRL_RUN_NAME", "WANDB_RUN_ID",
                       "WANDB_SHARED_MODE", "WANDB_SHARED_LABEL", "WANDB_SHARED_PRIMARY",
                       "WANDB_SHARED_FINISHER"})
TRAINER_ONLY("env-vars-protected", "shared.py:27")(protected_env_vars)
