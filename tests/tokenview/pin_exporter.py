"""prime-rl's own token exporter at the pin, run on the CPU with the test dependencies.

`WHILEAI_PRIME_RL_PIN` names the pinned source tree (docs/loader-env.md). The module
src/prime_rl/trainer/rl/token_export.py is executed unchanged; of its two prime-rl imports,
`compute_importance_ratio_and_mismatch_kl` is the pin's own function, cut verbatim from
src/prime_rl/trainer/rl/loss.py (whose other imports, beartype and jaxtyping, the tests do not
carry), and `DefaultLossConfig` / `TrainerConfig` are stand-ins holding the pin's DPPO mask
defaults read from packages/prime-rl-configs (its pydantic_config base is not installed here).
Needs torch (the CPU wheel of the test dependencies).
"""

from __future__ import annotations

import ast
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

EXPORTER = "src/prime_rl/trainer/rl/token_export.py"
LOSS = "src/prime_rl/trainer/rl/loss.py"
CONFIGS = "packages/prime-rl-configs/src/prime_rl/configs/trainer.py"


def pin() -> Path | None:
    root = os.environ.get("WHILEAI_PRIME_RL_PIN")
    return Path(root) if root and (Path(root) / EXPORTER).is_file() else None


def _function(source: str, name: str) -> str:
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    segment = ast.get_source_segment(source, node)
    assert segment is not None
    return segment


def load(root: Path) -> types.ModuleType:
    """The pin's token_export module (a fresh copy each call)."""
    import torch

    configs = (root / CONFIGS).read_text(encoding="utf-8")
    low = float(re.search(r"dppo_mask_low: float = Field\(([\d.]+)", configs).group(1))  # type: ignore[union-attr]
    high = float(re.search(r"dppo_mask_high: float = Field\(([\d.]+)", configs).group(1))  # type: ignore[union-attr]

    class DefaultLossConfig:
        dppo_mask_low = low
        dppo_mask_high = high

    class TrainerConfig:  # only named in a type hint of setup_token_exporter
        pass

    loss_ns: dict[str, Any] = {"torch": torch, "Tensor": torch.Tensor}
    exec(_function((root / LOSS).read_text(encoding="utf-8"), "compute_importance_ratio_and_mismatch_kl"),
         loss_ns)
    stubs = {
        "prime_rl": types.ModuleType("prime_rl"),
        "prime_rl.configs": types.ModuleType("prime_rl.configs"),
        "prime_rl.configs.trainer": types.ModuleType("prime_rl.configs.trainer"),
        "prime_rl.trainer": types.ModuleType("prime_rl.trainer"),
        "prime_rl.trainer.rl": types.ModuleType("prime_rl.trainer.rl"),
        "prime_rl.trainer.rl.loss": types.ModuleType("prime_rl.trainer.rl.loss"),
    }
    stubs["prime_rl.configs.trainer"].DefaultLossConfig = DefaultLossConfig  # type: ignore[attr-defined]
    stubs["prime_rl.configs.trainer"].TrainerConfig = TrainerConfig  # type: ignore[attr-defined]
    stubs["prime_rl.trainer.rl.loss"].compute_importance_ratio_and_mismatch_kl = (  # type: ignore[attr-defined]
        loss_ns["compute_importance_ratio_and_mismatch_kl"])
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        module = types.ModuleType("pin_token_export")
        module.__dict__["__file__"] = str(root / EXPORTER)
        code = compile((root / EXPORTER).read_text(encoding="utf-8"), str(root / EXPORTER), "exec")
        exec(code, module.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    module.DefaultLossConfig = DefaultLossConfig  # type: ignore[attr-defined]
    return module


def micro_batch(seed: int, lengths: list[int], prompt: int, *, opd: bool, env: str,
                pad: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """A packed micro-batch of sequences (each `prompt` untrained tokens, the rest trained),
    right-padded by `pad` tokens as prime-rl's packer pads, and the model's output for it."""
    import torch

    g = torch.Generator().manual_seed(seed)
    n = sum(lengths) + pad
    mask = torch.zeros(n, dtype=torch.bool)
    envs = [""] * n
    start = 0
    for length in lengths:
        mask[start + prompt: start + length] = True
        envs[start: start + length] = [env] * length
        start += length
    trainer = -torch.rand(n, generator=g) * 3
    inference = torch.where(mask, trainer + 0.3 * torch.randn(n, generator=g), torch.zeros(n))
    adv = torch.zeros(n) if opd else torch.where(mask, torch.randn(n, generator=g).sign(), torch.zeros(n))
    batch: dict[str, Any] = {
        "input_ids": torch.randint(3, 300, (1, n), generator=g), "position_ids": torch.arange(n)[None],
        "loss_mask": mask[None], "advantages": adv[None], "inference_logprobs": inference[None],
        "env_names": envs,
        "rl_weights": torch.zeros(1, n) if opd else None, "ce_weights": None,
        "ref_kl_weights": mask[None].float() if opd else None,
    }
    out = {"logprobs": trainer[None], "entropy": torch.rand(1, n, generator=g) * 2}
    return batch, out
