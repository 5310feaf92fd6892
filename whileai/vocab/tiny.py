"""Tiny models built offline (no hub): a byte-level BPE tokenizer with a model family's special
tokens and chat template, and model folders around it, with random weights or a config alone.

    tok = tokenizer(texts, "chatml")                   # a PreTrainedTokenizerFast
    paths = build("/tmp/tiny", texts)                  # {'student': '/tmp/tiny/student', 'teacher': ...}
    paths, built = cached(texts, pairs, {"teacher": 300, "student": 60})  # built once, then reused
    facts = stand_in(Path("/tmp/llama"), "llama", texts, "llama")         # tokenizer + config.json

- `build` / `cached` (the TRL recipe, its tests, `whileai inspect --tiny`): a random Qwen3 student
  and teacher sharing one "chatml" tokenizer (only their widths differ, as TRL's distillation
  trainer requires), `<|im_end|>` as EOS, `<|endoftext|>` as PAD, left padding; `cached` warms
  them up on (prompt, completion) pairs and keeps them in a content-addressed folder.
- `stand_in` (prime-rl's rehearsal): a tokenizer of the run's family (the special tokens its
  renderer looks up, its chat template) and a config.json of the model's type, no weights:
  nothing in a rehearsal runs the model.

Families (`FAMILIES`): chatml (ChatML's three tokens), qwen3 (ChatML, `<think>`, tool tokens),
qwen2 (ChatML, tool tokens), llama (Llama 3.x Instruct's header tokens), generic (a role-tag
template for a model under prime-rl's default renderer).

Standard library at import, nothing of whileai: prime-rl's rehearsal runs this file by path in
prime-rl's own environment (targets/prime_rl/rehearse/prepare.py), which has tokenizers and
transformers; torch is imported only where weights are built:

    python tiny.py OUT_DIR FAMILY TEXTS.json [MODEL_TYPE]     # stand_in; prints its facts

The cache is `<cache>/tiny/<key>/`, where the key hashes everything that determines the models:
the texts the tokenizer learns, the warm-up pairs and steps, the sizes, the seed, this module's
source and the torch / transformers / tokenizers versions. `<cache>` is $WHILEAI_CACHE, else
$XDG_CACHE_HOME/whileai, else ~/.cache/whileai. A folder is complete when its `done.json` exists;
it is built under a temporary name and renamed, so concurrent builders never see half.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

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
PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
TOOLS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
# per family: its special tokens (for a rehearsal, the ones prime-rl's renderers look up:
# renderers/qwen3.py, llama_3.py; the default renderer needs the chat template's and the eos),
# eos, pad, bos (where it has one), chat template, architectures (None: the model type's class)
FAMILIES: dict[str, dict[str, Any]] = {
    "chatml": {  # the TRL tiny models': ChatML's tokens alone
        "special": [PAD, IM_START, IM_END],
        "eos": IM_END,
        "pad": PAD,
        "template": CHATML,
        "architectures": ["Qwen3ForCausalLM"],
    },
    "qwen3": {
        "special": [PAD, IM_START, IM_END, "<think>", "</think>", *TOOLS],
        "eos": IM_END,
        "pad": PAD,
        "template": CHATML,
        "architectures": ["Qwen3ForCausalLM"],
    },
    "qwen2": {  # Qwen2 and Qwen2.5: ChatML, no think tokens
        "special": [PAD, IM_START, IM_END, *TOOLS],
        "eos": IM_END,
        "pad": PAD,
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
        "architectures": None,
    },
}
SIZES: dict[str, dict[str, int]] = {
    "student": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2},
    "teacher": {"hidden_size": 96, "intermediate_size": 192, "num_hidden_layers": 2},
}


def tokenizer(texts: Iterable[str], family: str = "chatml", *, vocab_size: int = 384,
              max_length: int = 1024, left: bool = False) -> Any:
    """A byte-level BPE `PreTrainedTokenizerFast` learnt from `texts`, with the family's special
    tokens, eos, pad, bos and chat template; `left`: pad and truncate on the left."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    fam = FAMILIES[family]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(fam["special"]),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer)
    options = {"bos_token": fam["bos"]} if "bos" in fam else {}
    if left:
        options |= {"padding_side": "left", "truncation_side": "left"}
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=fam["eos"], pad_token=fam["pad"],
                                   chat_template=fam["template"], model_max_length=max_length, **options)


# -- random weights: the TRL recipe's student and teacher ----------------------------------------
def build_model(
    tok: Any,
    *,
    hidden_size: int = 64,
    intermediate_size: int = 128,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    max_position_embeddings: int = 1024,
    seed: int = 0,
) -> Any:
    """A randomly initialised `Qwen3ForCausalLM` sized for the (chatml) tokenizer."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    eos, pad = tok.convert_tokens_to_ids(IM_END), tok.convert_tokens_to_ids(PAD)
    config = Qwen3Config(
        vocab_size=len(tok),
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
    texts: Iterable[str],
    *,
    sizes: dict[str, dict[str, int]] | None = None,
    seed: int = 0,
) -> dict[str, str]:
    """Save a tokenizer-sharing tiny model per entry of `sizes` under out_dir/<name>."""
    out = Path(out_dir)
    tok = tokenizer(texts, "chatml", left=True)
    paths: dict[str, str] = {}
    for i, (name, size) in enumerate((sizes or SIZES).items()):
        path = out / name
        build_model(tok, seed=seed + i, **size).save_pretrained(path)
        tok.save_pretrained(path)
        paths[name] = str(path)
    return paths


# -- a config alone: prime-rl's rehearsal stand-in -----------------------------------------------
def architecture(model_type: str) -> tuple[str, str]:
    """(model_type, its causal-LM class) where transformers knows the type, else llama's."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as names

    return (model_type, names[model_type]) if model_type in names else ("llama", "LlamaForCausalLM")


