"""Tiny random Qwen3-architecture models and a local tokenizer, built offline (no hub).

Used by the TRL tests and the offline recipe to run real trainers end to end on a CPU:

    from whileai.tiny import build
    paths = build("/tmp/tiny")          # {'student': '/tmp/tiny/student', 'teacher': ...}

The tokenizer is a byte-level BPE trained with `tokenizers` on the given texts (by default
the local reverse-text phrases), wrapped as `PreTrainedTokenizerFast` with a ChatML chat
template, `<|im_end|>` as EOS, `<|endoftext|>` as PAD and left padding. Teacher and student
share it (only their widths differ), as TRL's distillation trainer requires. torch,
transformers and tokenizers are imported only when a function here is called.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SIZES: dict[str, dict[str, int]] = {
    "student": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2},
    "teacher": {"hidden_size": 96, "intermediate_size": 192, "num_hidden_layers": 2},
}


def default_texts() -> list[str]:
    """Reverse-text phrases, their reversals and the prompt's fixed words."""
    from whileai.tasksets import reverse_text as rt

    train, holdout = rt.splits()
    texts = [rt.SYSTEM_PROMPT, "<reversed_text>", "</reversed_text>", "system user assistant"]
    for ex in train + holdout:
        texts += [ex["prompt"][-1]["content"], ex["answer"]]
    return texts


def build_tokenizer(texts: Iterable[str] | None = None, *, vocab_size: int = 384) -> Any:
    """A byte-level BPE `PreTrainedTokenizerFast` with a ChatML template (left padding)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts if texts is not None else default_texts()), trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=IM_END,
        pad_token=PAD,
        padding_side="left",
        truncation_side="left",
        chat_template=CHAT_TEMPLATE,
        model_max_length=1024,
    )


def build_model(
    tokenizer: Any,
    *,
    hidden_size: int = 64,
    intermediate_size: int = 128,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    max_position_embeddings: int = 1024,
    seed: int = 0,
) -> Any:
    """A randomly initialised `Qwen3ForCausalLM` sized for the tokenizer."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    eos, pad = tokenizer.convert_tokens_to_ids(IM_END), tokenizer.convert_tokens_to_ids(PAD)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads,
        head_dim=hidden_size // num_attention_heads,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=eos, pad_token_id=pad, do_sample=True, temperature=1.0, top_p=1.0, top_k=0
    )
    return model


def build(
    out_dir: str | Path,
    *,
    texts: Iterable[str] | None = None,
    sizes: dict[str, dict[str, int]] | None = None,
    seed: int = 0,
) -> dict[str, str]:
    """Save a tokenizer-sharing tiny model per entry of `sizes` under out_dir/<name>."""
    out = Path(out_dir)
    tokenizer = build_tokenizer(texts)
    paths: dict[str, str] = {}
    for i, (name, size) in enumerate((sizes or SIZES).items()):
        path = out / name
        build_model(tokenizer, seed=seed + i, **size).save_pretrained(path)
        tokenizer.save_pretrained(path)
        paths[name] = str(path)
    return paths
