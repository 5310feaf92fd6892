"""The student's stand-in tokenizer: a tiny local tokenizer with the chat template of the student's
family, because the rehearsal runs offline and the student (a hub id) cannot be downloaded.

    tok, why = tokenizer("Qwen/Qwen3-0.6B", texts, scratch / "student")

verl reads the tokenizer from the model (`HFModelConfig.tokenizer`, trainer_base.py:701-706;
`hf_tokenizer` in sft_trainer.py). What a rehearsal needs of it is how its chat template shapes a
conversation: the vocabulary is learnt from the rows (whileai.vocab.tiny, byte-level, so every
text round-trips). The family comes from the model's name; Qwen3's template is the one that matters
to verl's datasets: it adds an empty think block to the last assistant turn of a conversation only
when it renders the whole conversation, and moves `<think>…</think>` out of an assistant's content
(QWEN3 below, Qwen3's own template without its tool branches). Other families use the tiny
builder's ChatML / Llama 3 templates, which render each turn the same alone or in a conversation.

Standard library at import; transformers and tokenizers are imported by whileai.vocab.tiny's builder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# Qwen3's chat template (Qwen/Qwen3-0.6B tokenizer_config.json), its tool branches left out: the
# last user query's index, then assistant turns after it get `<think>\n…\n</think>\n\n` when they
# are the last turn or carry reasoning; `</think>` in an assistant's content splits reasoning off.
QWEN3 = (
    "{%- if messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}"
    "{%- for message in messages[::-1] %}"
    "{%- set index = (messages|length - 1) - loop.index0 %}"
    "{%- if ns.multi_step_tool and message.role == 'user' and message.content is string %}"
    "{%- set ns.multi_step_tool = false %}{%- set ns.last_query_index = index %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- for message in messages %}"
    "{%- if message.content is string %}{%- set content = message.content %}"
    "{%- else %}{%- set content = '' %}{%- endif %}"
    "{%- if (message.role == 'user') or (message.role == 'system' and not loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>' + '\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{%- set reasoning_content = '' %}"
    "{%- if message.reasoning_content is string %}{%- set reasoning_content = message.reasoning_content %}"
    "{%- else %}{%- if '</think>' in content %}"
    "{%- set reasoning_content = content.split('</think>')[0].rstrip('\\n')"
    ".split('<think>')[-1].lstrip('\\n') %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}"
    "{%- endif %}{%- endif %}"
    "{%- if loop.index0 > ns.last_query_index %}"
    "{%- if loop.last or (not loop.last and reasoning_content) %}"
    "{{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + "
    "'\\n</think>\\n\\n' + content.lstrip('\\n') }}"
    "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + content }}{%- endif %}"
    "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + content }}{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}{%- endif %}"
)
# a model's name → (its family, the tiny builder's family for its tokens); first match wins
_FAMILIES = ((r"qwen3(?!\.5)", "qwen3"), (r"qwen2", "qwen2"), (r"llama-?3", "llama"))


def family(model: str) -> str:
    """The chat-template family of a model id or path: qwen3, qwen2, llama, else chatml."""
    name = model.rstrip("/").split("/")[-1].lower()
    return next((fam for pat, fam in _FAMILIES if re.search(pat, name)), "chatml")


def tokenizer(model: str, texts: list[str], out: Path | None = None) -> tuple[Any, str]:
    """(a PreTrainedTokenizerFast standing in for `model`'s, why it stands in and what it carries);
    saved under `out` when given."""
    from whileai.vocab import tiny

    fam = family(model)
    tok = tiny.tokenizer(texts or ["a"], fam, vocab_size=512, max_length=1 << 17)
    if fam == "qwen3":
        tok.chat_template = QWEN3
    what = {"qwen3": "Qwen3's chat template (an empty think block on the last assistant turn of "
                     "a whole conversation only)",
            "qwen2": "ChatML", "llama": "Llama 3's template", "chatml": "ChatML"}[fam]
    if out is not None:
        tok.save_pretrained(str(out))
    why = (f"the tokenizer of {model} (a hub id, not downloaded offline) -> a tiny local byte-level "
           f"tokenizer (whileai.vocab.tiny, family {fam}) with {what}; verl reads it from the "
           "model: trainer_base.py:701-706")
    return tok, why
