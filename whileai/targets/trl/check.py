"""Check a compiled TRL run directory against TRL's own parser (needs the trl extra).

`check_dir(path)` parses config.yaml exactly as the run will (`trl distillation` / `trl grpo` /
`trl sft` build their parser with `make_parser()`; whileai's OPSD train.py uses
`TrlParser((ScriptArguments, SDFTConfig, ModelConfig))`), with unknown keys rejected, and
checks what the config points at inside the directory: the dataset files and their columns,
the GRPO reward function, SFT's sample.py and the prompts it answers (its completions folder
exists only once it has run). trl is imported here only, and only when called.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from whileai.errors import SpecError, raw
from whileai.targets.trl.pin import VERSION as PIN

COLUMNS = {"distillation": ["prompt"], "gold": ["prompt", "completion"], "server": ["prompt"],
           "grpo": ["prompt"], "sdft": ["prompt", "privileged_context"],
           "sft": ["prompt", "completion"]}
PROMPTS = "data"  # SFT: the prompts sample.py answers (whileai.targets.trl.fieldmap.DATA)
_NO_GPU = ("bf16", "fp16", "gpu", "cuda", "mixed precision")


# whileai's train.py scripts, by the config class each parses with
SCRIPTS = {"GOLDConfig": "gold", "ServerDistillationConfig": "server", "SDFTConfig": "sdft"}


def command_of(path: Path) -> str:
    """Which parser a run directory's config is for, from its files."""
    if (path / "train.py").exists():
        script = (path / "train.py").read_text()
        return next((cmd for cls, cmd in SCRIPTS.items() if cls in script), "sdft")
    if (path / "sample.py").exists():
        return "sft"
    head = (path / "config.yaml").read_text()
    if "trl grpo" in head.split("\n\n", 1)[0] or "\nreward_funcs:" in head:
        return "grpo"
    return "distillation"


def parser_for(command: str) -> Any:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if command == "distillation":
        from trl.scripts.distillation import make_parser

        return make_parser()
    if command == "grpo":
        from trl.scripts.grpo import make_parser as make_grpo_parser

        return make_grpo_parser()
    if command == "sft":
        from trl.scripts.sft import make_parser as make_sft_parser

        return make_sft_parser()
    from trl import ModelConfig, ScriptArguments, TrlParser

    if command == "gold":
        from trl.experimental.gold import GOLDConfig

        return TrlParser((ScriptArguments, GOLDConfig, ModelConfig))  # type: ignore[arg-type]
    if command == "server":
        from trl.experimental.server_distillation import ServerDistillationConfig

        return TrlParser((ScriptArguments, ServerDistillationConfig, ModelConfig))  # type: ignore[arg-type]
    from trl.experimental.sdft import SDFTConfig

    return TrlParser((ScriptArguments, SDFTConfig, ModelConfig))  # type: ignore[arg-type]


def parse(config: str | Path, command: str) -> tuple[Any, ...]:
    """Parse a config with TRL's parser for `command`; unknown keys raise ValueError."""
    with _kept_environ(), warnings.catch_warnings():
        # transformers 5 warns about TRL's own gradient_checkpointing default: not the config's
        warnings.simplefilter("ignore", FutureWarning)
        return tuple(parser_for(command).parse_args_and_config(["--config", str(config)]))


def need_trl() -> Any:
    """TRL's module, or one SpecError saying how to install it (the check needs TRL's parser)."""
    try:
        import trl
    except ImportError as e:
        raise SpecError("--check", raw("TRL is not installed"), "checking needs TRL's own parser: "
                        f"pip install trl=={PIN} (or, in a whileai clone, pip install -e '.[trl]')") from e
    return trl


def check_dir(path: str | Path) -> list[str]:
    """Problems with a compiled TRL run directory; [] when TRL accepts it.

    Raises SpecError when trl is not installed (the check needs TRL's own parser).
    """
    trl = need_trl()
    root = Path(path)
    if not (root / "config.yaml").is_file():
        return [f"{root}: no config.yaml"]
    problems: list[str] = []
    if trl.__version__ != PIN:
        problems.append(f"trl {trl.__version__} is installed; this config is for trl {PIN}")
    command = command_of(root)
    try:
        parsed = _parse_here(root / "config.yaml", command)
    except (ValueError, SystemExit, TypeError) as e:
        return problems + [f"config.yaml: TRL's {command} parser rejects it: {_first_line(e)}"]
    script_args, training_args = parsed[0], parsed[1]
    problems += _check_data(root, script_args, command)
    if command == "grpo":
        problems += _check_rewards(root, script_args.reward_funcs or [])
    if command == "sdft" and "{privileged_context}" not in training_args.teacher_prompt_template:
        problems.append("teacher_prompt_template lacks {privileged_context}")
    return problems


def _parse_here(config: Path, command: str) -> tuple[Any, ...]:
    """Parse; on a machine without a GPU, a bf16 config is parsed again with the CPU flags on
    (the GPU check is the machine's, not the config's)."""
    try:
        return parse(config, command)
    except ValueError as e:
        if not any(w in str(e).lower() for w in _NO_GPU):
            raise
        with _kept_environ(), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return tuple(parser_for(command).parse_args_and_config(
                ["--config", str(config), "--use_cpu", "true", "--bf16", "false"]))


def _check_data(root: Path, script_args: Any, command: str) -> list[str]:
    name = script_args.dataset_name
    if not name:
        return ["dataset_name is not set"]
    data = root / name
    splits = (script_args.dataset_train_split, script_args.dataset_test_split)
    if command == "sft" and not data.is_dir():  # not sampled yet: check what sample.py reads
        return _columns(root / PROMPTS, splits, ["prompt"])
    if not data.is_dir():
        return [f"dataset_name {name!r}: no directory {data}"]
    return _columns(data, splits, COLUMNS[command])


def _columns(data: Path, splits: tuple[str, ...], columns: list[str]) -> list[str]:
    out = []
    for split in splits:
        f = data / f"{split}.jsonl"
        if not f.is_file():
            out.append(f"{f}: missing")
            continue
        first = f.read_text().split("\n", 1)[0]
        row = json.loads(first) if first else {}
        missing = [c for c in columns if c not in row]
        if missing:
            out.append(f"{f}: no column {', '.join(missing)}")
    return out


def _check_rewards(root: Path, names: list[str]) -> list[str]:
    out = []
    sys.path.insert(0, str(root))
    try:
        for name in names:
            if "." not in name:
                continue  # one of TRL's built-in rewards
            module, _, func = name.rpartition(".")
            try:
                mod = importlib.import_module(module)
                if not callable(getattr(mod, func, None)):
                    out.append(f"reward_funcs: {name}: no function {func} in {module}")
            except ImportError as e:
                out.append(f"reward_funcs: {name}: {e}")
            finally:
                sys.modules.pop(module, None)
    finally:
        sys.path.remove(str(root))
    return out


@contextlib.contextmanager
def _kept_environ() -> Iterator[None]:
    """TrlParser exports the config's `env` table; keep the checking process's env as it was."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]
