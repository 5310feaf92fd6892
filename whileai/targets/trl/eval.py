"""Train a compiled TRL run directory with its own command, then score it on its holdout.

    python -m whileai.launch.runner call whileai.targets.trl.eval:train_and_evaluate \\
        '{"command": "trl grpo --config config.yaml"}'      # in the run dir; or, for arms:
    argv = call_argv("whileai.targets.trl.eval:train_and_evaluate", command=" && ".join(c.commands))

`train_and_evaluate` reads the run's config.yaml (model, output_dir, max_steps,
max_completion_length, dataset_name), runs the command the compiler emitted (SFT's two, joined
with `&&`: the teacher samples, then `trl sft` trains), then scores the
base model (step 0), every `checkpoint-N` this run saved (older ones are skipped) and the
final model: greedy generation on `<dataset_name>/test.jsonl` (SFT's dataset is the teacher's
completions: it is scored on the tasks' `data/test.jsonl` like every arm), reward = the taskset's
own reward function (or `reward`, a 'module.function' in TRL's reward signature), one value
per row (task ids `test-0000`, ... by row). It returns the metrics record (`Metrics`), which
the runner writes to `$WHILEAI_METRICS`:

- `eval_reward`: [step, mean holdout reward] at 0, at each saved checkpoint and at the end;
  per-step points need checkpoints (`save_strategy: steps`, `save_steps: k`), else only 0 and
  the end are scored;
- `train_reward` (GRPO's `reward`), `teacher_kl` (OPD's loss: the divergence its `beta` picks;
  OPSD's distillation loss), `train_loss` (SFT: cross-entropy on the teacher's tokens) and
  `entropy`, from the last checkpoint's
  trainer_state.json;
- `per_task`: the final model's reward per task, the unit `whileai.results` pairs on;
- `usage`: rollouts and sampled tokens from the trainer's log (`usage()`), the training
  command's wall and CPU seconds (getrusage of the finished child).

While it runs it keeps `progress.json` (phase, done, total) in the working directory for
progress bars. torch, transformers and yaml are imported only inside the functions.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import IO, Any

from whileai.files.atomic import atomic_write as atomic_write_text
from whileai.targets.run import PROGRESS, Point
from whileai.targets.trl.fieldmap import DATA
from whileai.targets.trl.metrics import log_series, usage

# the trainer's own tqdm bar has no description: "\r 25%|██▌ | 1/4 [00:00<..."
_BAR = re.compile(rb"\r\s*\d+%\|[^|\r\n]*\|\s*(\d+)/(\d+) \[")
def task_ids(n: int) -> list[str]:
    return [f"test-{i:04d}" for i in range(n)]


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]


def reward_function(taskset: str, reward: str | None = None) -> Callable[..., list[float]]:
    """`reward` ('module.function', importable here) when given, else the taskset's own."""
    if reward:
        module, _, name = reward.rpartition(".")
        fn: Callable[..., list[float]] = getattr(import_module(module), name)
        return fn
    from whileai.tasksets.builtin import resolve

    ts = resolve(taskset)
    fn = getattr(import_module(f"whileai.tasksets.{ts.module}"), ts.reward)
    return fn


def _load(model: str | Path, base: str | None) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model)
    if (path / "adapter_config.json").exists():  # a LoRA checkpoint
        from peft import AutoPeftModelForCausalLM

        net = AutoPeftModelForCausalLM.from_pretrained(str(path))
    else:
        net = AutoModelForCausalLM.from_pretrained(str(path))
    tok_dir = path if (path / "tokenizer_config.json").exists() or base is None else base
    tok = AutoTokenizer.from_pretrained(str(tok_dir))
    tok.padding_side = "left"
    return net.eval(), tok


