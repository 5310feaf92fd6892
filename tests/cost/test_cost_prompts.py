"""The cost estimate measures prompt lengths where the task rows are on this machine (TRL: the
built-in taskset's generator or the spec's data file), by a stated rule (4 characters a token, 3
tokens around each chat message and the reply; no tokenizer loaded), on at most the first 512
rows; prime-rl's rows come from its taskset packages, so it assumes the cap and says so."""

from __future__ import annotations

import json
import math
from pathlib import Path

import whileai as wai
from whileai.tasksets import lengths

T = wai.Endpoint(url="http://localhost:8001/v1", model="Qwen/Qwen3-8B")


def trl_cost(run: wai.RunSpec) -> dict:
    c = wai.compile(run, "trl")
    assert c.cost is not None
    return c.cost.to_dict() | {"line": c.cost.line()}


def data_file(tmp_path: Path, prompts: list[object]) -> str:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "answer": "x"}) + "\n" for p in prompts))
    return str(path)


def test_the_rule_counts_text_and_chat_messages() -> None:
    assert lengths.tokens({"prompt": "x" * 400}) == 100
    chat = {"prompt": [{"role": "system", "content": "x" * 8}, {"role": "user", "content": "y" * 9}]}
    assert lengths.tokens(chat) == (3 + 2) + (3 + 3) + 3
    got = lengths.measure([{"prompt": "x" * n} for n in (4, 8, 40)], "s")
    assert got is not None and (got.median, got.mean, got.rows) == (2.0, 13 / 3, 3)  # 1, 2, 10
    assert lengths.measure([], "s") is None


def test_trl_measures_a_data_file_and_says_so(tmp_path: Path) -> None:
    path = data_file(tmp_path, ["x" * 400] * 9 + ["y" * 4000])  # the last tenth is the holdout
    d = trl_cost(wai.RunSpec(taskset="mine", model="Qwen/Qwen3-1.7B", data=path, prompts=8,
                             method=wai.OPD(T, max_tokens=1000)))
    assert d["prompt_tokens"] == 100 and d["tokens_per_rollout"] == 100 + 1000
    assert "prompt lengths: measured on 9 rows of " in d["prompt_how"] and "tasks.jsonl" in d["prompt_how"]
    assert "median 100, mean 100.0 tokens" in d["prompt_how"] and "4 characters per token" in d["prompt_how"]
    assert d["prompt_how"] in d["line"]
    assert "prompts as measured, completions at the cap" in d["line"]


def test_at_most_512_rows_are_measured(tmp_path: Path) -> None:
    path = data_file(tmp_path, ["x" * 40] * 512 + ["y" * 4000] * 100 + ["z"] * 10)
    d = trl_cost(wai.RunSpec(taskset="mine", model="Qwen/Qwen3-1.7B", data=path,
                             method=wai.OPD(T)))
    assert d["prompt_tokens"] == 10 and "measured on 512 of 560 rows" in d["prompt_how"]


def test_trl_measures_the_built_in_taskset() -> None:
    d = trl_cost(wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-1.7B", method=wai.GRPO()))
    assert "measured on 512 of 1,000 rows of reverse-text" in d["prompt_how"]
    assert 30 < d["prompt_tokens"] < 60  # a system prompt and a short phrase, not the 2048 cap


def test_opsd_counts_the_privileged_context_its_teacher_reads(tmp_path: Path) -> None:
    rows = [{"prompt": "x" * 400, "answer": "y" * 4000}] * 10
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = wai.RunSpec(taskset="mine", model="Qwen/Qwen3-8B", data=str(path), prompts=8,
                      method=wai.OPSD(privileged="answer", max_tokens=512))
    d = trl_cost(run)
    template = len(run.method.template)  # type: ignore[union-attr]
    assert d["prompt_tokens"] == math.ceil((400 + template + 4000) / 4)
    assert "with OPSD's privileged context" in d["prompt_how"]
    capped = trl_cost(run.model_copy(update={"prompt_tokens": 16}))  # SDFT truncates at max_prompt_length
    assert capped["prompt_tokens"] == 16 + 512 + len(run.method.template.encode())  # type: ignore[union-attr]


def test_prime_rl_assumes_the_cap_and_says_where_from() -> None:
    run = wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.GRPO())
    c = wai.compile(run, "prime-rl")
    assert c.cost is not None
    d = c.cost.to_dict()
    assert d["prompt_tokens"] == 2048 and d["tokens_per_rollout"] == 2048 + run.method.max_tokens
    assert d["prompt_how"].startswith("prompt lengths: assumed 2,048 tokens each (the prompt_tokens "
                                      "cap, whileai's default")
    assert "at the caps" in c.cost.line()
    set_ = wai.compile(run.model_copy(update={"prompt_tokens": 512}), "prime-rl").cost
    assert set_ is not None and "assumed 512 tokens each (the prompt_tokens cap, as the spec sets it" \
        in set_.prompt_how


def test_a_seq_len_override_leaves_the_prompt_assumption_alone() -> None:
    """seq_len is prime-rl's training pack length (samples longer are truncated for training,
    trainer/batch.py prepare_sample), not a prompt cap: a longer one leaves the estimate's
    prompts alone; vLLM samples prompt + the completion cap. (One below prompt_tokens +
    max_tokens is refused: tests/targets/test_story.py.)"""
    t = wai.Endpoint(url="https://teacher.example.com/v1", model="Qwen/Qwen3-8B")  # remote: not served
    run = wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.OPD(t, max_tokens=8192),
                      overrides={"seq_len": 16384})
    c = wai.compile(run, "prime-rl")
    assert c.cost is not None
    d = c.cost.to_dict()
    assert d["prompt_tokens"] == 2048 and d["tokens_per_rollout"] == 2048 + 8192
    assert "assumed 2,048 tokens each" in d["prompt_how"] and "-" not in d["prompt_how"].split("(")[0]
