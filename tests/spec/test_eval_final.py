"""The eval interval evaluates the final step: prime-rl fires eval when step % interval == 0
(orchestrator/eval_source.py), TRL when step % eval_steps == 0, so the default is a divisor of the
steps, and an interval that is not one (in the spec or through --set) is a warning."""

from __future__ import annotations

import tomllib

import whileai as wai
from whileai.spec.run import default_eval_interval


def run(**fields: object) -> wai.RunSpec:
    return wai.RunSpec(taskset="gsm8k", model="Qwen/Qwen3-1.7B", method=wai.GRPO(), **fields)  # type: ignore[arg-type]


def test_the_default_interval_divides_the_steps() -> None:
    assert default_eval_interval(100) == 25  # unchanged where a quarter divides
    assert default_eval_interval(50) == 10  # steps // 4 = 12 would end at 48
    for steps in (1, 3, 7, 30, 50, 99, 101, 250, 1000, 9_999_991):
        every = default_eval_interval(steps)
        assert steps % every == 0 and 1 <= steps // every <= 8, steps
    doc = tomllib.loads(wai.compile(run(steps=50), "prime-rl").text)
    assert doc["orchestrator"]["eval"]["interval"] == 10


def test_an_interval_that_skips_the_final_step_is_a_warning() -> None:
    ids = {w.rule for w in wai.compile(run(steps=100, eval={"interval": 30}), "prime-rl").warnings}
    assert "eval-skips-final-step" in ids
    over = wai.compile(run(steps=100, eval={"interval": 25}, overrides={"max_steps": 90}),
                       "prime-rl")
    w = next(w for w in over.warnings if w.rule == "eval-skips-final-step")
    assert "last evaluation is at step 75" in w.message
    assert not {w.rule for w in wai.compile(run(steps=100), "prime-rl").warnings} & {"eval-skips-final-step"}