def evaluate(
    model: str | Path, data: str | Path, *, taskset: str = "reverse-text", reward: str | None = None,
    max_new_tokens: int = 64, batch_size: int = 32, base: str | None = None,
) -> dict[str, float]:
    """Greedy completions for every row of a holdout .jsonl → {task_id: reward}.

    model: a saved model or LoRA checkpoint (then `base` gives the tokenizer if it has none).
    """
    import torch
    from transformers import GenerationConfig

    rows = read_rows(data)
    net, tok = _load(model, base)
    score = reward_function(taskset, reward)
    gen = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens,
                           eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    texts: list[str] = []
    for i in range(0, len(rows), batch_size):
        batch = [r["prompt"] for r in rows[i:i + batch_size]]
        if isinstance(batch[0], str):  # text prompts: as TRL feeds them, without a template
            enc = tok(batch, padding=True, return_tensors="pt")
        else:
            enc = tok.apply_chat_template(batch, add_generation_prompt=True, padding=True,
                                          return_tensors="pt", return_dict=True)
        with torch.no_grad():
            out = net.generate(**enc, generation_config=gen)
        texts += tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    columns = {k: [r.get(k) for r in rows] for k in rows[0] if k != "prompt"} if rows else {}
    # the reward gets what TRL passes it: prompts, completions (chat prompts: assistant
    # messages), and every other column as a keyword list
    chat = bool(rows) and not isinstance(rows[0]["prompt"], str)
    completions: list[Any] = [[{"role": "assistant", "content": t}] for t in texts] if chat else texts
    scores = score(prompts=[r["prompt"] for r in rows], completions=completions, **columns)
    return dict(zip(task_ids(len(rows)), (float(s) for s in scores), strict=True))


_TEACHER_HOW = {"sampled_tokens": "the teacher's completions the student trained on "
                 "(<dataset_name>/train.jsonl), tokenized with the student's tokenizer"}


def teacher_tokens(cfg: dict[str, Any], tokenizer: str) -> dict[str, float]:
    """SFT: tokens the teacher sampled, counted in the completions file the trainer read (TRL's
    SFT trainer logs no completion lengths); {} when that file is not there."""
    from transformers import AutoTokenizer

    path = Path(cfg.get("dataset_name", "")) / "train.jsonl"
    if not path.is_file():
        return {}
    tok = AutoTokenizer.from_pretrained(tokenizer)
    texts = []
    for row in read_rows(path):
        c = row.get("completion")
        texts.append(c if isinstance(c, str) else "".join(str(m.get("content", "")) for m in c or []))
    return {"sampled_tokens": float(sum(len(ids) + 1 for ids in tok(texts)["input_ids"]))}  # + EOS


