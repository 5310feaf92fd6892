"""The real inference server's rules the `inference` stand-in copies, each as strict as the code it
cites and no stricter (prime-rl 559b447 and the vLLM its lock pins, 0.26). Standard library only:
the stand-in runs in the prime-rl environment, and the tests run these on 127.0.0.1.

    prompt_refusal(n, max_model_len)      # None, or vLLM's message
    tokens_to_generate(n, max_tokens, max_model_len)
    weights_refusal(folder)               # what /update_weights would say of a folder
    adapter_refusal(name, folder, loaded, in_place)
    metrics(running, waiting, tokens, blocks, block)  # the /metrics text the orchestrator parses
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

BLOCK = 16  # vLLM's default KV block size (tokens)


def prompt_refusal(n: int, max_model_len: int | None) -> str | None:
    """Why a token-in prompt of `n` tokens is refused, or None.

    - prime-rl patches vLLM's tokenize-time check to refuse only a prompt longer than
      max_model_len, not prompt + max_tokens (src/prime_rl/inference/patches.py:475-500,
      monkey_patch_tokenize_params_validation, `len(tokens) > self.max_total_tokens`);
    - vLLM's engine then refuses a prompt of exactly max_model_len tokens, which leaves no room
      for the token it must generate (vllm/v1/engine/input_processor.py:423-432,
      `_validate_prompt_len`, the `prompt_len == max_prompt_len` branch; its message): what
      prime-rl's scoring call (max_tokens 1 on a whole sequence, utils/client.py:479-505
      prefill_logprobs) trips on at seq_len = max_model_len.
    """
    if max_model_len is None:
        return None
    if n > max_model_len:
        return (
            f"The prompt is {n} tokens, which exceeds the model's maximum context length of "
            f"{max_model_len} tokens. Please reduce the length of the input prompt."
        )
    if n == max_model_len:
        return (
            f"The decoder prompt (length {n}) plus the number of requested output tokens (at "
            f"least 1) is longer than the maximum model length of {max_model_len}. Make sure "
            "that `max_model_len` is no smaller than the number of text tokens (prompt + "
            "requested output tokens)."
        )
    return None


def tokens_to_generate(n: int, max_tokens: int | None, max_model_len: int | None) -> int:
    """How many tokens the engine may generate after a prompt of `n`: `max_tokens` unset is the
    room left (vllm/entrypoints/serve/utils/api_utils.py:170-190 get_max_tokens:
    max_model_len - input_length), and a
    cap past the context is cut there (prime-rl's patch lets the engine "naturally cap
    generation at max_model_len", patches.py:482)."""
    room = None if max_model_len is None else max_model_len - n
    if max_tokens is None:
        return room if room is not None else 1 << 14
    return max_tokens if room is None else min(max_tokens, room)


def _readable(f: Path) -> str | None:
    """Why a safetensors file cannot be opened (its 8-byte header length and JSON header), or
    None: what safetensors' safe_open reads first."""
    try:
        with open(f, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            if size > f.stat().st_size - 8:
                raise ValueError("header longer than the file")
            json.loads(fh.read(size))
    except (OSError, struct.error, ValueError) as e:
        return f"{f.name} is not a safetensors file ({type(e).__name__})"
    return None


def weights_refusal(folder: str | None) -> str | None:
    """What `/update_weights` (prime-rl's filesystem worker: vLLM's DefaultModelLoader over
    the folder, inference/vllm/worker/filesystem.py:28-54) would fail on, or None: the folder's
    `*.safetensors` (only those named by `model.safetensors.index.json` when it is there:
    vllm/model_executor/model_loader/default_loader.py:128-239 `_prepare_weights`, its
    "Cannot find any model weights";
    weight_utils.filter_duplicate_safetensors_files), each one opened."""
    if folder is None:
        return None  # NCCL / NIXL broadcast: the weights come over the wire
    d = Path(folder)
    if not d.is_dir():
        return f"Cannot find any model weights with `{folder}`"
    index = d / "model.safetensors.index.json"
    if index.is_file():
        try:
            names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (ValueError, KeyError, TypeError):
            return f"{index.name} has no weight_map"
        files = [d / n for n in names]
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            return f"{index.name} names {missing[0]}, which is not in `{folder}`"
    else:
        files = sorted(d.glob("*.safetensors"))
    if not files:
        return f"Cannot find any model weights with `{folder}`"
    return next((why for f in files if (why := _readable(f))), None)


def adapter_refusal(name: str | None, folder: str | None, loaded: bool, in_place: bool) -> str | None:
    """What loading LoRA adapter `name` from `folder` would fail on, or None:

    - a same-name adapter already loaded is refused unless `load_inplace`
      (vllm/entrypoints/openai/models/serving.py:237-258 `_check_load_lora_adapter_request`,
      its message); prime-rl's
      own `/load_lora_adapter` sets it (inference/vllm/server.py:90-117), vLLM's
      `/v1/load_lora_adapter` does not;
    - the folder's `adapter_config.json` is read (vllm/lora/peft_helper.py:83-89
      PEFTHelper.from_local_dir) and needs `r` and `lora_alpha`;
    - its tensors are `adapter_model.safetensors`, `.bin` or `.pt`, else "doesn't contain
      tensors" (prime-rl's patched LoRAModel.from_local_checkpoint, patches.py:339-458).
    """
    if not name or not folder:
        return "Both 'lora_name' and 'lora_path' must be provided."
    if loaded and not in_place:
        return (
            f"The lora adapter '{name}' has already been loaded. If you want to load the "
            "adapter in place, set 'load_inplace' to True."
        )
    d = Path(folder)
    try:
        config = json.loads((d / "adapter_config.json").read_text())
    except (OSError, ValueError):
        return f"Loading lora {name} failed: No adapter found for {folder}"
    if not isinstance(config, dict) or not {"r", "lora_alpha"} <= set(config):
        return f"Loading lora {name} failed: {folder}/adapter_config.json has no r and lora_alpha"
    tensors = d / "adapter_model.safetensors"
    if tensors.is_file():
        return _readable(tensors)
    if (d / "adapter_model.bin").is_file() or (d / "adapter_model.pt").is_file():
        return None
    return f"{folder} doesn't contain tensors"


def metrics(running: int, waiting: int, tokens: int, blocks: int) -> str:
    """The `/metrics` text prime-rl's orchestrator parses (orchestrator/inference_metrics.py:
    `vllm:`-prefixed gauge families, so each needs its `# TYPE` line; `kv_cache_usage_perc`,
    `num_requests_running`, `num_requests_waiting` and the `vllm:cache_config_info` labels
    num_gpu_blocks and block_size, lines 20, 88-110, 400-410). KV usage: the tokens of the requests in
    flight over the blocks advertised."""
    usage = min(1.0, tokens / max(1, blocks * BLOCK))
    lines = []
    for name, value, labels in (
        ("num_requests_running", running, ""),
        ("num_requests_waiting", waiting, ""),
        ("kv_cache_usage_perc", usage, ""),
        ("cache_config_info", 1, f'{{block_size="{BLOCK}",num_gpu_blocks="{blocks}"}}'),
    ):
        lines += [
            f"# TYPE vllm:{name} gauge",
            f'vllm:{name}{{engine="0"}} {value}' if not labels else f"vllm:{name}{labels} {value}",
        ]
    return "\n".join(lines) + "\n"


__all__ = ["adapter_refusal", "metrics", "prompt_refusal", "tokens_to_generate", "weights_refusal"]
