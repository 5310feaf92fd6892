"""Issue 23 against TRL 1.16's own code: its config's generation-batch rule, its RepeatSampler,
the `trl` CLI's accelerate launch, its adapter EMA, and tiny-model CPU runs whose own log
tells whether any step trained.

Marked `trl`: needs the trl extra. Runs offline on tiny random models built locally.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from helpers import needs
from trl_helpers import OFFLINE, ROOT, seed_run, write

from whileai.errors import SpecError
from whileai.spec.load import load_spec
from whileai.spec.run import GRPO, OPSD, RunSpec
from whileai.targets.trl import compile as backend

pytestmark = pytest.mark.trl
needs("trl", "torch", "transformers", "trl")  # the whole file (tests/targets/trl/ is no TRL: see needs)
trl = pytest.importorskip("trl")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
ZERO = "stopping training at step 0"
_LOSS = re.compile(r"'loss': '?([-+0-9.eEnaif]+)'?")


def _trl_config(cls: Any, doc: dict[str, Any], processes: int, monkeypatch: pytest.MonkeyPatch,
                tmp_path: Path) -> Any:
    """TRL's own config class, built from a compiled config as if on `processes` processes."""
    monkeypatch.setattr(cls, "world_size", property(lambda self: processes))
    names = {f.name for f in dataclasses.fields(cls)}
    keep = {k: v for k, v in doc.items() if k in names}
    return cls(**keep | {"use_cpu": True, "bf16": False, "output_dir": str(tmp_path)})


# (prompts, samples, gpus, overrides): specs and layouts no other test names
SWEEP = [(p, s, g, o) for p in (3, 6, 7) for s in (2, 3, 4) for g in (None, 3, 8)
         for o in ({}, {"per_device_train_batch_size": 3}, {"per_device_train_batch_size": 5},
                   {"steps_per_generation": 5},
                   {"generation_batch_size": 48}, {"num_generations": 4})]


def test_generation_rule_is_trls_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """whileai refuses a GRPO batch exactly when GRPOConfig (on that many processes) does."""
    from trl import GRPOConfig

    agree = {"accepted": 0, "refused": 0}
    for prompts, samples, gpus, over in SWEEP:
        run = seed_run("grpo", method=GRPO(samples=samples), prompts=prompts, gpus=gpus, lora=False,
                       eval={"enabled": False})
        n = gpus or 1
        if prompts * samples % n:  # no per-device batch exists: TRL cannot be given this step
            with pytest.raises(SpecError, match="^prompts: .*split evenly"):
                backend.compile(run)
            continue
        doc = yaml.safe_load(backend.compile(run).files["config.yaml"]) | over
        try:
            backend.compile(run.model_copy(update={"overrides": over}))
            ours = None
        except SpecError as e:
            ours = str(e)
        if ours is not None and "in the spec instead" in ours:  # num_generations != samples:
            assert "set samples = " in ours  # refused before TRL's rule (tests/targets/test_story.py)
            continue
        try:
            _trl_config(GRPOConfig, doc, n, monkeypatch, tmp_path)
            theirs = None
        except ValueError as e:
            theirs = str(e)
        assert (ours is None) == (theirs is None), (prompts, samples, gpus, over, ours, theirs)
        if ours is not None:
            assert ours.startswith("overrides"), ours  # only an override can break TRL's rule
        agree["accepted" if ours is None else "refused"] += 1
    assert agree["accepted"] > 20 and agree["refused"] > 20, agree


