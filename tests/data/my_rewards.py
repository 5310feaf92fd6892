"""A reward for GRPO on tests/data/tasks.jsonl: 1.0 when the completion contains the answer."""


def contains_answer(prompts, completions, answer, **kwargs):  # type: ignore[no-untyped-def]
    texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
    return [1.0 if a.strip() and a.strip() in t else 0.0 for t, a in zip(texts, answer, strict=True)]
