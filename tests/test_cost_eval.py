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