@pytest.mark.parametrize("kind", ["grpo", "opsd", "opd"])
def test_zero_step_rule_is_trls_sampler(kind: str, monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    """whileai refuses exactly when TRL's RepeatSampler yields no batch from the training rows."""
    from trl import DistillationConfig, GRPOConfig
    from trl.experimental.sdft import SDFTConfig
    from trl.trainer.utils import RepeatSampler

    cls = {"grpo": GRPOConfig, "opsd": SDFTConfig, "opd": DistillationConfig}[kind]
    (tmp_path / "rewards.py").write_text("def contains_answer(completions, **kw):\n    return [0.0]\n")
    seen = set()
    for rows in (1, 4, 7, 12):
        data = tmp_path / f"t{rows}.jsonl"
        data.write_text("".join(json.dumps({"prompt": f"q{i}", "answer": "a"}) + "\n" for i in range(rows))
                        + json.dumps({"prompt": "h", "answer": "a", "split": "test"}) + "\n")
        for prompts, gpus in ((1, None), (4, 2), (6, 3), (8, None), (12, 4), (13, None)):
            method = {"grpo": GRPO(samples=2), "opsd": OPSD(privileged="answer", samples=2)}.get(kind)
            base = seed_run(kind, **({"method": method} if method else {}))
            reward = "rewards.contains_answer" if kind == "grpo" else None
            run = base.model_copy(update={"data": str(data), "taskset": "my-qa", "prompts": prompts,
                                          "gpus": gpus, "reward": reward})
            try:
                c = backend.compile(run)
                refused = False
            except SpecError as e:
                assert "training row" in str(e), str(e)
                refused = True
                enough = ROOT / "examples" / "own-data" / "tasks.jsonl"  # the same batch keys
                c = backend.compile(run.model_copy(update={"data": str(enough)}))
            args = _trl_config(cls, yaml.safe_load(c.files["config.yaml"]), gpus or 1, monkeypatch, tmp_path)
            if kind == "opd":  # DistillationTrainer._get_train_sampler
                batch = args.per_device_train_batch_size * (gpus or 1) * args.gradient_accumulation_steps
                sampler = RepeatSampler(range(rows), mini_repeat_count=1, batch_size=batch,
                                        repeat_count=args.gradient_accumulation_steps)
            else:  # GRPOTrainer / SDFTTrainer._get_train_sampler
                sampler = RepeatSampler(range(rows), mini_repeat_count=args.num_generations,
                                        batch_size=args.generation_batch_size // args.num_generations,
                                        repeat_count=args.steps_per_generation)
            assert refused == (len(sampler) == 0), (rows, prompts, gpus)
            seen.add(refused)
    assert seen == {True, False}


def _tiny(run: RunSpec, model: str, out: Path) -> RunSpec:
    over = {"gradient_checkpointing": False, "logging_steps": 1, "save_strategy": "no", "report_to": "none"}
    return run.model_copy(update={"model": model, "steps": 2, "output_dir": str(out / "ckpt"),
                                  "overrides": over, "eval": run.eval.model_copy(update={"enabled": False}),
                                  "method": run.method.model_copy(update={"max_tokens": 8})})


def _run(c: Any, out: Path) -> str:
    write(c, out)
    env = dict(os.environ, **OFFLINE, PYTHONPATH=str(out))
    p = subprocess.run(c.commands[0], shell=True, cwd=out, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    return p.stdout + p.stderr


def test_own_data_grpo_example_trains(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """The bundled example, as shipped but on the tiny model: TRL's log shows trained steps
    (on the old 6-row data with prompts = 8 it said "stopping training at step 0")."""
    run = _tiny(load_spec(ROOT / "examples" / "own-data" / "grpo.toml"), tiny_models["student"], tmp_path)
    log = _run(backend.compile(run, cpu=True), tmp_path / "run")
    assert ZERO not in log
    assert len(_LOSS.findall(log)) == 2, log[-2000:]


def test_a_step_short_of_rows_trains_nothing_in_trl(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """The refusal's boundary is TRL's: one row fewer than a step's prompts and TRL trains 0
    steps, exits 0 and says so in its log (the run directory is edited after compiling)."""
    run = _tiny(load_spec(ROOT / "examples" / "own-data" / "grpo.toml"), tiny_models["student"], tmp_path)
    c = backend.compile(run, cpu=True)
    rows = c.files["data/train.jsonl"].splitlines(keepends=True)
    c.files["data/train.jsonl"] = "".join(rows[: run.prompts - 1])
    log = _run(c, tmp_path / "run")
    assert ZERO in log and not _LOSS.findall(log)
    assert (tmp_path / "ckpt" / "adapter_config.json").exists()  # the untouched model is saved


def _launched(c: Any, out: Path, gpus: int, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Run the compiled command's `trl <cmd>` through TRL's own CLI up to accelerate's launch
    validation on a host with `gpus` visible GPUs, and return what accelerate would start."""
    import accelerate.commands.launch as launch
    from trl.cli import accelerate_launcher
    from trl.cli.main import main

    write(c, out)
    monkeypatch.chdir(out)
    monkeypatch.setenv("HF_HOME", str(out / "hf"))  # no user accelerate default_config.yaml
    monkeypatch.setattr(launch, "default_config_file", str(out / "none.yaml"))
    fake = SimpleNamespace(device_count=lambda: gpus, is_available=lambda: True)
    monkeypatch.setattr(launch, "get_torch_accelerator_backend", lambda: ("cuda", fake))
    monkeypatch.setattr(launch, "get_distributed_backend", lambda d: "nccl")
    got = SimpleNamespace()
    original = getattr(accelerate_launcher.launch_training_script, "original",
                       accelerate_launcher.launch_training_script)  # not an earlier call's patch

    def validate(args: Any) -> None:
        args, _, _ = launch._validate_launch_command(args)
        got.num_processes, got.multi_gpu = args.num_processes, bool(args.multi_gpu)

    def script(script_name: str, launch_args: list[str], training_script_args: list[str],
               **_: Any) -> None:
        original(script_name, launch_args, training_script_args, launch_command_fn=validate)

    script.original = original  # type: ignore[attr-defined]
    monkeypatch.setattr(accelerate_launcher, "launch_training_script", script)
    words = c.commands[-1].split()
    if words[:2] == ["accelerate", "launch"]:  # OPSD's train.py
        validate(launch.launch_command_parser().parse_args(words[2:]))
        return got
    assert words[0] == "trl", words  # a bare `python train.py` would be one DataParallel process
    assert main(words[1:]) == 0
    return got


@pytest.mark.parametrize("kind", ["grpo", "opd", "opsd", "sft"])
def test_one_process_on_an_eight_gpu_host(kind: str, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    """Without a config, accelerate starts one process per visible GPU (8 here); the compiled
    command starts the one process the report plans."""
    cpu = {"bf16": False}  # only so that TRL's parser accepts the config on this CPU machine
    got = _launched(backend.compile(seed_run(kind, overrides=cpu)), tmp_path / "one", 8, monkeypatch)
    assert (got.num_processes, got.multi_gpu) == (1, False)
    got = _launched(backend.compile(seed_run(kind, gpus=4, overrides=cpu)), tmp_path / "four", 8,
                    monkeypatch)
    assert got.num_processes == 4


def test_adapter_ema_is_not_a_weight_ema(tiny_models: dict[str, str]) -> None:
    """TRL's PEFTAdapterEMACallback averages lora_A and lora_B separately from zero: with the
    student's adapter held fixed, the teacher's weight change after t steps is c^2 B A, c =
    1-(1-r)^t, where a weight EMA from the initial student gives c B A (the warning's ratio c)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, TrainerControl, TrainerState
    from trl.experimental.sdft.teacher_sync import PEFTAdapterEMACallback

    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny_models["student"]),
                           LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj"]))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_()  # a trained adapter: B is zero only at initialisation
    rate, steps = 0.01, 40
    cb = PEFTAdapterEMACallback(model=model, teacher_adapter_name="teacher", update_rate=rate)
    state, control = TrainerState(), TrainerControl()
    cb.on_train_begin(None, state, control)  # type: ignore[arg-type]
    for step in range(1, steps + 1):
        state.global_step = step
        cb.on_step_end(None, state, control)  # type: ignore[arg-type]
    layer = next(m for m in model.modules() if hasattr(m, "lora_A") and "teacher" in m.lora_A)
    student = layer.lora_B["default"].weight @ layer.lora_A["default"].weight
    teacher = layer.lora_B["teacher"].weight @ layer.lora_A["teacher"].weight
    c = 1 - (1 - rate) ** steps
    ratio = (teacher.norm() / student.norm()).item()
    assert abs(ratio - c * c) < 1e-4, (ratio, c)  # adapter EMA: c^2 of the student's change
    assert ratio / c < 0.5  # a third of what a weight EMA (c) would have moved at r=0.01, t=40
