"""The reward step: verl's own reward manager calling the run's reward on stand-in completions.

verl loads the reward as its reward loop does (experimental/reward_loop/reward_loop.py:130-135):
`load_reward_manager` (trainer/ppo/reward.py:111-155) imports `reward.custom_reward_function.path`
and `.name` with `load_extern_object` (reward.py:50-84; the run folder's reward.py) or, without
one, verl's `default_compute_score` chosen by `data_source` (utils/reward_score/__init__.py), and
builds the registered manager (`naive`: experimental/reward_loop/reward_manager/naive.py). Its
`run_single` decodes the response, adds `num_turns` and `rollout_reward_scores` to the row's
`extra_info` (naive.py:47-52) and calls the function as verl calls it.

Stand-ins, for each of the run's first rows: a completion with the row's ground truth (written in
the answer formats the bundled tasks parse: `<reversed_text>`, gsm8k's `####`, a boxed answer) and
one without it, tokenised by the stand-in tokenizer into a one-row DataProto (the agent loop's
`prompts`, `responses`, `attention_mask`, `__num_turns__`: agent_loop.py:1075-1102). The step
fails when the reward raises (verl's own call, so a user function that rejects verl's extra keys
fails here) or gives no row's right answer more than its wrong one.
"""

from __future__ import annotations

from typing import Any

from whileai.targets.verl.rehearse.common import (
    files,
    prompt_ids,
    read_rows,
    rows_or_stand_in,
    run_step,
    texts_of,
)
from whileai.targets.verl.rehearse.context import Context, StepRecord
from whileai.targets.verl.rehearse.student import tokenizer

ROWS = 4  # the run's first rows, each scored twice


def run(ctx: Context) -> StepRecord:
    if ctx.job != "main_ppo":
        return run_step("reward", ctx, _none)
    import sys

    before, path = set(sys.modules), list(sys.path)
    try:
        return run_step("reward", ctx, _reward)
    finally:  # the run's reward.py (and what it imported from its folder) is forgotten after it
        folder = str(ctx.folder.resolve())
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(folder):
                del sys.modules[name]
        sys.path[:] = path


def _none(ctx: Context, step: StepRecord) -> None:
    step.facts["skipped"] = f"{ctx.job} computes no reward"


def completions(truth: str) -> tuple[str, str]:
    """(one with the ground truth, one without): the answer in the formats the tasks parse."""
    def said(answer: str) -> str:
        return (f"<think>\nworking it out\n</think>\n<reversed_text>{answer}</reversed_text>\n"
                f"The answer is \\boxed{{{answer}}}.\n#### {answer}")

    return said(truth), said("no idea")


def _reward(ctx: Context, step: StepRecord) -> None:
    import numpy as np
    import torch

    _without_aiohttp(step)
    from verl import DataProto
    from verl.trainer.ppo.reward import load_reward_manager

    cfg = ctx.config
    paths = rows_or_stand_in(ctx, step, files(cfg.data.train_files), "train")
    rows = [r for p in paths for r in read_rows(p)][:ROWS]
    key = str(cfg.data.prompt_key)
    if not rows or any(key not in r for r in rows):
        raise KeyError(f"the rows have no {key!r} column (data.prompt_key): rl_dataset.py:313 reads it")
    tok, why = tokenizer(str(cfg.actor_rollout_ref.model.path),
                         texts_of(rows) + list(completions("x")), ctx.scratch / "student")
    step.stood_in.append(why)
    manager = load_reward_manager(cfg, tok)
    fn = cfg.reward.custom_reward_function
    scorer = f"{fn.path}:{fn.name}" if fn.get("path") else "verl.utils.reward_score.default_compute_score"
    step.ran += ["verl.trainer.ppo.reward.load_reward_manager",
                 f"verl.experimental.reward_loop.reward_manager: {type(manager).__name__}.run_single", scorer]
    step.stood_in.append(f"completions: for each of {len(rows)} rows, one with its ground truth and one "
                         "without, as a one-row DataProto -> agent_loop.py:1075-1102")
    scores: list[list[float]] = []
    for row in rows:
        truth = row["reward_model"]["ground_truth"]
        pair = []
        for text in completions(str(truth)):
            data = _batch(tok, row, key, text, DataProto, np, torch)
            try:
                out = manager.loop.run_until_complete(manager.run_single(data))
            except TypeError as e:
                if "unexpected keyword" in str(e):  # verl's keys reached a function that rejects them
                    step.error = f"TypeError: {e} ({_VERL_KEYS})"
                raise
            pair.append(float(out["reward_score"]))
        scores.append(pair)
    step.facts |= {"scores": scores, "extra_info_added": ["num_turns", "rollout_reward_scores"],
                   "data_source": str(rows[0].get("data_source"))}
    dist = ctx.config.get("distillation") or {}
    trains = not dist.get("enabled") or (dist.get("distillation_loss") or {}).get("use_task_rewards", True)
    step.facts["reward_trains"] = bool(trains)  # OPD without task rewards: scored for metrics only
    if trains and not any(right > wrong for right, wrong in scores):
        step.error = ("the reward gives no completion with the ground truth more than one without it "
                      f"(right, wrong per row: {scores})")
        step.cause = str(fn.path) if fn.get("path") else "verl/utils/reward_score/__init__.py"


def _without_aiohttp(step: StepRecord) -> None:
    """verl's reward loop package imports aiohttp (reward_loop.py:19) for the reward-model router,
    which a custom or rule reward never calls; where it is not installed an empty module stands in."""
    import importlib.machinery
    import importlib.util
    import sys
    import types

    if "aiohttp" not in sys.modules and importlib.util.find_spec("aiohttp") is None:
        stub = types.ModuleType("aiohttp")
        stub.__spec__ = importlib.machinery.ModuleSpec("aiohttp", None)
        sys.modules["aiohttp"] = stub
    spec = getattr(sys.modules.get("aiohttp"), "__spec__", None)
    if spec is not None and spec.origin is None:  # the stand-in (a real one has a file)
        step.stood_in.append("aiohttp (not installed here; only the reward-model router's HTTP calls "
                             "use it) -> an empty module: experimental/reward_loop/reward_loop.py:19")


_VERL_KEYS = ("verl calls the reward with data_source, solution_str, ground_truth and extra_info "
              "(experimental/reward_loop/reward_manager/naive.py:76-83) and adds num_turns and "
              "rollout_reward_scores to extra_info (naive.py:50-52)")


def _batch(tok: Any, row: dict[str, Any], key: str, text: str, proto: Any, np: Any, torch: Any) -> Any:
    """One row as the agent loop hands it to the reward loop: left-padded prompt, the response."""
    prompt = prompt_ids(tok, list(row[key]))
    response = list(tok(text + str(tok.eos_token), add_special_tokens=False)["input_ids"])
    extra = dict(row.get("extra_info") or {})
    return proto.from_dict(
        tensors={"prompts": torch.tensor([prompt]), "responses": torch.tensor([response]),
                 "attention_mask": torch.ones(1, len(prompt) + len(response), dtype=torch.long)},
        non_tensors={"data_source": np.array([row.get("data_source")], dtype=object),
                     "reward_model": np.array([dict(row["reward_model"])], dtype=object),
                     "extra_info": np.array([extra], dtype=object),
                     "__num_turns__": np.array([2], dtype=np.int32)})
