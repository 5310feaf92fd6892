"""What the rehearsal's steps share: run a step and time it, say where it failed, read its rows,
stand in for rows a run folder makes only at run time. Standard library at import."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from whileai.targets.verl.rehearse.context import Context, StepRecord

# verl's gsm8k rows (examples/data_preprocess/gsm8k.py at verl's v0.9.0 tag): a question with the
# instruction to end on "####", the number as the ground truth
GSM8K_SUFFIX = 'Let\'s think step by step and output the final answer after "####".'
GSM8K = [("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips "
          "in May. How many clips did Natalia sell altogether in April and May?", "72"),
         ("Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. "
          "How much did she earn?", "10"),
         ("Betty is saving money for a new wallet which costs $100. She has half of the money. How "
          "much more money does she need if her parents give her $15 and her grandparents twice as "
          "much as her parents?", "5"),
         ("James writes a 3-page letter to 2 different friends twice a week. How many pages does he "
          "write a year?", "624")]


def run_step(name: str, ctx: Context, body: Callable[[Context, StepRecord], None]) -> StepRecord:
    """`body(ctx, step)` timed, verl's prints and warnings kept off stdout (inside.py prints the
    steps there); an exception fails the step with its first line and where it was raised."""
    step = StepRecord(name=name, ok=False)
    start = time.perf_counter()
    with quiet() as out:
        try:
            body(ctx, step)
            step.ok = not step.error
        except Exception as e:  # verl's verdict, whatever it raises
            step.error = step.error or first_line(e)
            step.cause = step.cause or where(e, ctx.folder)
    if not step.ok and "printed" not in step.facts:
        step.facts["printed"] = out.getvalue()[-2000:]
    step.seconds = round(time.perf_counter() - start, 3)
    return step


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """verl prints, warns and logs as it works; the buffer holds what it printed."""
    buf = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            yield buf
        finally:
            logging.disable(logging.NOTSET)


def root(e: BaseException) -> BaseException:
    """The exception a wrapper was raised from (Hydra's InstantiationException wraps the
    dataclass's own ValueError)."""
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def first_line(e: BaseException) -> str:
    e = root(e)
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def where(e: BaseException, folder: Path) -> str:
    """The deepest frame of `e` in verl ("verl/utils/dataset/x.py:456") or in the run folder
    ("reward.py:12"); else the deepest frame's file and line."""
    frames = traceback.extract_tb(root(e).__traceback__)
    for f in reversed(frames):
        path = Path(f.filename)
        parts = path.parts
        if "site-packages" in parts and parts[parts.index("site-packages") + 1:][:1] == ("verl",):
            return f"{'/'.join(parts[parts.index('site-packages') + 1:])}:{f.lineno}"
        with contextlib.suppress(ValueError):
            return f"{path.resolve().relative_to(folder.resolve())}:{f.lineno}"
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""


def last_error(printed: str) -> str:
    """The last `SomeError: message` line of a printed traceback (verl prints and goes on)."""
    found = re.findall(r"^(\w+(?:Error|Exception): .*)$", printed, re.M)
    return found[-1] if found else ""


def prompt_ids(tok: Any, chat: list[Any], **kwargs: Any) -> list[int]:
    """A chat's prompt token ids under the tokenizer's chat template (generation prompt added)."""
    text = tok.apply_chat_template(list(chat), add_generation_prompt=True, tokenize=False, **kwargs)
    return list(tok(text, add_special_tokens=False)["input_ids"])


def files(value: Any) -> list[str]:
    """A data.train_files / val_files value: one path or a list of them."""
    return [value] if isinstance(value, str) else [str(v) for v in value]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A data file's rows, as verl reads parquet, json and jsonl (rl_dataset.py:173-178)."""
    if path.suffix == ".parquet":
        import pandas as pd

        return list(pd.read_parquet(path).to_dict("records"))
    text = path.read_text()
    if path.suffix == ".json" and text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def gsm8k_rows(split: str) -> list[dict[str, Any]]:
    """Stand-in rows in the columns verl's gsm8k preprocessing writes."""
    return [{"data_source": "openai/gsm8k",
             "prompt": [{"role": "user", "content": f"{q} {GSM8K_SUFFIX}"}],
             "ability": "math",
             "reward_model": {"style": "rule", "ground_truth": a},
             "extra_info": {"split": split, "index": i, "answer": f"... #### {a}", "question": q}}
            for i, (q, a) in enumerate(GSM8K)]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        import pandas as pd

        pd.DataFrame(rows).to_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rows_or_stand_in(ctx: Context, step: StepRecord, paths: list[str], split: str) -> list[Path]:
    """The run's data files; one the folder makes only at run time (run.sh prepares the gsm8k rows)
    is written to the scratch folder with stand-in rows in verl's columns, and said so."""
    out = []
    for p in paths:
        path = Path(p)
        if path.is_file():
            out.append(path)
            continue
        stand = write_rows(ctx.scratch / "rows" / path.name, gsm8k_rows(split))
        step.stood_in.append(f"{path.name}: made by run.sh at run time, not here -> {len(GSM8K)} "
                             "stand-in gsm8k rows in verl's columns (examples/data_preprocess/gsm8k.py)")
        out.append(stand)
    return out


def texts_of(rows: list[dict[str, Any]]) -> list[str]:
    """Every string in the rows (what the stand-in tokenizer learns its vocabulary from)."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)) or type(v).__name__ == "ndarray":
            for x in v:
                walk(x)

    for r in rows[:64]:
        walk(r)
    return out
