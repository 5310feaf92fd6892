"""What a rehearsal covers: which tiny stand-in model it builds for the run's model, and what it
does with each source's taskset, so that nothing is read from a hub.

## Model families

The stand-in is a family whose special tokens are the ones the compiled renderer looks up, with
the model's config class. The renderer decides (renderers 0.1.12 at the rehearsal's pin): a
typed renderer reads its family's special tokens from the tokenizer by name (`qwen3` and
`prime-qwen3`: ChatML and `<think>`; `llama-3`: `<|begin_of_text|>`, `<|start_header_id|>`,
`<|end_header_id|>`, `<|eot_id|>`, ... in llama_3.py), so the stand-in must have those;
`default` (whileai's choice for a model the renderers package has no entry for) applies the
tokenizer's own chat template and stops at its eos token, so the stand-in needs a chat template
and an eos, and its config takes the model's own `model_type` where the name says it
(Qwen2/Qwen2.5: ChatML tokens, Qwen2ForCausalLM; Llama: Llama-3's tokens, LlamaForCausalLM; else
generic tokens with the family's config class where transformers knows it). A typed renderer of
another family is refused: its tokens are not in any stand-in.

    stand_in(doc)   # Family(name="llama", model_type="llama", why="...")

## Tasksets

- `ROWS`: a taskset that takes its dataset as an argument (`dataset_name`) reads local rows from a
  folder of JSON lines the rehearsal writes (reverse-text).
- `CACHED`: a taskset that loads a fixed hub dataset with no argument to point elsewhere reads
  local rows the rehearsal caches under that dataset's id in its own `HF_HOME`, where `datasets`
  in offline mode finds them (gsm8k: `load_dataset("openai/gsm8k", "main", split=...)`).
- `HUB`: a taskset that loads a hub dataset whileai has no rows for is refused up front, naming it.
- any other taskset runs as it is: it reads no hub data (kuhn-poker, wordle, ... generate their
  tasks from seeds); if it fails offline, the verdict quotes prime-rl's or verifiers' cause.

Read from each taskset's `load()` at verifiers a60a606 (environments/<name>/<name>/taskset.py,
verifiers/v1/tasksets/). Standard library only.

    how(taskset_id)   # "rows" | "cached" | "as-is", or "hub" (refused: `refusal` says why)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
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


def _reverse_text(n: int) -> list[dict[str, Any]]:
    from whileai.tasksets.reverse_text import phrases

    return [{"prompt": p} for p in phrases(n)]  # PrimeIntellect/Reverse-Text-RL's column


_NAMES = ("Ava", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Ida")
_THINGS = ("apples", "pencils", "stickers", "marbles", "books", "cookies")


def _gsm8k(n: int) -> list[dict[str, Any]]:
    """openai/gsm8k's columns: `question`, and `answer` with the worked steps and `#### N` last."""
    out = []
    for i in range(n):
        who, what = _NAMES[i % len(_NAMES)], _THINGS[i % len(_THINGS)]
        a, b, c = 3 + i % 17, 2 + i % 11, 1 + i % 5
        total = (a + b) * c
        out.append(
            {
                "question": f"{who} has {a} {what} and gets {b} more. Then {who} makes {c} "
                f"equal piles like that. How many {what} are there in all?",
                "answer": f"{who} has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} {what} in one pile.\n"
                f"{c} piles hold {a + b} * {c} = <<{a + b}*{c}={total}>>{total} {what}.\n#### {total}",
            }
        )
    return out


# taskset id -> local rows in its dataset's columns, read through its `dataset_name` argument
ROWS: dict[str, Callable[[int], list[dict[str, Any]]]] = {"reverse-text": _reverse_text}
# taskset id -> (hub dataset id, config, splits, rows): cached under that id in the rehearsal's HF_HOME
CACHED: dict[str, tuple[str, str, tuple[str, ...], Callable[[int], list[dict[str, Any]]]]] = {
    "gsm8k": ("openai/gsm8k", "main", ("train", "test"), _gsm8k),
}
# taskset id -> the hub dataset its load() reads, which whileai has no rows for
HUB = {
    "alphabet-sort": "kalomaze/alphabetic-arxiv-authors-it1",
    "wiki-search": "willcb/wiki-trivia-questions-v4 and willcb/rare-wiki-pages",
    "lean": "the hub dataset of its `dataset` argument",
}


def key(taskset: Any) -> str:
    """The id the loader resolves (owner/ and @version dropped): the catalogue's plugin key."""
    from whileai.catalogs.targets import plugin_key

    return plugin_key(taskset)


def how(taskset: Any) -> str:
    """'rows', 'cached' or 'as-is' for a taskset a rehearsal runs; 'hub' for one it refuses."""
    k = key(taskset)
    if "/" not in str(taskset) and k in ROWS:
        return "rows"
    if "/" not in str(taskset) and k in CACHED:
        return "cached"
    return "hub" if k in HUB else "as-is"


def refusal(taskset: Any) -> str:
    """What the refusal allows, for a taskset `how` calls 'hub'."""
    return (
        f"a taskset that reads no hub dataset whileai lacks rows for: {key(taskset)} loads "
        f"{HUB[key(taskset)]} from the hub, which a rehearsal never reaches (refused: "
        f"{', '.join(sorted(HUB))}; local rows: {', '.join(sorted([*ROWS, *CACHED]))}; any other "
        "runs as it is)"
    )


def write_rows(sources: list[dict[str, Any]], n: int = 64) -> None:
    """Each `rows` source's local rows, `<rows>/<dataset_split>.jsonl` (what `load_dataset(folder,
    split=...)` reads)."""
    from whileai.files.atomic import atomic_write

    for s in sources:
        if s.get("how") != "rows":
            continue
        folder = Path(s["rows"])
        folder.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(r) + "\n" for r in ROWS[key(s["taskset"])](n))
        atomic_write(folder / f"{s['dataset_split']}.jsonl", text, durable=False)


def cache_spec(sources: list[dict[str, Any]], n: int = 48) -> list[dict[str, Any]]:
    """What `standins/hubrows.py` writes into the rehearsal's datasets cache: per cached dataset,
    its id, config and each split's rows (once per dataset, whatever the number of sources)."""
    out: dict[str, dict[str, Any]] = {}
    for s in sources:
        if s.get("how") == "cached":
            dataset, config, splits, rows = CACHED[key(s["taskset"])]
            out[dataset] = {"dataset": dataset, "config": config,
                            "splits": {sp: rows(n) for sp in splits}}
    return list(out.values())
