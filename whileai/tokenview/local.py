"""Local models through transformers (the `trl` extra), fully offline.

A model is a local folder or a model id already in the local Hugging Face cache: the hub is
never contacted (HF_HUB_OFFLINE and friends are set before transformers is imported, and every
load passes local_files_only). Generation samples from the model's full distribution at the
given temperature (top_k 0, top_p 1, whatever the model's generation_config says), as the
on-policy estimator assumes. Scoring is one forward pass over context + completion; log-probs
are a float32 log-softmax at temperature 1.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.tokenview.data import Prompt
from whileai.tokenview.scoring import Alt, Generated, Scored

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1"}


WHERE = "a local model folder or a model id in the local Hugging Face cache (inspect never downloads)"


def findable(name: str, flag: str) -> str:
    """`name` if it can name a local model: an existing folder, or a hub id (`org/name`) with a
    config in the local Hugging Face cache. Checked before any model loads or any endpoint is
    called, so a wrong path is blamed on its own flag. Light: huggingface_hub's cache lookup only."""
    p = Path(name).expanduser()
    if p.exists():
        if not p.is_dir():
            raise SpecError(flag, name, WHERE, hint="a file, not a folder")
        return name
    if name.startswith(("/", ".", "~")) or name.count("/") > 1 or "\\" in name:
        raise SpecError(flag, name, WHERE, hint="no such folder")
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # the model's load says what to install
        return name
    try:
        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001  (a name the hub's id rules refuse)
        found = None
    if not isinstance(found, str):
        raise SpecError(flag, name, WHERE, hint="no such folder, and not in the local Hugging Face cache")
    return name


def go_offline() -> None:
    os.environ.update(OFFLINE)


def pick_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


class LocalModel:
    kind = "local"
    logprob_source = "forward pass"
    full_distribution = True

    def __init__(self, name: str, *, flag: str, device: str = "auto") -> None:
        go_offline()
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise SpecError(flag, name, "transformers and torch installed for local models: "
                            "pip install -e '.[trl]' in a clone of whileai") from None
        hf_logging.disable_progress_bar()
        self.name = name
        where = str(Path(name).expanduser()) if Path(name).expanduser().exists() else name
        self.device = pick_device(device)
        try:
            self.tok = AutoTokenizer.from_pretrained(where, local_files_only=True)
            dtype = torch.float32 if self.device == "cpu" else "auto"
            net: Any = AutoModelForCausalLM.from_pretrained(where, local_files_only=True, dtype=dtype)
        except (OSError, ValueError) as e:
            raise SpecError(flag, name, "a local model folder or a model id in the local Hugging "
                            "Face cache (inspect never downloads)", hint=type(e).__name__) from None
        self.net: Any = net.to(self.device).eval()
        self.torch = torch
        eos = net.generation_config.eos_token_id if net.generation_config else None
        ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
        if self.tok.eos_token_id is not None:
            ids.append(self.tok.eos_token_id)
        self.eos = sorted({int(i) for i in ids})
        self.pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else (self.eos or [0])[0]
        self.max_positions = int(getattr(net.config, "max_position_embeddings", 0) or 0)

    def encode(self, prompt: Prompt) -> list[int]:
        if isinstance(prompt, str):
            return list(self.tok(prompt)["input_ids"])
        out: Any = self.tok.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True,
                                                return_dict=True)
        return list(out["input_ids"])

    def decode(self, ids: list[int]) -> str:
        return str(self.tok.decode(ids, skip_special_tokens=False))

    def token_texts(self, ids: list[int]) -> list[str]:
        return [self.token_text(i) for i in ids]

    def token_text(self, i: int) -> str:
        """The token decoded alone; a byte-level piece of a character shown as \\xNN escapes."""
        text = self.decode([i])
        if "\ufffd" not in text:
            return text
        piece = self.tok.convert_ids_to_tokens(i)
        table = byte_decoder()
        if isinstance(piece, str) and piece and all(ch in table for ch in piece):
            return bytes(table[ch] for ch in piece).decode("utf-8", errors="backslashreplace")
        return text

    def room(self, context: list[int], max_tokens: int) -> int:
        """max_tokens, capped so context + completion fit the model's positions."""
        if self.max_positions:
            return max(0, min(max_tokens, self.max_positions - len(context)))
        return max_tokens

    def generate(self, contexts: list[list[int]], n: int, max_tokens: int, temperature: float,
                 seeds: list[int]) -> list[list[Generated]]:
        """`n` samples per context, all contexts in one left-padded batch (seeded by seeds[0])."""
        from transformers import GenerationConfig

        torch = self.torch
        budget = min(self.room(c, max_tokens) for c in contexts)
        if budget == 0:
            return [[Generated([], False) for _ in range(n)] for _ in contexts]
        torch.manual_seed(seeds[0])
        config = GenerationConfig(do_sample=True, temperature=temperature, top_k=0, top_p=1.0,
                                  max_new_tokens=budget, num_return_sequences=n,
                                  eos_token_id=self.eos or None, pad_token_id=self.pad)
        width = max(len(c) for c in contexts)
        ids = torch.tensor([[self.pad] * (width - len(c)) + c for c in contexts], device=self.device)
        mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=self.device)
        with torch.no_grad():
            out = self.net.generate(input_ids=ids, attention_mask=mask, generation_config=config)
        rows = out[:, width:].tolist()
        result: list[list[Generated]] = []
        for i in range(len(contexts)):
            group = []
            for row in rows[i * n:(i + 1) * n]:
                end = next((j for j, t in enumerate(row) if t in self.eos), None)
                group.append(Generated(row if end is None else row[: end + 1], end is not None))
            result.append(group)
        return result

    def logprobs(self, context: list[int], completion: list[int]) -> Any:
        """[T, V] float32 log-probs of each completion position given everything before it."""
        torch = self.torch
        ids = torch.tensor([context + completion], device=self.device)
        with torch.no_grad():
            logits = self.net(input_ids=ids).logits[0]
        rows = logits[len(context) - 1: len(context) + len(completion) - 1].float()
        return torch.log_softmax(rows, dim=-1)

    def score(self, context: list[int], completion: list[int], top_k: int) -> Scored:
        if not completion:
            return Scored([], [], [], [], None)
        torch = self.torch
        full = self.logprobs(context, completion)
        target = torch.tensor(completion, device=full.device).unsqueeze(-1)
        chosen = full.gather(-1, target)
        ranks = (full > chosen).sum(-1) + 1
        k = min(top_k, full.shape[-1])
        top_lp, top_ids = full.topk(k, dim=-1)
        tops = [[Alt(int(i), self.token_text(int(i)), float(lp)) for lp, i in zip(lps, ids, strict=True)]
                for lps, ids in zip(top_lp.tolist(), top_ids.tolist(), strict=True)]
        return Scored(chosen.squeeze(-1).tolist(), [int(r) for r in ranks.tolist()], tops,
                      self.token_texts(completion), full.cpu())


def full_kl(sampler: Any, other: Any) -> list[float] | None:
    """Per position Σ_v p(v)(log p(v) − log q(v)) from two [T, V] log-prob tensors; None when
    the vocabularies differ in size (the ids would not name the same tokens)."""
    import torch

    if sampler.shape != other.shape:
        return None
    kl = (sampler.exp() * (sampler - other)).sum(-1)
    return [float(x) for x in torch.clamp(kl, min=0.0).tolist()]


@lru_cache(maxsize=1)
def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet (printable stand-ins for the 256 bytes), inverted."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {b: b for b in keep}, 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
    return {chr(c): b for b, c in chars.items()}
