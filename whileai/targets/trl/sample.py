"""Off-policy distillation, step 1: the frozen teacher writes the completions the student imitates.

Written by whileai beside a TRL SFT config as sample.py. Run from that directory, then train:

    python sample.py --teacher MODEL --prompts N [--samples 4 --temperature 1.0 --max-new-tokens 4096]
    trl sft --config config.yaml

It reads the tasks' prompts from data/train.jsonl and data/test.jsonl (a `prompt` column: text
or chat messages) and writes teacher_samples/train.jsonl (N train prompts, the train split
cycled in a fresh seeded order each pass, `--samples` completions each) and
teacher_samples/test.jsonl (one completion per holdout prompt) with the two columns TRL's SFT
trainer reads: `prompt` and `completion` (a chat prompt gets a one-message assistant
completion, a text prompt a text one), so the loss falls on the teacher's tokens only. The
teacher is loaded in-process with transformers from a local folder or the local Hugging Face
cache (offline: HF_HUB_OFFLINE=1); completions are decoded to text, so the student's tokenizer
re-tokenizes them. Needs torch and transformers only (both come with TRL).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Any


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def order(n_rows: int, n_prompts: int, seed: int) -> list[int]:
    """Row indices for n_prompts prompts: the rows in a seeded order, reshuffled each pass."""
    rng = random.Random(seed)
    out: list[int] = []
    while len(out) < n_prompts:
        block = list(range(n_rows))
        rng.shuffle(block)
        out += block[: n_prompts - len(out)]
    return out


def generate(model: Any, tok: Any, prompts: list[Any], *, samples: int, temperature: float,
             max_new_tokens: int, batch_size: int) -> list[list[str]]:
    """`samples` sampled completions (text, special tokens dropped) for each prompt."""
    import torch

    out: list[list[str]] = []
    for i in range(0, len(prompts), batch_size):
        batch = prompts[i:i + batch_size]
        if isinstance(batch[0], str):  # a text prompt is continued as it is, as TRL feeds it
            enc = tok(batch, padding=True, return_tensors="pt")
        else:
            enc = tok.apply_chat_template(batch, add_generation_prompt=True, padding=True,
                                          return_tensors="pt", return_dict=True)
        enc = {k: v.to(model.device) for k, v in enc.items()}
        with torch.no_grad():
            ids = model.generate(**enc, do_sample=True, temperature=temperature, top_p=1.0, top_k=0,
                                 max_new_tokens=max_new_tokens, num_return_sequences=samples,
                                 pad_token_id=tok.pad_token_id)
        texts = tok.batch_decode(ids[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        out += [texts[j * samples:(j + 1) * samples] for j in range(len(batch))]
        print(f"sampled {min(i + batch_size, len(prompts))}/{len(prompts)} prompts", flush=True)
    return out


def as_row(prompt: Any, text: str) -> dict[str, Any]:
    if isinstance(prompt, str):
        return {"prompt": prompt, "completion": text}
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": text}]}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teacher", required=True, help="the teacher: a local folder or a cached hub id")
    ap.add_argument("--prompts", type=int, required=True,
                    help="train prompts to sample (steps x prompts per step)")
    ap.add_argument("--samples", type=int, default=1, help="completions per prompt")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--max-new-tokens", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=Path("data"), help="folder of train.jsonl / test.jsonl")
    ap.add_argument("--out", type=Path, default=Path("teacher_samples"))
    ap.add_argument("--batch-size", type=int, default=16, help="prompts generated together")
    ap.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: cuda when present)")
    a = ap.parse_args(argv)
    if a.prompts < 1 or a.samples < 1 or a.max_new_tokens < 1 or not 0 < a.temperature <= 2:
        ap.error("--prompts, --samples and --max-new-tokens must be >= 1, --temperature in (0, 2]")

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(a.seed)
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    tok = AutoTokenizer.from_pretrained(a.teacher)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model: Any = AutoModelForCausalLM.from_pretrained(a.teacher)
    model = model.to(device).eval()
    kw = dict(temperature=a.temperature, max_new_tokens=a.max_new_tokens, batch_size=a.batch_size)

    train = read_rows(a.data / "train.jsonl")
    if not train:
        ap.error(f"{a.data / 'train.jsonl'} has no rows")
    prompts = [train[i]["prompt"] for i in order(len(train), a.prompts, a.seed)]
    texts = generate(model, tok, prompts, samples=a.samples, **kw)  # type: ignore[arg-type]
    rows = [as_row(p, t) for p, ts in zip(prompts, texts, strict=True) for t in ts]
    write_jsonl(a.out / "train.jsonl", rows)
    test_file = a.data / "test.jsonl"
    test = read_rows(test_file) if test_file.exists() else []
    if test:
        held = [r["prompt"] for r in test]
        done = generate(model, tok, held, samples=1, **kw)  # type: ignore[arg-type]
        write_jsonl(a.out / "test.jsonl", [as_row(p, ts[0]) for p, ts in zip(held, done, strict=True)])
    print(f"wrote {a.out}/train.jsonl ({len(prompts) * a.samples} rows)"
          + (f" and {a.out}/test.jsonl ({len(test)} rows)" if test else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
