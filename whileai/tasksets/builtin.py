"""The built-in tasksets (data generators and reward functions) and the tasks a file-based target
trains on.

`resolve(taskset_id)` names the built-in taskset for a spec's `taskset`, or raises SpecError
listing what is available; `for_run(run)` and `rows(run)` are a run's tasks (its `data` file,
else the built-in set); `source(taskset)` is a taskset module's text, shipped verbatim;
`task_texts(run)` is what whileai.vocab.tiny's models learn from a run's tasks (the tokenizer's
texts and the warm-up's pairs), `default_texts()` the reverse-text texts alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

from whileai.errors import SpecError
from whileai.tasksets import local, reverse_text
from whileai.tasksets.reverse_text import reverse_text_reward


@dataclass(frozen=True)
class Taskset:
    name: str
    module: str  # module file name under whileai/tasksets/ (shipped verbatim)
    reward: str  # reward function name in that module
    fields: tuple[str, ...]  # fields of each task (usable as OPSD privileged keys)
    train_size: int
    holdout_size: int
    description: str


BUILTIN: dict[str, Taskset] = {
    "reverse-text": Taskset(
        name="reverse-text",
        module="reverse_text",
        reward="reverse_text_reward",
        fields=("answer",),
        train_size=reverse_text.TRAIN_SIZE,
        holdout_size=reverse_text.HOLDOUT_SIZE,
        description="reverse a random phrase character by character; LCS-ratio reward",
    ),
}


def name_of(taskset_id: str) -> str:
    """'owner/reverse-text@0.1' → 'reverse-text'."""
    return taskset_id.split("/")[-1].split("@")[0]


def needs_data(who: str) -> str:
    """What a file-based target (or `who`) takes instead of a catalogue taskset it cannot generate."""
    return (f"{who} reads tasks from files: a taskset whose data whileai can generate "
            f"locally ({', '.join(sorted(BUILTIN))}), or your own tasks with data = \"tasks.jsonl\" "
            "in the spec (one {\"prompt\": ...} object per line; taskset is then a label)")


def resolve(taskset_id: str, *, target: str = "trl") -> Taskset:
    found = BUILTIN.get(name_of(taskset_id))
    if found is None:
        raise SpecError("taskset", taskset_id, needs_data(f"the {target} target"))
    return found


def for_run(run: Any) -> Taskset:
    """The tasks a file-based target trains on: the spec's `data` file, else the built-in set."""
    if run.data is None:
        return resolve(run.taskset)
    tasks = local.load(run.data)
    return Taskset(
        name=local.display(tasks.path), module="", reward="", fields=tasks.fields,
        train_size=len(tasks.train), holdout_size=len(tasks.test),
        description=f"tasks from {local.display(tasks.path)}",
    )


def rows(run: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, holdout) rows for `run`, before any per-method columns are added."""
    if run.data is not None:
        tasks = local.load(run.data)
        return tasks.train, tasks.test
    return reverse_text.splits()


def default_texts() -> list[str]:
    """Reverse-text phrases, their reversals and the prompt's fixed words."""
    train, holdout = reverse_text.splits()
    texts = [reverse_text.SYSTEM_PROMPT, "<reversed_text>", "</reversed_text>", "system user assistant"]
    for ex in train + holdout:
        texts += [ex["prompt"][-1]["content"], ex["answer"]]
    return texts


# how a built-in taskset's answer is written in a completion (for the supervised warm-up)
ANSWER_FORMAT = {"reverse-text": "<reversed_text>\n{answer}\n</reversed_text>"}


def task_texts(run: Any) -> tuple[list[str], list[tuple[Any, str]]]:
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


def source(taskset: Taskset) -> str:
    """The text of the taskset's self-contained module."""
    return resources.files("whileai.tasksets").joinpath(f"{taskset.module}.py").read_text()


__all__ = ["BUILTIN", "Taskset", "default_texts", "for_run", "name_of", "needs_data", "resolve",
           "reverse_text_reward", "rows", "source", "task_texts"]
