"""A mixture's source may carry its own `data` and `reward`, as the run's top level does: the file
relative to the spec, the reward a 'module.function', the taskset then a label."""

from __future__ import annotations

from pathlib import Path

import pytest

import whileai as wai
from whileai.spec.load import build, load_spec

SPEC = """taskset = "reverse-text"
model = "Qwen/Qwen3-0.6B"
[method]
type = "opd"
teacher = "vllm:Qwen/Qwen3-1.7B@http://a:8001/v1"
[[sources]]
taskset = "my-own-tasks"
data = "tasks/mine.jsonl"
reward = "rewards.score"
"""


def test_a_sources_data_is_read_relative_to_the_spec(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "mine.jsonl").write_text('{"prompt": "hi", "answer": "ih"}\n')
    (tmp_path / "run.toml").write_text(SPEC)
    run = load_spec(tmp_path / "run.toml")
    [source] = run.sources
    assert source.data == str(tmp_path / "tasks" / "mine.jsonl")
    assert source.reward == "rewards.score" and source.taskset == "my-own-tasks"  # a label: no typo check


@pytest.mark.parametrize(("field", "value"), [("reward", "not a dotted name"), ("data", ""),
                                              ("rewards", "a.b")])
def test_a_sources_own_tasks_fields_are_checked(field: str, value: str) -> None:
    with pytest.raises(wai.SpecError, match=rf"^sources\[0\]\.{field}: "):
        build(wai.RunSpec, {"taskset": "reverse-text", "model": "Qwen/Qwen3-0.6B",
                                    "method": {"type": "grpo"},
                                    "sources": [{"taskset": "gsm8k", field: value}]})
