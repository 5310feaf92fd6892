"""Tiny random Qwen3-architecture models and a local tokenizer, built offline (no hub).

Used by the TRL tests and the offline recipe to run real trainers end to end on a CPU:

    from whileai.launch.tiny import build
    paths = build("/tmp/tiny")          # {'student': '/tmp/tiny/student', 'teacher': ...}
    paths = cached(texts, pairs, {"teacher": 300, "student": 60})   # built once, then reused

The tokenizer is a byte-level BPE trained with `tokenizers` on the given texts (by default
the local reverse-text phrases), wrapped as `PreTrainedTokenizerFast` with a ChatML chat
template, `<|im_end|>` as EOS, `<|endoftext|>` as PAD and left padding. Teacher and student
share it (only their widths differ), as TRL's distillation trainer requires. torch,
transformers and tokenizers are imported only when a function here is called.

`cached` keeps built (and warmed-up) models in a content-addressed folder,
`<cache>/tiny/<key>/`, where the key hashes everything that determines them: the texts the
tokenizer learns, the warm-up pairs and steps, the sizes, the seed, this module's source and
the torch / transformers / tokenizers versions. The cache is $WHILEAI_CACHE, else
$XDG_CACHE_HOME/whileai, else ~/.cache/whileai. A folder is complete when its `done.json`
exists; it is built under a temporary name and renamed, so concurrent builders never see half.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.tasksets.builtin import name_of, rows

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec

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


# how a built-in taskset's answer is written in a completion (for the supervised warm-up)
ANSWER_FORMAT = {"reverse-text": "<reversed_text>\n{answer}\n</reversed_text>"}
def task_texts(run: RunSpec) -> tuple[list[str], list[tuple[Any, str]]]:
    """(texts for the tokenizer, (prompt, completion) pairs for the warm-up) from the run's tasks.
    The warm-up writes each train task's `answer` (in the taskset's format); none without one."""
    train, holdout = rows(run)
    fmt = ANSWER_FORMAT.get(name_of(run.taskset), "{answer}") if run.data is None else "{answer}"
    texts = ["<|im_start|>", "<|im_end|>", "system user assistant"]
    for r in train + holdout:
        p = r["prompt"]
        texts += [p] if isinstance(p, str) else [str(msg.get("content", "")) for msg in p]
        texts += [v for k, v in r.items() if k != "prompt" and isinstance(v, str)]
        if isinstance(r.get("answer"), str):
            texts.append(fmt.format(answer=r["answer"]))
    pairs = [(r["prompt"], fmt.format(answer=r["answer"])) for r in train if isinstance(r.get("answer"), str)]
    return texts, pairs
