"""Reward for examples/own-data/grpo.toml: 1.0 when the reply contains the task's answer.

TRL calls reward functions with the prompts, the completions and every other dataset column
as keyword lists (here `answer`). whileai copies this file into the run directory.
"""


def contains_answer(prompts, completions, answer, **kwargs):  # type: ignore[no-untyped-def]
    texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
    return [1.0 if a.strip() and a.strip() in t else 0.0 for t, a in zip(texts, answer, strict=True)]
