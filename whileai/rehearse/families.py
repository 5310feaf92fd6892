"""Which tiny stand-in model a rehearsal builds for the run's model: a family whose special tokens
are the ones the compiled renderer looks up, with the model's config class.

The renderer decides (renderers 0.1.12 at the rehearsal's pin): a typed renderer reads its
family's special tokens from the tokenizer by name (`qwen3` and `prime-qwen3`: ChatML and
`<think>`; `llama-3`: `<|begin_of_text|>`, `<|start_header_id|>`, `<|end_header_id|>`,
`<|eot_id|>`, ... in llama_3.py), so the stand-in must have those; `default` (whileai's choice
for a model the renderers package has no entry for) applies the tokenizer's own chat template
and stops at its eos token, so the stand-in needs a chat template and an eos, and its config
takes the model's own `model_type` where the name says it (Qwen2/Qwen2.5: ChatML tokens,
Qwen2ForCausalLM; Llama: Llama-3's tokens, LlamaForCausalLM; else generic tokens with the
family's config class where transformers knows it). A typed renderer of another family is
refused: its tokens are not in any stand-in. Standard library only.

    stand_in(doc)   # Family(name="llama", model_type="llama", why="...")
"""

from __future__ import annotations

from typing import Any, NamedTuple

from whileai.errors import SpecError

# typed renderer -> the stand-in family that has its tokens
RENDERERS = {"qwen3": "qwen3", "prime-qwen3": "qwen3", "llama-3": "llama"}
# for the `default` renderer: a hint in the model's name (lowercase, '-' and '_' dropped) ->
# (stand-in family, model_type); the first hint found wins
NAME_HINTS: tuple[tuple[str, str, str], ...] = (
    ("deepseekr1distillqwen", "qwen2", "qwen2"),
    ("deepseekr1distillllama", "llama", "llama"),
    ("qwen3", "qwen3", "qwen3"),
    ("qwen2", "qwen2", "qwen2"),  # Qwen2, Qwen2.5 (and its Math and Coder models)
    ("qwq", "qwen2", "qwen2"),
    ("llama", "llama", "llama"),
    ("smollm", "generic", "llama"),
    ("gemma3", "generic", "gemma3_text"),
    ("gemma2", "generic", "gemma2"),
    ("gemma", "generic", "gemma"),
    ("mixtral", "generic", "mixtral"),
    ("mistral", "generic", "mistral"),
    ("phi3", "generic", "phi3"),
    ("phi4", "generic", "phi3"),
    ("olmo2", "generic", "olmo2"),
    ("granite", "generic", "granite"),
)


class Family(NamedTuple):
    name: str  # the stand-in's tokens and chat template: qwen3 | qwen2 | llama | generic
    model_type: str  # its config.json's model_type
    why: str  # for the verdict's `replaced:` line


def stand_in(doc: dict[str, Any]) -> Family:
    """The stand-in family of the run's model, from its compiled renderer and its name."""
    renderer = str(((doc.get("orchestrator") or {}).get("renderer") or {}).get("name") or "default")
    name = str((doc.get("model") or {}).get("name") or "")
    squashed = name.lower().replace("-", "").replace("_", "")
    if renderer in RENDERERS:
        fam = RENDERERS[renderer]
        return Family(fam, fam, f"the {renderer} renderer's special tokens")
    if renderer != "default":
        raise SpecError(
            "orchestrator.renderer.name",
            renderer,
            f"a renderer whileai rehearse has a tiny stand-in for ({', '.join(RENDERERS)}, or "
            "default: the tokenizer's own chat template); the "
            f"{renderer} renderer reads its family's special tokens, which no stand-in has",
        )
    for hint, fam, model_type in NAME_HINTS:
        if hint in squashed:
            tokens = {"qwen3": "ChatML", "qwen2": "ChatML", "llama": "Llama-3's"}.get(fam, "generic")
            return Family(fam, model_type, f"{tokens} tokens and chat template (the default renderer "
                          f"applies the tokenizer's own), config {model_type}")
    return Family("generic", "llama", "generic tokens and chat template (the default renderer "
                  "applies the tokenizer's own); the name names no family transformers knows here")
