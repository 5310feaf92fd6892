"""The data step: verl's own datasets on the run's rows, with the student's chat template.

- main_ppo: `create_rl_dataset` → `RLHFDataset` (utils/dataset/rl_dataset.py) on data.train_files
  and val_files: the prompt column read by `data.prompt_key`, prompts over `max_prompt_length`
  filtered out (rl_dataset.py:197-276: a row whose prompt cannot be read counts as overlong and is
  dropped, with verl's traceback printed), a row taken as the trainer takes it (`__getitem__`) and
  the chat template applied as the agent loop does (agent_loop.py:318-362, capped to
  rollout.prompt_length). The step fails when no full batch is left (the dataloader drops the last
  partial batch: trainer_base.py:744-750) or no validation row is.
- main_generation_server: the folder's own `convert.py prompts` writes the prompts, then the lines of
  main_generation_server.py:147-156 read them (`pd.read_parquet`, `dataset[data.prompt_key]`).
- sft_trainer: the prompts, a stand-in teacher answer each (the generation server has no reasoning
  parser: a Qwen3 teacher's answer keeps its `<think>…</think>`), the folder's own
  `convert.py messages`, then `create_sft_dataset` → `MultiTurnSFTDataset` and one row of it: the
  per-turn tokens checked against the whole conversation's (multiturn_sft_dataset.py:425-456, the
  AssertionError unless `data.ignore_input_ids_mismatch`); the facts say whether the teacher's
  reasoning survived in the trained tokens.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from whileai.targets.verl.rehearse.common import (
    files,
    gsm8k_rows,
    last_error,
    prompt_ids,
    quiet,
    read_rows,
    rows_or_stand_in,
    run_step,
    texts_of,
    where,
    write_rows,
)
from whileai.targets.verl.rehearse.context import Context, StepRecord
from whileai.targets.verl.rehearse.student import tokenizer

THINK = "I read the task, then I answer it."  # the stand-in teacher's reasoning


def run(ctx: Context) -> StepRecord:
    body = {"main_ppo": _rl, "main_generation_server": _generation, "sft_trainer": _sft}[ctx.job]
    return run_step("data", ctx, body)


# -- main_ppo: RLHFDataset -----------------------------------------------------------------------
def _rl(ctx: Context, step: StepRecord) -> None:
    import datasets
    from verl.trainer.ppo.utils import create_rl_dataset

    datasets.disable_caching()  # each rehearsal filters afresh: no result reused from ~/.cache

    cfg = ctx.config
    data = cfg.data
    train = rows_or_stand_in(ctx, step, files(data.train_files), "train")
    val = rows_or_stand_in(ctx, step, files(data.val_files), "test")
    stood = bool(step.stood_in)
    rows = [r for p in train for r in read_rows(p)]
    model = str(cfg.actor_rollout_ref.model.path)
    tok, why = tokenizer(model, texts_of(rows), ctx.scratch / "student")
    step.stood_in.append(why)
    step.ran += ["verl.trainer.ppo.utils.create_rl_dataset", "verl.utils.dataset.rl_dataset.RLHFDataset"]
    key = str(data.prompt_key)
    step.facts |= {"prompt_key": key, "rows": len(rows), "columns": sorted(rows[0]) if rows else []}
    need = 1 if stood else int(data.get("gen_batch_size") or data.train_batch_size)
    for name, paths, most, least in (("train", train, data.get("train_max_samples", -1), need),
                                     ("val", val, data.get("val_max_samples", -1), 1)):
        with quiet() as printed:
            ds = create_rl_dataset([str(p) for p in paths], data, tok, None, is_train=name == "train",
                                   max_samples=most if most is not None else -1)
        step.facts[f"{name}_kept"] = len(ds)
        if len(ds) < least:
            missing = [r for r in rows if key not in r]
            why_not = f"KeyError: {key!r}" if missing else last_error(printed.getvalue())
            step.error = (f"RLHFDataset kept {len(ds)} {name} rows, fewer than {least} (a full batch: "
                          f"the dataloader drops a partial one)" + (f"; each row it dropped raised "
                          f"{why_not} in its length filter (data.prompt_key={key}; the rows' columns: "
                          f"{', '.join(step.facts['columns'])})" if why_not else
                          f": every prompt is longer than data.max_prompt_length={data.max_prompt_length}"))
            step.cause = ("verl/utils/dataset/rl_dataset.py:248-276 (a row it cannot read counts as "
                          "overlong and is filtered out)")
            return
    row = ds[0]  # the last one built: validation's
    rollout_len = int(cfg.actor_rollout_ref.rollout.prompt_length)
    ids = prompt_ids(tok, row["raw_prompt"], **dict(data.get("apply_chat_template_kwargs") or {}))
    step.stood_in.append("the agent loop's prompt tokens: the chat template applied to raw_prompt, "
                         "capped to rollout.prompt_length -> agent_loop.py:318-362, 437-445")
    step.facts |= {"prompt_tokens": len(ids), "rollout_prompt_length": rollout_len,
                   "truncated": len(ids) > rollout_len}


# -- main_generation_server: its own prompt reading ----------------------------------------------
def _generation(ctx: Context, step: StepRecord) -> None:
    import numpy as np
    import pandas as pd

    cfg = ctx.config
    paths = _prompts(ctx, step)
    # main_generation_server.py:147-156, verbatim but for the paths
    datasets = [pd.read_parquet(p) for p in paths]
    dataset = pd.concat(datasets, axis=0, ignore_index=True)
    chat_lst = dataset[cfg.data.prompt_key].tolist()
    chat_lst = [chat.tolist() for chat in chat_lst]
    np.array(chat_lst)
    step.ran.append("verl.trainer.main_generation_server.main: its prompt reading (lines 147-156)")
    model = str(cfg.actor_rollout_ref.model.path)
    tok, why = tokenizer(model, [m["content"] for c in chat_lst for m in c], ctx.scratch / "teacher")
    step.stood_in.append(why)
    longest = max(len(prompt_ids(tok, c)) for c in chat_lst)
    step.facts |= {"prompts": len(chat_lst), "prompt_key": str(cfg.data.prompt_key),
                   "prompt_tokens_max": longest}


def _prompts(ctx: Context, step: StepRecord) -> list[Path]:
    """The prompts parquet: the run's own when it exists, else what the folder's convert.py writes
    from the run's rows (run.sh runs it before verl's first command)."""
    want = [Path(p) for p in files(ctx.config.data.train_files)]
    if all(p.is_file() for p in want):
        return want
    script, convert = ctx.folder / "run.sh", ctx.folder / "convert.py"
    m = re.search(r"convert\.py prompts (\S+)", script.read_text() if script.is_file() else "")
    if m is None or not convert.is_file():
        raise FileNotFoundError(f"{', '.join(str(p) for p in want)}: no such file, and no convert.py "
                                "line in run.sh makes it")
    source = ctx.folder / m.group(1)
    if not source.is_file():
        source = write_rows(ctx.scratch / "rows" / source.name, gsm8k_rows("train"))
        step.stood_in.append(f"{m.group(1)}: made by run.sh at run time -> {len(gsm8k_rows('train'))} "
                             "stand-in gsm8k rows in verl's columns (examples/data_preprocess/gsm8k.py)")
    out = ctx.scratch / "prompts.parquet"
    _convert(ctx, ["prompts", str(source), str(out), "--rows", "4", "--seed", "0"])
    step.ran.append(f"the run folder's convert.py prompts (4 rows of {m.group(1)})")
    return [out]


def _convert(ctx: Context, args: list[str]) -> None:
    done = subprocess.run([sys.executable, str(ctx.folder / "convert.py"), *args], cwd=ctx.folder,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"convert.py {args[0]} failed: {(done.stderr or done.stdout).strip()[-300:]}")


# -- sft_trainer: MultiTurnSFTDataset ------------------------------------------------------------
def _sft(ctx: Context, step: StepRecord) -> None:
    import pandas as pd
    from verl.trainer.sft_trainer import create_sft_dataset

    cfg = ctx.config
    data = cfg.data
    paths = [Path(p) for p in files(data.train_files)]
    if not all(p.is_file() for p in paths):
        prompts = _prompts(ctx, step)
        frame = pd.concat([pd.read_parquet(p) for p in prompts], ignore_index=True)
        # main_generation_server.py:176-183: each prompt's n answers in `responses`, as the
        # teacher wrote them (no reasoning parser: a thinking model's answer keeps <think>)
        frame["responses"] = [[_answer(r)] * 2 for r in frame.to_dict("records")]
        responses = ctx.scratch / "responses.parquet"
        frame.to_parquet(responses)
        paths = [ctx.scratch / "sft.parquet"]
        _convert(ctx, ["messages", str(responses), str(paths[0]),
                       "--val", str(ctx.scratch / "sft_val.parquet")])
        step.ran.append("the run folder's convert.py messages")
        step.stood_in.append("the teacher's answers: 2 stand-in answers a prompt, each '<think>…</think>' "
                             "then the answer, as main_generation_server.py:176-183 writes a thinking "
                             "teacher's text (no reasoning parser)")
    rows = [r for p in paths for r in read_rows(p)]
    tok, why = tokenizer(str(cfg.model.path), texts_of(rows), ctx.scratch / "student")
    step.stood_in.append(why)
    ds = create_sft_dataset([str(p) for p in paths], data, tok, None,
                            max_samples=data.get("train_max_samples", -1))
    step.ran += ["verl.trainer.sft_trainer.create_sft_dataset",
                 "verl.utils.dataset.multiturn_sft_dataset.MultiTurnSFTDataset"]
    step.facts |= {"rows": len(ds),
                   "ignore_input_ids_mismatch": bool(data.get("ignore_input_ids_mismatch", False))}
    try:
        item = ds[0]
    except AssertionError as e:
        step.cause = f"{where(e, ctx.folder)} (MultiTurnSFTDataset.sanity_check)"
        step.error = ("AssertionError: MultiTurnSFTDataset's per-turn tokens differ from the whole "
                      f"conversation's ({_family_note(str(cfg.model.path))}); set "
                      "data.ignore_input_ids_mismatch=True (sft_trainer_engine.yaml:42-47)")
        step.facts["verl_message"] = str(e).splitlines()[0]
        return
    ids, mask = item["input_ids"], item["loss_mask"]
    trained = tok.decode(ids[mask.bool()].tolist())
    step.facts |= {"tokens": int(ids.shape[0]), "trained_tokens": int(mask.sum()),
                   "teacher_reasoning_trained": THINK in trained}


def _answer(row: dict[str, Any]) -> str:
    chat = list(row["prompt"])
    return f"<think>\n{THINK}\n</think>\n\nThe answer to: {str(chat[-1]['content'])[:40]}"


def _family_note(model: str) -> str:
    from whileai.targets.verl.rehearse.student import family

    return ("Qwen3's template adds an empty think block to the last assistant turn of the whole "
            "conversation only" if family(model) == "qwen3" else f"{model}'s chat template")
