"""A run's tasks as verl reads them: the rows, the reward verl calls, and the steps before training.

    plan = rows(run)      # pure: nothing written, nothing downloaded, no verl, no pyarrow
    plan.files            # {"data/train.jsonl": b"...", "data/test.jsonl": b"...", "reward.py": b"..."}
    plan.overrides        # {"data.train_files": "$PWD/data/train.jsonl", ...,
                          #  "reward.custom_reward_function.path": "$PWD/reward.py", ...name: "compute_score"}
    plan.steps            # shell lines run.sh runs before verl (gsm8k_rows.py, SFT's parquet)
    plan.train_files, plan.val_files   # the run-folder paths verl reads

`DataPlan(files, overrides, steps, train_files, val_files, source)`: `files` maps run-folder paths
to bytes, `overrides` Hydra keys to raw values, `source` says where the rows come from.

- Own data (the spec's `data`, JSONL, whileai.tasksets.local) and whileai's generated tasksets
  (reverse-text): one verl RL row a task, as verl's examples write them: `data_source`, `prompt`
  as chat messages, `ability`, `reward_model={"style": "rule", "ground_truth": ...}` (what the
  reward step passes on: experimental/reward_loop/reward_manager/naive.py:42-43) and
  `extra_info={"split", "index", and the task's other fields}`. Written as JSON lines: verl's
  RLHFDataset reads `.jsonl` as well as `.parquet` (utils/dataset/rl_dataset.py:173-178), so
  compile needs no pyarrow. The SFT job's sampling step (main_generation_server.py:152) and SFT
  trainer (multiturn_sft_dataset.py:147) read parquet only: for SFT, `steps` converts the JSON
  lines with verl's own pandas on the machine that runs it.
- The reward: `reward.py` with verl's signature `compute_score(data_source, solution_str,
  ground_truth, extra_info=None)` (verl's built-in scorers know only their own data sources:
  utils/reward_score/__init__.py:44-47), calling the spec's `reward` (TRL's signature: prompts,
  completions and each task field as one-item lists, only those its signature takes: verl adds
  num_turns and rollout_reward_scores to extra_info, naive.py:50-52; its module, when a single
  file beside the spec, the data or the working directory, is copied in) or the taskset's own
  reward.
- gsm8k: whileai's gsm8k_rows.py (whileai.targets.verl.gsm8k) written into the run folder and
  run by run.sh: openai/gsm8k at a pinned hub revision made into the rows verl's own
  examples/data_preprocess/gsm8k.py writes (data_source openai/gsm8k, which verl's built-in gsm8k
  scorer reads); nothing is fetched from a URL, and compile loads nothing from the hub.
- Any other taskset (an environment with several seats, tools or turns, or rows whileai cannot
  make): a SpecError naming why, pointing to `data`.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from whileai.catalogs import tasksets as catalogue
from whileai.errors import SpecError
from whileai.targets.verl.pin import VERSION
from whileai.tasksets import builtin

HERE = "$PWD/"  # run.sh cds to its own folder; verl's Ray workers get absolute paths
TRAIN, TEST, REWARD = "data/train.jsonl", "data/test.jsonl", "reward.py"
GSM8K_PREP = "gsm8k_rows.py"  # whileai.targets.verl.gsm8k, written beside run.sh
OWN = "whileai/own-data"  # data_source of the spec's own rows


class DataPlan(NamedTuple):
    files: dict[str, bytes]  # run-folder path -> content
    overrides: dict[str, str]  # Hydra key -> raw value
    steps: list[str]  # shell lines before training
    train_files: str  # run-folder paths verl reads
    val_files: str
    source: str  # where the rows come from, for the report


def rewarded(run: Any) -> bool:
    """verl trains on the task reward: GRPO, or OPD with task_reward_kl_coef."""
    return bool(run.method.rewarded or getattr(run.method, "task_reward_kl_coef", None) is not None)


def rows(run: Any) -> DataPlan:
    """The run's rows, reward and preparation steps for verl (SpecError where verl cannot)."""
    sft = run.method.type == "sft"
    if getattr(run, "sources", None):
        return _mixture(run)
    if run.data is None and builtin.name_of(run.taskset) == "gsm8k":
        return _gsm8k(sft)
    taskset = runnable(run)
    if rewarded(run) and not taskset.module and run.reward is None:
        raise SpecError("reward", None, "an importable 'module.function' for GRPO on your own data, "
                        "or OPD with task_reward_kl_coef (TRL's signature: completions and each task "
                        "field as lists)")
    train, test = builtin.rows(run)
    name = taskset.name if taskset.module else OWN
    files = {TRAIN: _jsonl(name, train, "train", sft), TEST: _jsonl(name, test, "test", sft)}
    files.update(_reward(run, taskset))
    overrides = {"reward.custom_reward_function.path": HERE + REWARD,
                 "reward.custom_reward_function.name": "compute_score"}
    steps, train_file, test_file = _parquet(TRAIN, TEST) if sft else ([], TRAIN, TEST)
    overrides |= {"data.train_files": HERE + train_file, "data.val_files": HERE + test_file}
    return DataPlan(files, overrides, steps, train_file, test_file,
                    f"{len(train)} train and {len(test)} holdout rows from {taskset.description}")