def _cpu_seconds() -> float:
    """CPU seconds of this process's finished children (user + system)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _trainer(cfg: dict[str, Any], command: str = "") -> str:
    if "trl sft" in command or "completion_only_loss" in cfg:
        return "sft"
    if "reward_funcs" in cfg:
        return "grpo"
    return "distillation" if "teacher_model_name_or_path" in cfg else "sdft"


def _max_new_tokens(cfg: dict[str, Any], command: str) -> int:
    """The arm's completion cap: max_completion_length, or (SFT) sample.py's --max-new-tokens."""
    if "max_completion_length" in cfg:
        return int(cfg["max_completion_length"])
    m = re.search(r"--max-new-tokens[ =](\d+)", command)
    return int(m.group(1)) if m else 256


def _checkpoints(output_dir: Path) -> list[tuple[int, Path]]:
    found = [(int(p.name.split("-")[1]), p) for p in output_dir.glob("checkpoint-*")
             if p.name.split("-")[1].isdigit()]
    return sorted(found)


class _Progress:
    def __init__(self, path: Path, total: int) -> None:
        self.path, self.total, self.done, self.phase = path, total, 0, "starting"

    def set(self, phase: str, done: int | None = None, total: int | None = None) -> None:
        self.phase = phase
        self.done = self.done if done is None else done
        self.total = self.total if total is None else total
        atomic_write_text(self.path, json.dumps(
            {"phase": self.phase, "done": self.done, "total": self.total}) + "\n")


def _tee(stream: IO[bytes], progress: _Progress, offset: int, steps: int) -> None:
    """Copy the child's output to ours; move the progress with the trainer's own bar."""
    sink = sys.stdout.buffer
    for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
        sink.write(chunk)
        sink.flush()
        for m in _BAR.finditer(chunk):
            done, total = int(m.group(1)), int(m.group(2))
            if total == steps:
                progress.set(f"train {done}/{steps}", offset + done)


def run_command(command: str, progress: _Progress, offset: int, steps: int) -> int:
    """Run the compiler's command in this folder (a shell line, as a user would)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    sys.stdout.flush()
    child = subprocess.Popen(command, shell=True, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
    assert child.stdout is not None
    reader = threading.Thread(target=_tee, args=(child.stdout, progress, offset, steps), daemon=True)
    reader.start()
    code = child.wait()
    reader.join()
    return code


def train_and_evaluate(
    command: str, *, config: str = "config.yaml", taskset: str = "reverse-text",
    reward: str | None = None, eval_base: bool = True, batch_size: int = 32,
) -> dict[str, Any]:
    """Score the base model, run `command`, score each checkpoint and the final model.

    reward: 'module.function' scoring the holdout (importable here) instead of the taskset's.
    """
    import yaml

    cfg = yaml.safe_load(Path(config).read_text(encoding="utf-8"))
    base, steps = str(cfg["model_name_or_path"]), int(cfg.get("max_steps", 0))
    output_dir = Path(cfg.get("output_dir", "outputs"))
    trainer = _trainer(cfg, command)
    # SFT trains on the teacher's completions; every arm is scored on the tasks' own holdout
    data = Path(DATA if trainer == "sft" else cfg.get("dataset_name", DATA)) / "test.jsonl"
    kw: dict[str, Any] = dict(taskset=taskset, reward=reward, batch_size=batch_size, base=base,
                              max_new_tokens=_max_new_tokens(cfg, command))
    save = int(cfg.get("save_steps", 0)) if cfg.get("save_strategy") == "steps" else 0
    planned = len(range(save, steps, save)) if save >= 1 else 0
    progress = _Progress(Path(PROGRESS), steps + int(eval_base) + planned + 1)
    progress.set("train", 0)
    start, clock, cpu = time.time(), time.monotonic(), _cpu_seconds()
    code = run_command(command, progress, 0, steps)
    if code != 0:
        raise RuntimeError(f"`{command}` exited with code {code} (its output is in the log)")
    spent = {"train_seconds": round(time.monotonic() - clock, 2),
             "cpu_seconds": round(_cpu_seconds() - cpu, 2)}
    how = {"train_seconds": "wall clock of the training command",
           "cpu_seconds": "user + system CPU time of the training command (getrusage)"}
    ckpts = [(s, p) for s, p in _checkpoints(output_dir) if p.stat().st_mtime >= start - 1]
    series: dict[str, list[Point]] = {}
    if ckpts:
        state = json.loads((ckpts[-1][1] / "trainer_state.json").read_text(encoding="utf-8"))
        series = log_series(state.get("log_history", []), trainer)
        steps = int(state.get("global_step", steps))
        logged, logged_how = usage(state, cfg)
        if trainer == "sft":
            logged, logged_how = logged | teacher_tokens(cfg, base), logged_how | _TEACHER_HOW
        spent, how = logged | spent, logged_how | how
    # torch is imported only now, so the trainer had the memory to itself
    todo = ([(0, Path(base))] if eval_base else []) + [(s, p) for s, p in ckpts if s < steps]
    evals: dict[int, float] = {}
    for i, (step, path) in enumerate(todo + [(steps, output_dir)]):
        progress.set(f"eval step {step}", steps + i, steps + len(todo) + 1)
        scores = evaluate(path, data, **kw)
        evals[step] = sum(scores.values()) / max(len(scores), 1)
    progress.set("done", progress.total)
    series["eval_reward"] = sorted(evals.items())
    return {"status": "ok", "series": series, "per_task": scores, "usage": spent, "usage_source": how}


__all__ = ["PROGRESS", "evaluate", "read_rows", "reward_function", "task_ids",
           "train_and_evaluate"]