def stand_in(out: Path, family: str, texts: list[str], model_type: str | None = None,
             vocab_size: int = 512) -> dict[str, Any]:
    """The family's tokenizer, a config.json of `model_type` (default: the family's name) and no
    weights in `out`; its facts (family, model_type, vocab_size, eos_token_id), also written to
    out/WHILEAI_TINY.json, the folder's mark of completion."""
    fam = FAMILIES[family]
    fast = tokenizer(texts, family, vocab_size=vocab_size, max_length=1 << 17)
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


# -- supervised warm-up and the model cache ------------------------------------------------------
Pair = tuple[Any, str]  # (prompt: text or chat messages, completion text)
DONE = "done.json"


def warm_up(path: str | Path, pairs: Sequence[Pair], steps: int, seed: int, *, batch: int = 16,
            lr: float = 5e-3) -> None:
    """`steps` supervised steps on (prompt, completion) pairs, loss on the completion only; the
    model in `path` is saved back. Chat prompts go through the chat template, text prompts raw."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if steps <= 0 or not pairs:
        return
    tok, net = AutoTokenizer.from_pretrained(str(path)), AutoModelForCausalLM.from_pretrained(str(path))
    g, pad = torch.Generator().manual_seed(seed), tok.pad_token_id
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    for _ in range(steps):
        seqs = []
        for i in torch.randint(len(pairs), (batch,), generator=g).tolist():
            prompt, completion = pairs[i]
            p = prompt if isinstance(prompt, str) else tok.apply_chat_template(
                prompt, add_generation_prompt=True, tokenize=False)
            pi, ai = (tok(t, add_special_tokens=False)["input_ids"] for t in (p, completion + tok.eos_token))
            seqs.append((pi + ai, [-100] * len(pi) + ai))
        n = max(len(x) for x, _ in seqs)
        ids = torch.tensor([x + [pad] * (n - len(x)) for x, _ in seqs])
        labels = torch.tensor([y + [-100] * (n - len(y)) for _, y in seqs])
        net(input_ids=ids, attention_mask=ids != pad, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    net.save_pretrained(str(path))


def cache_root() -> Path:
    if os.environ.get("WHILEAI_CACHE"):
        return Path(os.environ["WHILEAI_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "whileai"


def cache_key(texts: Sequence[str], pairs: Sequence[Pair], warmup: dict[str, int], *,
              sizes: dict[str, dict[str, int]] | None = None, seed: int = 0) -> str:
    """A digest of everything that determines the built models."""
    libs = {}
    for pkg in ("torch", "transformers", "tokenizers"):
        try:
            libs[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            libs[pkg] = "none"
    material = {"texts": list(texts), "pairs": [list(p) for p in pairs], "warmup": warmup,
                "sizes": sizes or SIZES, "seed": seed, "libs": libs,
                "code": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()}
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def cache_dir(key: str, root: str | Path | None = None) -> Path:
    return Path(root or cache_root()) / "tiny" / key


def paths_in(folder: Path, sizes: dict[str, dict[str, int]] | None = None) -> dict[str, str]:
    return {name: str(folder / name) for name in (sizes or SIZES)}


def sweep_stale(parent: Path) -> list[Path]:
    """Remove the temporary folders (`.<key>.<pid>.tmp`) of builds whose process is gone (killed
    before it could clean up); the removed folders."""
    gone = []
    for tmp in parent.glob(".*.*.tmp") if parent.is_dir() else ():
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)
            gone.append(tmp)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # another user's process, or a platform without signal 0
        return True
    return True


def cached(texts: Sequence[str], pairs: Sequence[Pair], warmup: dict[str, int], *,
           root: str | Path | None = None, sizes: dict[str, dict[str, int]] | None = None,
           seed: int = 0) -> tuple[dict[str, str], bool]:
    """(paths, built_now): tiny models for `texts` warmed up on `pairs` (`warmup`: steps per
    model name), taken from the cache when a complete copy is there, else built into it."""
    key = cache_key(texts, pairs, warmup, sizes=sizes, seed=seed)
    final = cache_dir(key, root)
    if (final / DONE).exists():
        return paths_in(final, sizes), False
    sweep_stale(final.parent)
    tmp = final.with_name(f".{key}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # models this small gain little from a second thread, and on a
    try:                      # busy machine two threads spin: measured 4x slower under load
        built = build(tmp, texts=texts, sizes=sizes, seed=seed)
        for i, (name, steps) in enumerate(warmup.items()):
            warm_up(built[name], pairs, steps, seed=seed + i)
        (tmp / DONE).write_text(json.dumps({"key": key, "warmup": warmup}) + "\n", encoding="utf-8")
    except BaseException:  # Ctrl-C or a failure: no half-built folder is left behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        torch.set_num_threads(threads)
    if final.exists():  # an incomplete copy (no done.json) from an interrupted build
        shutil.rmtree(final, ignore_errors=True)
    try:
        os.replace(tmp, final)
    except OSError:  # another process finished the same key first: use its copy
        shutil.rmtree(tmp, ignore_errors=True)
        if not (final / DONE).exists():
            raise
    return paths_in(final, sizes), True


def main(argv: list[str] | None = None) -> None:
    """OUT_DIR FAMILY TEXTS.json [MODEL_TYPE]: `stand_in`, its facts printed as one JSON line."""
    args = sys.argv[1:] if argv is None else argv
    out, family, texts = Path(args[0]), args[1], json.loads(Path(args[2]).read_text())
    print(json.dumps(stand_in(out, family, texts, args[3] if len(args) > 3 else None)))


if __name__ == "__main__":
    main()