def check_sources(run: Any) -> None:
    """Each source of a mixture: rows whileai can write for verl, else why not (one line, naming
    the source's field)."""
    from whileai.spec import mixture
    from whileai.targets.verl import mix

    for e in mixture.entries(run):
        v = mix.view(run, e)
        if v.data is None and builtin.name_of(e.taskset) == "gsm8k":
            raise SpecError(f"{e.field}data", None, "a JSONL file of this source's tasks: gsm8k's "
                            "rows are made as parquet at run time (gsm8k_rows.py), and a verl "
                            "mixture's rows are one JSON lines table whileai writes")
        try:
            runnable(v)
        except SpecError as err:
            raise SpecError(f"{e.field}{err.field}", err.value, err.allowed, hint=err.hint) from None


def _mixture(run: Any) -> DataPlan:
    """A mixture's rows (whileai.targets.verl.mix): every source's, one table, each row's
    data_source the key its teacher routes on; reward.py scores 0.0 (OPD sources: no reward)."""
    from whileai.spec import mixture
    from whileai.targets.verl import mix

    found = mixture.entries(run)
    ts = mix.teachers(run, found)
    train: list[bytes] = []
    test: list[bytes] = []
    said = []
    for e in found:
        v = mix.view(run, e)
        ds = mix.data_source(run, e, ts)
        tr, te = builtin.rows(v)
        train.append(_jsonl(ds, tr, "train", False))
        test.append(_jsonl(ds, te, "test", False) if e.eval else b"")
        said.append(f"{e.name}: {len(tr)} rows as {ds!r}")
    files = {TRAIN: b"".join(train), TEST: b"".join(test), REWARD: _ZERO.encode()}
    overrides = {"reward.custom_reward_function.path": HERE + REWARD,
                 "reward.custom_reward_function.name": "compute_score",
                 "data.train_files": HERE + TRAIN, "data.val_files": HERE + TEST}
    return DataPlan(files, overrides, [], TRAIN, TEST, "a mixture, one table: " + "; ".join(said))


def verl_row(data_source: str, task: dict[str, Any], split: str, index: int,
             fields: bool = True) -> dict[str, Any]:
    """One task as verl's RL row (the fields of verl's examples/data_preprocess scripts);
    `fields=False` keeps only split and index in extra_info (what parquet takes whatever the
    tasks' field types: pyarrow wants one type a column, datasets' JSON loader does not)."""
    prompt = task["prompt"]
    chat = prompt if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
    rest = {k: v for k, v in task.items() if k not in ("prompt", "split")}
    extra = {**rest, "prompt": prompt} if fields else {}
    return {"data_source": data_source, "prompt": chat, "ability": "whileai",
            "reward_model": {"style": "rule", "ground_truth": str(rest.get("answer", ""))},
            "extra_info": {**extra, "split": split, "index": index}}


def runnable(run: Any) -> builtin.Taskset:
    """The taskset's rows whileai can write for verl; else why verl cannot run it."""
    if run.data is not None:
        return builtin.for_run(run)
    name = builtin.name_of(run.taskset)
    if name in builtin.BUILTIN:
        return builtin.BUILTIN[name]
    entry = catalogue.entry(run.taskset) or {}
    roles = list(entry.get("roles") or {})
    why = (f"an environment with {len(roles)} seats ({', '.join(roles)}): verl trains one policy "
           "on single-turn rows" if len(roles) > 1 else
           "an environment whose agent calls tools" if entry.get("has_toolsets") or "tools" in
           entry.get("task_args", []) else
           f"a multi-turn environment ({entry['env_class']})" if entry.get("env_class") not in
           (None, "SingleAgentEnv") else
           "a taskset whose rows whileai cannot make for verl" if entry else
           "a taskset the catalogue does not know")
    raise SpecError("taskset", run.taskset, "gsm8k (verl's rows, from openai/gsm8k), "
                    f"{', '.join(sorted(builtin.BUILTIN))} (generated by whileai), or your own tasks "
                    "with data = \"tasks.jsonl\" (one {\"prompt\": ...} object a line) and reward = "
                    "\"module.function\"", hint=f"verl {VERSION} cannot run {why}")


