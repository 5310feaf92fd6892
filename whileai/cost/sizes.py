"""Model sizes and the GPUs a model needs to be served, from its name or a small table.

    params("Qwen/Qwen3-30B-A3B")   # Size(total_b=30.0, active_b=3.0, source="the name")
    params("my-org/my-finetune")   # None: unknown, and every caller says so
    serve_gpus(32.0)               # 2: bf16 weights plus KV headroom, rounded up to a power of two

The name is read first for the total ('32B') and, for mixture-of-experts models, the active
parameters ('A3B'); models whose names carry no size come from TABLE, each row with its source.
Nothing is guessed: an unknown size is None. The GPU assumptions are stated once, here, and
printed by the reports and docs/cost.md.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

GPU = "NVIDIA H100 SXM 80 GB"
GPU_MEMORY_GB = 80.0  # H100 SXM datasheet
PEAK_TFLOPS = 989.0  # dense BF16 tensor-core peak, H100 SXM datasheet (1,979 is with sparsity)
BYTES_PER_PARAM = 2  # bf16 weights
KV_HEADROOM = 0.2  # room for the KV cache and activations: a fifth of the weights (whileai)
MEMORY_UTILIZATION = 0.9  # vLLM's default gpu_memory_utilization
SERVE_FORMULA = (f"GPUs = ceil({BYTES_PER_PARAM} bytes x params x (1 + {KV_HEADROOM}) / "
                 f"({GPU_MEMORY_GB:g} GB x {MEMORY_UTILIZATION})), rounded up to a power of two "
                 "(tensor parallelism must divide the attention heads)")

# lowercased model-name prefix (after the owner) → (total B, active B or None, source)
TABLE: dict[str, tuple[float, float | None, str]] = {
    "deepseek-v3": (671.0, 37.0, "DeepSeek-V3 model card: 671B total, 37B activated"),
    "deepseek-r1": (671.0, 37.0, "DeepSeek-R1 model card: 671B total, 37B activated"),
    "kimi-k2": (1000.0, 32.0, "Kimi K2 model card: 1T total, 32B activated"),
    "glm-4.5-air": (106.0, 12.0, "GLM-4.5 model card: Air 106B total, 12B active"),
    "glm-4.5": (355.0, 32.0, "GLM-4.5 model card: 355B total, 32B active"),
    "minimax-m2": (230.0, 10.0, "MiniMax-M2 model card: 230B total, 10B active"),
    "gpt-oss-120b": (117.0, 5.1, "gpt-oss model card: 117B total, 5.1B active"),
    "gpt-oss-20b": (21.0, 3.6, "gpt-oss model card: 21B total, 3.6B active"),
    "mixtral-8x7b": (46.7, 12.9, "Mixtral of Experts (Jiang 2024, arXiv:2401.04088): 47B, 13B active"),
    "mixtral-8x22b": (141.0, 39.0, "Mistral Mixtral 8x22B release: 141B total, 39B active"),
}
_TOTAL = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)[Bb](?![A-Za-z0-9])")
_ACTIVE = re.compile(r"(?<![A-Za-z0-9.])A(\d+(?:\.\d+)?)[Bb](?![A-Za-z0-9])")


def size_b(model: str) -> float | None:
    """Parameter count in billions from a model name ('Qwen3-0.6B' → 0.6; 'A3B' ignored)."""
    hits = _TOTAL.findall(model.split("/")[-1])
    return float(hits[0]) if hits else None


class Size(NamedTuple):
    total_b: float  # parameters held in memory, billions
    active_b: float  # parameters each token passes through (= total for dense models)
    source: str

    def text(self) -> str:
        moe = f", {self.active_b:g}B active" if self.active_b != self.total_b else ""
        return f"{self.total_b:g}B parameters{moe} ({self.source})"


def params(model: str) -> Size | None:
    """The model's size from the table (by name prefix), else from its name; None if unknown."""
    base = model.rstrip("/").split("/")[-1].lower()
    hits = [k for k in TABLE if base.startswith(k) and base[len(k):][:1] in ("", "-", "_", ".")]
    named = size_b(model)
    # a size in the name wins over a family row (DeepSeek-R1-Distill-Qwen-1.5B is 1.5B, not
    # DeepSeek-R1's 671B), unless the row names that very size (gpt-oss-120b: 117B exactly)
    key = max(hits, key=len) if hits else None
    if key is not None and (named is None or f"{named:g}b" in key):
        total, active, source = TABLE[key]
        return Size(total, active if active is not None else total, source)
    if named is None:
        return None
    m = _ACTIVE.search(model.rstrip("/").split("/")[-1])
    active = float(m.group(1)) if m else named
    return Size(named, min(active, named), "the model's name")


def weights_gb(total_b: float) -> float:
    return BYTES_PER_PARAM * total_b


def serve_gpus(total_b: float, memory: float = MEMORY_UTILIZATION) -> int:
    """GPUs one server (one tensor-parallel group) needs for a model of `total_b` billion
    parameters: SERVE_FORMULA, with `memory` the share of each GPU the server is given (a
    target that writes another gpu_memory_utilization sizes with the one it writes)."""
    need = math.ceil(weights_gb(total_b) * (1 + KV_HEADROOM) / (GPU_MEMORY_GB * memory))
    return 1 << max(0, need - 1).bit_length()


def fits_share(total_b: float, fraction: float) -> bool:
    """Whether the model's weights plus KV headroom fit in `fraction` of one GPU."""
    return weights_gb(total_b) * (1 + KV_HEADROOM) <= GPU_MEMORY_GB * fraction


__all__ = ["GPU", "GPU_MEMORY_GB", "KV_HEADROOM", "MEMORY_UTILIZATION", "PEAK_TFLOPS", "SERVE_FORMULA",
           "TABLE", "Size", "fits_share", "params", "serve_gpus", "size_b", "weights_gb"]
