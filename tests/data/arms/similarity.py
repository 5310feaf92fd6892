"""The user's own reward for tests/data/arms: how close the first line of the reply is to the answer."""

from difflib import SequenceMatcher


def closeness(prompts, completions, answer, **kwargs):  # type: ignore[no-untyped-def]
    texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
    firsts = [(t.strip().splitlines() or [""])[0].strip() for t in texts]
    return [SequenceMatcher(None, f, a).ratio() for f, a in zip(firsts, answer, strict=True)]
