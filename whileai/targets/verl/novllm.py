"""verl's LoRA-rank check where vLLM is not installed (a CPU machine running verl's own check).

validate_config checks a LoRA rank through verl's vllm_rollout.utils (utils/config.py:210-212), whose
package imports vLLM; without vLLM, `without_vllm()` lends that one function for the check, as
verl's own fallback has it. Stdlib only.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator


@contextlib.contextmanager
def without_vllm() -> Iterator[None]:
    """validate_config checks a LoRA rank through verl's vllm_rollout.utils (utils/config.py:210-212),
    which imports vLLM; on a machine without vLLM (a CPU check) the function runs as verl's own
    fallback has it (workers/rollout/vllm_rollout/utils.py:83-101: vLLM's MaxLoRARanks, else
    1, 8, 16, 32, 64, 128, 256, 320, 512)."""
    import sys
    import types

    name = "verl.workers.rollout.vllm_rollout"
    if importlib.util.find_spec("vllm") is not None or name in sys.modules:
        yield
        return
    ranks = (1, 8, 16, 32, 64, 128, 256, 320, 512)

    def get_vllm_max_lora_rank(lora_rank: int) -> int:
        assert lora_rank > 0, f"lora_rank must be greater than 0, get {lora_rank}"
        if lora_rank > ranks[-1]:
            raise ValueError(f"lora_rank must be less than or equal to {ranks[-1]}, but got {lora_rank}")
        return next(r for r in ranks if lora_rank <= r)

    package, utils = types.ModuleType(name), types.ModuleType(f"{name}.utils")
    package.__path__ = []
    utils.get_vllm_max_lora_rank = get_vllm_max_lora_rank  # type: ignore[attr-defined]
    sys.modules[name], sys.modules[f"{name}.utils"] = package, utils
    try:
        yield
    finally:
        sys.modules.pop(name, None)
        sys.modules.pop(f"{name}.utils", None)
