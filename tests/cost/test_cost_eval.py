"""The cost estimate counts evaluation rollouts: prime-rl evaluates num_examples x group_size at
step 0 (unless skip_first_step) and whenever step % interval == 0 (orchestrator/eval_source.py)."""

from __future__ import annotations

import whileai as wai


def cost(**fields: object) -> dict:
    base: dict[str, object] = dict(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.GRPO(), steps=100)
    c = wai.compile(wai.RunSpec(**(base | fields)), "prime-rl")  # type: ignore[arg-type]
    assert c.cost is not None
    return c.cost.to_dict()


def test_eval_rollouts_are_counted() -> None:
    d = cost()  # interval 25, 128 examples: steps 0, 25, 50, 75, 100
    assert d["eval_rollouts"] == 5 * 128 and d["gpu_hours"]["eval"] > 0
    assert d["gpu_hours"]["total"] == sum(v for k, v in d["gpu_hours"].items() if k != "total" and v)
    assert cost(overrides={"orchestrator.eval.skip_first_step": True})["eval_rollouts"] == 4 * 128
    assert cost(eval={"enabled": False})["eval_rollouts"] == 0
    assert cost(eval={"enabled": False})["gpu_hours"]["eval"] is None
    assert cost(taskset="kuhn-poker")["eval_rollouts"] == 2 * 5 * 128  # two seats per episode


def test_all_rows_is_said_not_counted() -> None:
    d = cost(eval={"examples": -1})
    assert d["eval_rollouts"] == 0 and "not counted" in d["eval_how"]


def trl_cost(**fields: object) -> dict:
    base: dict[str, object] = dict(taskset="reverse-text", model="Qwen/Qwen3-1.7B", method=wai.GRPO(),
                                   steps=100)
    c = wai.compile(wai.RunSpec(**(base | fields)), "trl")  # type: ignore[arg-type]
    assert c.cost is not None
    return c.cost.to_dict()


def test_trl_eval_rollouts_are_counted() -> None:
    """transformers' Trainer evaluates whenever step % eval_steps == 0 (and at step 0 with
    eval_on_start) over every row of data/test.jsonl; GRPO samples num_generations_eval (else
    num_generations) per prompt, DistillationTrainer one, trl sft none."""
    d = trl_cost()  # eval_steps 25, 128 holdout rows, 8 generations: steps 25, 50, 75, 100
    assert d["eval_rollouts"] == 4 * 128 * 8 and d["gpu_hours"]["eval"] > 0
    assert d["eval_tokens"] == d["eval_rollouts"] * (d["prompt_tokens"] + wai.GRPO().max_tokens)
    assert d["gpu_hours"]["total"] == sum(v for k, v in d["gpu_hours"].items() if k != "total" and v)
    assert trl_cost(overrides={"eval_on_start": True})["eval_rollouts"] == 5 * 128 * 8
    assert trl_cost(overrides={"num_generations_eval": 2})["eval_rollouts"] == 4 * 128 * 2
    assert trl_cost(eval={"interval": 50, "examples": 16})["eval_rollouts"] == 2 * 16 * 8
    off = trl_cost(eval={"enabled": False})
    assert off["eval_rollouts"] == 0 and off["gpu_hours"]["eval"] is None
    t = wai.Endpoint(url="http://localhost:8001/v1", model="Qwen/Qwen3-8B")
    assert trl_cost(method=wai.OPD(t))["eval_rollouts"] == 4 * 128  # one completion per prompt
    sft = trl_cost(method=wai.SFT(t))
    assert sft["eval_rollouts"] == 0 and "samples nothing" in sft["eval_how"]
