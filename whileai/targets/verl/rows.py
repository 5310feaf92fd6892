"""The tasks as verl's rows, and the reward function verl calls on them: compile's one call for data.

verl's RL dataset reads JSON lines as well as parquet (utils/dataset/rl_dataset.py:173-178); a row
is `data_source`, `prompt` (chat messages), `ability`, `reward_model` (`style`, `ground_truth`:
what the reward step passes on, experimental/reward_loop/reward_manager/naive.py:42-43) and
`extra_info` (the task's other fields). The reward is `compute_score(data_source, solution_str,
ground_truth, extra_info)` in `reward.py`, named by `reward.custom_reward_function.path`: verl's
built-in scorers only know their own data sources (utils/reward_score/__init__.py:44-47).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from whileai.errors import SpecError
from whileai.spec.run import RunSpec
from whileai.tasksets.builtin import for_run, rows, source

TRAIN, TEST = "data/train.jsonl", "data/test.jsonl"
REWARD = "reward.py"
OWN = "whileai/own-data"  # data_source of rows from the spec's data file


class Data(NamedTuple):
    files: dict[str, str]  # run-directory path -> text
    train_rows: int
    test_rows: int
    reward_note: str  # how reward.py scores a completion


def data(run: RunSpec, test_rows: int) -> Data:
    """The run's train and holdout rows (the first `test_rows` of the holdout) and reward.py."""
    taskset = for_run(run)
    if run.method.rewarded and not taskset.module and run.reward is None:
        raise SpecError("reward", None, "an importable 'module.function' for GRPO on your own data "
                        "(called once per completion: completions=[text] and each task field as a "
                        "one-item list)")
    train, holdout = rows(run)
    holdout = holdout[:test_rows]
    name = taskset.name if taskset.module else OWN
    files = {TRAIN: _jsonl(name, train, "train"), TEST: _jsonl(name, holdout, "test")}
    if run.reward is not None:
        files[REWARD], note = _wrapper(run.reward), (f"{run.reward}, called by reward.py: it must be "
                                                      "importable where verl runs")
    elif taskset.module:
        files[REWARD] = source(taskset) + _BUILTIN.format(reward=taskset.reward)
        note = f"{taskset.name}'s own reward ({taskset.description}), in reward.py"
    else:
        files[REWARD], note = _ZERO, "none: OPD and SFT train on the teacher; reward.py logs 0.0"
    return Data(files, len(train), len(holdout), note)


def verl_row(data_source: str, row: dict[str, Any], split: str, index: int) -> dict[str, Any]:
    prompt = row["prompt"]
    chat = prompt if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
    rest = {k: v for k, v in row.items() if k not in ("prompt", "split")}
    return {"data_source": data_source, "prompt": chat, "ability": "whileai",
            "reward_model": {"style": "rule", "ground_truth": str(rest.get("answer", ""))},
            "extra_info": {"split": split, "index": index, **rest}}


def _jsonl(name: str, got: list[dict[str, Any]], split: str) -> str:
    return "".join(json.dumps(verl_row(name, r, split, i), ensure_ascii=False) + "\n"
                   for i, r in enumerate(got))


_BUILTIN = '''

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function (written by whileai): {reward} on one completion."""
    return float({reward}([solution_str], [ground_truth])[0])
'''

_ZERO = '''"""verl's custom reward function (written by whileai): this method trains on a teacher, not a
reward, so every completion scores 0.0 (verl still calls a reward for its metrics)."""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return 0.0
'''


def _wrapper(dotted: str) -> str:
    module, _, name = dotted.rpartition(".")
    return f'''"""verl's custom reward function (written by whileai): {dotted} on one completion."""

import importlib


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    reward = getattr(importlib.import_module({module!r}), {name!r})
    columns = {{k: [v] for k, v in (extra_info or {{}}).items() if k not in ("split", "index")}}
    return float(reward(completions=[solution_str], **columns)[0])
'''
