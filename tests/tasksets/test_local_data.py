"""`data`: your own tasks as a local JSONL file, for backends that train from files (TRL)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

import whileai as wai
from whileai.errors import SpecError
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.trl import compile as trl

TASKS = ROOT / "tests" / "data" / "tasks.jsonl"
T = "vllm:a/b@http://localhost:8001/v1"


def run(method: Any, **kw: Any) -> wai.RunSpec:
    fields: dict[str, Any] = {"data": str(TASKS), "prompts": 4} | kw
    return wai.RunSpec(taskset="my-qa", model="Qwen/Qwen3-0.6B", method=method, **fields)


def rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in text.splitlines()]


def test_trl_copies_the_tasks_with_the_split_and_method_columns() -> None:
    c = trl.compile(run(wai.OPSD()))
    train, test = rows(c.files["data/train.jsonl"]), rows(c.files["data/test.jsonl"])
    assert [r["answer"] for r in test] == ["tac", "3"] and len(train) == 64
    assert all(r["privileged_context"] == r["answer"] and "split" not in r for r in train + test)
    assert {i.field for i in c.ignores} >= {"taskset"}
    assert any(r.field == "data" and r.path == "dataset_name" for r in c.reads)


def test_grpo_on_own_data_needs_and_reads_a_reward() -> None:
    with pytest.raises(SpecError, match="^reward: .*module.function"):
        trl.compile(run(wai.GRPO(samples=2)))
    c = trl.compile(run(wai.GRPO(samples=2), reward="my_rewards.contains_answer"))
    assert "reward_funcs:\n- my_rewards.contains_answer\n" in c.text
    assert "reverse_text.py" not in c.files
    assert c.files["my_rewards.py"] == (TASKS.parent / "my_rewards.py").read_text()  # copied in


def test_prime_rl_refuses_data_and_reward_it_would_not_train_on() -> None:
    """Ignored, they made a run that exits 0 and trains on the taskset package's rows and rubric,
    not the user's: each is refused naming the field and what prime-rl runs instead."""
    with pytest.raises(SpecError, match=r"^data: .*taskset package named by taskset \('my-qa'\)"):
        prime_rl.compile(run(wai.GRPO(), reward="m.f"))
    with pytest.raises(SpecError, match=r"^reward: 'm\.f' is not allowed; .*rubric.*-t trl"):
        prime_rl.compile(run(wai.GRPO(), reward="m.f").model_copy(update={"data": None}))


@pytest.mark.parametrize("content,words", [
    ('{"prompt": "a"}\n{"prompt": oops}\n', ["line 2", "one JSON object per line"]),
    ('{"prompt": "a"}\n{"question": "b"}\n', ["line 2", "'prompt'"]),
    ('{"prompt": "a"}\n', ["at least two tasks"]),
    ('{"prompt": "a"}\n{"prompt": [{"role": "user", "content": "b"}]}\n', ["line 2", "one form"]),
    ('{"prompt": "a", "split": "test"}\n{"prompt": "b", "split": "test"}\n', ["not \"split\""]),
])
def test_bad_task_files_name_the_line(tmp_path: Path, content: str, words: list[str]) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text(content)
    with pytest.raises(SpecError) as info:
        trl.compile(run(wai.OPD(T), data=str(p)))
    assert str(info.value).startswith("data:")
    for w in words:
        assert w in str(info.value)


def test_missing_file_and_missing_privileged_field(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="^data: .*readable"):
        trl.compile(run(wai.OPD(T), data=str(tmp_path / "nope.jsonl")))
    with pytest.raises(SpecError, match="^method.privileged: 'solution'"):
        trl.compile(run(wai.OPSD(privileged="solution")))


def test_reward_must_be_a_dotted_path() -> None:
    with pytest.raises(SpecError, match="^reward:"):
        run(wai.GRPO(), reward="not a path")
