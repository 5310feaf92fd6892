"""OPSD's self-teacher template, worded for what the privileged field of a taskset really holds.

whileai's default template introduces the privileged text as "a reference solution". That is
true where the field is a full solution (reverse-text's `answer` is the whole reversed text) and
false where it is only a final value: gsm8k's `answer` is "the ground-truth final answer (the
value after GSM8K's `####`)" (gsm8k/taskset.py), a number with no working. For the catalogue's
tasksets whose TaskData field docstrings say what the field holds (read at verifiers a60a606,
the commit prime-rl 559b447 pins), the default is reworded to say what the self-teacher is shown;
a template the spec writes is used as written.

    worded(run)   # (template, note): the text written, and why (or "" when unchanged)
"""

from __future__ import annotations

from whileai.catalogs.targets import plugin_key
from whileai.spec.methods import OPSD

DEFAULT = OPSD.model_fields["template"].default
_TAIL = "\n<demonstration>\n{demonstration}\n</demonstration>"

# (taskset, privileged key) -> (what the field holds, per its TaskData docstring; the wording)
HOLDS: dict[tuple[str, str], tuple[str, str]] = {
    ("gsm8k", "answer"): (
        "the final number only (gsm8k/taskset.py: 'the ground-truth final answer, the value "
        "after ####'), not a worked solution",
        "The correct final answer to this task follows: the number only, without the working. "
        "Use it to judge each step of your own reply."),
    ("deepwiki", "answer"): (
        "the repository's language only (deepwiki/taskset.py)",
        "The correct answer to this task follows: the one word your reply must contain. Use it "
        "to judge your own reply."),
    ("glossary", "answer"): (
        "the fact the lookup tool returns (glossary/taskset.py), not a solution",
        "The fact this task asks for follows. Use it to judge each step of your own reply."),
    ("color-codeword", "answer"): (
        "the expected codeword only (color_codeword/taskset.py), not the reasoning",
        "The correct codeword for this task follows, without the reasoning. Use it to judge "
        "each step of your own reply."),
}


def worded(taskset: str, privileged: str, template: str) -> tuple[str, str]:
    """The template to write and the report's note for it."""
    found = HOLDS.get((plugin_key(taskset), privileged))
    if template != DEFAULT or found is None:
        return template, ""
    holds, text = found
    return text + _TAIL, (f"whileai's default, worded for {plugin_key(taskset)}: its {privileged!r} "
                          f"is {holds}")


__all__ = ["DEFAULT", "HOLDS", "worded"]
