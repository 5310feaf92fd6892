"""A tiny stand-in model folder of the run's architecture family: a byte-level BPE tokenizer
with the family's special tokens (the ones its renderer looks up) and chat template, and a model
config.json of the model's type, no weights (nothing in a rehearsal runs the model). Runs in the
prime-rl environment (whileai/targets/prime_rl/rehearse/scope.py picks FAMILY and MODEL_TYPE):

    python tinymodel.py OUT_DIR FAMILY TEXTS.json [MODEL_TYPE]

Standard library plus `tokenizers` and `transformers`, which that environment has.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
LLAMA3 = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] + "
    "'<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)
GENERIC = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)
TOOLS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
# per family: the special tokens its renderers look up (renderers/qwen3.py, llama_3.py; the
# default renderer needs the chat template's and the eos), eos, pad, bos, template, architecture
FAMILIES: dict[str, dict[str, object]] = {
    "qwen3": {
        "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", *TOOLS],
        "eos": "<|im_end|>",
        "pad": "<|endoftext|>",
        "template": CHATML,
        "architectures": ["Qwen3ForCausalLM"],
    },
    "qwen2": {  # Qwen2 and Qwen2.5: ChatML, no think tokens
        "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *TOOLS],
        "eos": "<|im_end|>",
        "pad": "<|endoftext|>",
        "template": CHATML,
        "architectures": ["Qwen2ForCausalLM"],
    },
    "llama": {  # Llama 3.x Instruct (renderers/llama_3.py looks each of these up)
        "special": ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                    "<|eot_id|>", "<|eom_id|>", "<|python_tag|>", "<|finetune_right_pad_id|>"],
        "eos": "<|eot_id|>",
        "pad": "<|finetune_right_pad_id|>",
        "bos": "<|begin_of_text|>",
        "template": LLAMA3,
        "architectures": ["LlamaForCausalLM"],
    },
    "generic": {  # another model under the default renderer: its own chat template and eos
        "special": ["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|pad|>"],
        "eos": "<|end|>",
        "pad": "<|pad|>",
        "template": GENERIC,
        "architectures": None,  # the model type's causal-LM class, from transformers
    },
}


def architecture(model_type: str) -> tuple[str, str]:
    """(model_type, its causal-LM class) where transformers knows the type, else llama's."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as names

    return (model_type, names[model_type]) if model_type in names else ("llama", "LlamaForCausalLM")


def build(
    out: Path, family: str, texts: list[str], model_type: str | None = None, vocab_size: int = 512
) -> dict[str, object]:
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
        bos_token=fam.get("bos"),
        chat_template=fam["template"],
        model_max_length=1 << 17,
    )
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(out))
    vocab = len(fast)
    mtype, arch = architecture(model_type or family)
    ids = {k: fast.convert_tokens_to_ids(str(fam[k])) if fam.get(k) else None for k in ("eos", "pad", "bos")}
    config = {
        "architectures": fam["architectures"] or [arch],
        "model_type": mtype,
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
        "eos_token_id": ids["eos"],
        "pad_token_id": ids["pad"],
        "bos_token_id": ids["bos"],
    }
    (out / "config.json").write_text(json.dumps(config, indent=1))
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": config["eos_token_id"]}))
    facts = {"family": family, "model_type": mtype, "vocab_size": vocab, "eos_token_id": ids["eos"]}
    (out / "WHILEAI_TINY.json").write_text(json.dumps(facts))
    return facts


def main() -> None:
    out, family, texts = Path(sys.argv[1]), sys.argv[2], json.loads(Path(sys.argv[3]).read_text())
    print(json.dumps(build(out, family, texts, sys.argv[4] if len(sys.argv) > 4 else None)))


if __name__ == "__main__":
    main()