def _gsm8k(sft: bool) -> DataPlan:
    """gsm8k as verl's rows: whileai's gsm8k_rows.py (verl's columns, openai/gsm8k at a pinned
    revision), written beside run.sh and run by it before training."""
    from whileai.targets.verl import gsm8k

    source = resources.files("whileai.targets.verl").joinpath("gsm8k.py").read_bytes()
    steps = [f"# gsm8k as verl's rows ({GSM8K_PREP}: {gsm8k.DATA_SOURCE} at revision "
             f"{gsm8k.REVISION[:12]}, verl's columns)",
             f"[ -f data/train.parquet ] || python3 {GSM8K_PREP} data"]
    train, test = "data/train.parquet", "data/test.parquet"
    return DataPlan({GSM8K_PREP: source}, {"data.train_files": HERE + train,
                                           "data.val_files": HERE + test}, steps, train, test,
                    f"{gsm8k.DATA_SOURCE}@{gsm8k.REVISION[:12]} as verl's rows ({GSM8K_PREP}, "
                    "verl's built-in gsm8k reward)" + (" for the teacher's prompts" if sft else ""))


def _parquet(*paths: str) -> tuple[list[str], str, str]:
    """SFT's jobs read parquet only: a step converting the JSON lines with verl's own pandas."""
    out = [p.removesuffix(".jsonl") + ".parquet" for p in paths]
    pairs = ", ".join(f"({a!r}, {b!r})" for a, b in zip(paths, out, strict=True))
    return ([f"python3 -c \"import pandas as pd; [pd.read_json(a, lines=True).to_parquet(b) "
             f"for a, b in [{pairs}]]\"  # verl's SFT jobs read parquet only"], out[0], out[1])


def _jsonl(name: str, tasks: list[dict[str, Any]], split: str, sft: bool) -> bytes:
    return "".join(json.dumps(verl_row(name, t, split, i, fields=not sft), ensure_ascii=False) + "\n"
                   for i, t in enumerate(tasks)).encode()


def _reward(run: Any, taskset: builtin.Taskset) -> dict[str, bytes]:
    """reward.py (verl's signature), and the user's single-file reward module beside it."""
    if run.reward is not None:
        module, _, func = run.reward.rpartition(".")
        found = _single_file(run, module)
        files = {f"{module}.py": _defining(found, func, run.reward)} if found else {}
        if found is None and importlib.util.find_spec(module.split(".")[0]) is None:
            raise SpecError("reward", run.reward, "an importable 'module.function'", hint=f"no "
                            f"{module.split('.')[0]}.py beside the spec, the data file or in the working "
                            "directory, and no such installed module")
        return files | {REWARD: _ADAPTER.format(module=module, func=func, what=run.reward).encode()}
    if taskset.module:
        body = builtin.source(taskset) + _BUILTIN.format(reward=taskset.reward)
        return {REWARD: body.encode()}
    return {REWARD: _ZERO.encode()}


def _single_file(run: Any, module: str) -> Path | None:
    """`module.py` beside the spec, the data file or in the working directory, if there."""
    if "." in module:
        return None
    dirs = [getattr(run, "_origin", None), os.path.dirname(os.path.abspath(run.data)) if run.data
            else None, os.getcwd()]
    found = [Path(d) / f"{module}.py" for d in dirs if d]
    return next((f for f in found if f.is_file()), None)


def _defining(path: Path, func: str, dotted: str) -> bytes:
    """The module's bytes, once its source defines `func` at the top level (parsed, not run)."""
    body = path.read_bytes()
    try:
        tree = ast.parse(body)
    except SyntaxError as e:
        raise SpecError("reward", dotted, f"a module Python can parse ({path})", hint=str(e.msg)) from None
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name)}
    if func not in names:
        raise SpecError("reward", dotted, f"a function {func!r} defined at the top level of {path}")
    return body


_ADAPTER = '''"""verl's custom reward function (written by whileai): {what} on one completion.

verl's reward manager adds its own keys to extra_info (num_turns, rollout_reward_scores:
experimental/reward_loop/reward_manager/naive.py:50-52); the function gets only the keywords its
signature takes (every one when it takes **kwargs)."""

import importlib
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # {module}.py copied beside it


def _accepted(reward, keywords):
    """The keywords `reward` takes: all of them with **kwargs (or no signature to read)."""
    try:
        params = inspect.signature(reward).parameters.values()
    except (TypeError, ValueError):
        return keywords
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return keywords
    names = {{p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}}
    return {{k: v for k, v in keywords.items() if k in names}}


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    reward = getattr(importlib.import_module({module!r}), {func!r})
    info = dict(extra_info or {{}})
    prompt = info.pop("prompt", None)
    columns = {{k: [v] for k, v in info.items() if k not in ("split", "index")}}
    keywords = {{"prompts": [prompt], "completions": [solution_str], **columns}}
    return float(reward(**_accepted(reward, keywords))[0])
'''

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
