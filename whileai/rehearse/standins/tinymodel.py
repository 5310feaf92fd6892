"""A tiny stand-in model folder of the run's architecture family: a byte-level BPE tokenizer
with the family's special tokens (the ones its renderer looks up) and a model config.json,
no weights (nothing in a rehearsal runs the model). Runs in the prime-rl environment:

    python tinymodel.py OUT_DIR FAMILY TEXTS.json

Standard library plus `tokenizers` and `transformers`, which that environment has.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# per family: the special tokens its renderers look up, the architecture and its model_type
FAMILIES: dict[str, dict[str, object]] = {
    "qwen3": {
        "special": [
            "<|endoftext|>",
            "<|im_start|>",
            "<|im_end|>",
            "<think>",
            "</think>",
            "<tool_call>",
            "</tool_call>",
            "<tool_response>",
            "</tool_response>",
        ],
        "eos": "<|im_end|>",
        "pad": "<|endoftext|>",
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
    },
}
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build(out: Path, family: str, texts: list[str], vocab_size: int = 512) -> dict[str, object]:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    fam = FAMILIES[family]
    special = list(fam["special"])  # type: ignore[call-overload]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=fam["eos"],
        pad_token=fam["pad"],
        chat_template=CHAT_TEMPLATE,
        model_max_length=1 << 17,
    )
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(out))
    vocab = len(fast)
    config = {
        "architectures": fam["architectures"],
        "model_type": fam["model_type"],
        "vocab_size": vocab,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "max_position_embeddings": 1 << 17,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "eos_token_id": fast.convert_tokens_to_ids(str(fam["eos"])),
        "pad_token_id": fast.convert_tokens_to_ids(str(fam["pad"])),
        "bos_token_id": None,
    }
    (out / "config.json").write_text(json.dumps(config, indent=1))
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": config["eos_token_id"]}))
    facts = {"family": family, "vocab_size": vocab, "eos_token_id": config["eos_token_id"]}
    (out / "WHILEAI_TINY.json").write_text(json.dumps(facts))
    return facts


def main() -> None:
    out, family, texts = Path(sys.argv[1]), sys.argv[2], json.loads(Path(sys.argv[3]).read_text())
    print(json.dumps(build(out, family, texts)))


if __name__ == "__main__":
    main()
