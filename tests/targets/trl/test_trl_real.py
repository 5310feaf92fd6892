"""The TRL backend against the real TRL: its parser, its dataclasses, 2-step CPU runs.

Marked `trl`: needs the trl extra (torch, transformers, trl, datasets, accelerate). Runs offline
on tiny random models built locally (whileai.vocab.tiny).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import needs
from trl_helpers import ARMS, OFFLINE, ROOT, seed_run, tiny_run, write

from whileai.targets.trl import catalog as trl_catalog
from whileai.targets.trl import compile as backend
from whileai.targets.trl.check import check_dir, parse

pytestmark = pytest.mark.trl
needs("trl", "torch", "transformers", "trl")  # the whole file (tests/targets/trl/ is no TRL: see needs)
trl = pytest.importorskip("trl")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def test_catalogue_matches_installed_trl() -> None:
    """A renamed or retyped TRL field fails here: regenerate the catalogue from the classes."""
    if trl.__version__ != backend.TRL_VERSION:
        pytest.skip(f"trl {trl.__version__} installed; catalogue pinned to {backend.TRL_VERSION}")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_trl_catalog
    finally:
        sys.path.pop(0)
    assert gen_trl_catalog.build() == trl_catalog.raw()


def test_field_map_keys_are_dataclass_fields() -> None:
    from trl import DistillationConfig, GRPOConfig, ModelConfig, ScriptArguments, SFTConfig
    from trl.experimental.sdft import SDFTConfig
    from trl.scripts.grpo import GRPOScriptArguments

    classes = {"distillation": (ScriptArguments, DistillationConfig, ModelConfig),
               "grpo": (GRPOScriptArguments, GRPOConfig, ModelConfig),
               "sdft": (ScriptArguments, SDFTConfig, ModelConfig),
               "sft": (ScriptArguments, SFTConfig, ModelConfig)}
    for arm in ARMS:
        for cpu in (False, True):
            c = backend.compile(seed_run(arm), cpu=cpu)
            names = {f.name for cls in classes[backend.command_name(c.run)] for f in dataclasses.fields(cls)}
            keys = {r.path for r in c.reads} | {f.path for f in c.fixed}
            for key in keys:
                if not key.startswith(("<", "env.")):
                    assert key in names, f"{arm}: {key} is not a field of TRL's config classes"


@pytest.mark.parametrize("arm", ARMS)
def test_seed_arms_pass_trls_parser(arm: str, tmp_path: Path) -> None:
    for cpu in (False, True):
        out = write(backend.compile(seed_run(arm, monitor={"project": "p", "tags": ["a"]}), cpu=cpu),
                    tmp_path / str(cpu))
        assert check_dir(out) == []
    before = dict(os.environ)
    args = parse(out / "config.yaml", backend.command_name(seed_run(arm)))
    assert dict(os.environ) == before, "checking must not leak the config's env table"
    assert args[1].learning_rate == seed_run(arm).learning_rate


@pytest.mark.parametrize("arm", ARMS)
def test_odd_strings_and_floats_pass_trls_parser(arm: str, tmp_path: Path) -> None:
    """Emoji, quotes, YAML words, line breaks and tiny floats, through PyYAML and TrlParser."""
    odd = {"run_name": "😀 'yes': no # x", "learning_rate": 1e-07, "env.NOTE😀": "a\nb 👍🏽",
           "logging_steps": 1}
    run = seed_run(arm, output_dir="out ünïcødé 😀", overrides=odd)
    out = write(backend.compile(run, cpu=True), tmp_path / arm)
    assert check_dir(out) == []
    args = parse(out / "config.yaml", backend.command_name(run))
    assert args[1].run_name == odd["run_name"] and args[1].learning_rate == 1e-07
    assert args[1].output_dir == "out ünïcødé 😀"


def test_check_dir_reports_what_trl_rejects(tmp_path: Path) -> None:
    out = write(backend.compile(seed_run("opd"), cpu=True), tmp_path / "opd")
    cfg = out / "config.yaml"
    cfg.write_text(cfg.read_text() + "lerning_rate: 0.1\n")
    (problem,) = check_dir(out)
    assert "lerning_rate" in problem
    cfg.write_text(cfg.read_text().replace("lerning_rate: 0.1\n", "").replace("beta: 1.0", "beta: 1.5"))
    assert "beta" in check_dir(out)[0]


def test_check_dir_rejects_what_trl_sft_rejects(tmp_path: Path) -> None:
    """An SFT directory before sampling: TRL's sft parser with unknown keys rejected, and the
    prompts sample.py will answer; after sampling, the completions' columns."""
    out = write(backend.compile(seed_run("sft"), cpu=True), tmp_path / "sft")
    assert check_dir(out) == []
    cfg = out / "config.yaml"
    cfg.write_text(cfg.read_text() + "temperature: 0.7\n")  # a sampling key: not SFTConfig's
    assert "temperature" in check_dir(out)[0] and "sft parser" in check_dir(out)[0]
    cfg.write_text(cfg.read_text().replace("temperature: 0.7\n", ""))
    (out / "teacher_samples").mkdir()
    (out / "teacher_samples" / "train.jsonl").write_text('{"prompt": "p"}\n')
    (out / "teacher_samples" / "test.jsonl").write_text('{"prompt": "p", "completion": "c"}\n')
    assert check_dir(out) == [f"{out / 'teacher_samples' / 'train.jsonl'}: no column completion"]


_LOSS = re.compile(r"'(?:train_)?loss': '?([-+0-9.eEnaif]+)'?")


@pytest.mark.parametrize("arm", [a for a in ARMS if a != "sft"])  # SFT: test_two_stage_run_...
def test_tiny_run_two_steps_offline(arm: str, tiny_models: dict[str, str], tmp_path: Path) -> None:
    """Run the compiled directory the way a user would, for 2 steps on the CPU."""
    run = tiny_run(arm, tiny_models["student"], tiny_models["teacher"], tmp_path / "ckpt")
    c = backend.compile(run, cpu=True)
    out = write(c, tmp_path / "run")
    env = dict(os.environ, **OFFLINE)
    p = subprocess.run(c.commands[0], shell=True, cwd=out, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    losses = [float(x) for x in _LOSS.findall(p.stdout + p.stderr)]
    assert len(losses) >= 3, p.stdout[-2000:]  # two steps and the run's mean
    assert all(math.isfinite(x) for x in losses)
    assert (tmp_path / "ckpt" / "config.json").exists()


def test_opd_loss_is_full_vocab_reverse_kl(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """TRL's OPD loss on a fixed batch = mean over completion tokens of
    sum_v p_s(v) (log p_s(v) - log p_t(v)), computed here independently."""
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DistillationTrainer

    run = tiny_run("opd", tiny_models["student"], tiny_models["teacher"], tmp_path / "ckpt")
    run = run.model_copy(update={"method": run.method.model_copy(update={"temperature": 0.25})})
    out = write(backend.compile(run, cpu=True), tmp_path / "run")
    script, args, _model, _data = parse(out / "config.yaml", "distillation")
    assert args.beta == 1.0 and args.temperature == 0.25
    data = load_dataset(str(out / script.dataset_name))
    trainer = DistillationTrainer(model=run.model, teacher_model=args.teacher_model_name_or_path,
                                  args=args, train_dataset=data["train"], eval_dataset=data["test"])
    tok = AutoTokenizer.from_pretrained(run.model)
    prompts = [row["prompt"] for row in data["test"].select(range(3))]
    enc = tok.apply_chat_template(prompts, add_generation_prompt=True, padding=True,
                                  return_tensors="pt", return_dict=True)
    g = torch.Generator().manual_seed(0)
    completion = torch.randint(3, len(tok), (3, 6), generator=g)
    cmask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    inputs = {"prompt_ids": enc["input_ids"], "prompt_mask": enc["attention_mask"],
              "completion_ids": completion, "completion_mask": cmask, "num_items_in_batch": None}
    trainer.model.eval()
    with torch.no_grad():
        got = trainer.compute_loss(trainer.model, inputs).item()

    ids = torch.cat([enc["input_ids"], completion], 1)
    mask = torch.cat([enc["attention_mask"], cmask], 1)
    k, t = completion.size(1), args.temperature
    with torch.no_grad():
        ls = AutoModelForCausalLM.from_pretrained(run.model)(input_ids=ids, attention_mask=mask).logits
        lt = AutoModelForCausalLM.from_pretrained(args.teacher_model_name_or_path)(
            input_ids=ids, attention_mask=mask).logits
    logp_s = torch.log_softmax(ls[:, -k - 1:-1].double() / t, -1)
    logp_t = torch.log_softmax(lt[:, -k - 1:-1].double() / t, -1)
    per_token = (logp_s.exp() * (logp_s - logp_t)).sum(-1)
    want = ((per_token * cmask).sum() / cmask.sum()).item()
    forward = (((logp_t.exp() * (logp_t - logp_s)).sum(-1) * cmask).sum() / cmask.sum()).item()
    assert want > 0 and abs(forward - want) > 1e-3  # the check tells the two directions apart
    assert abs(got - want) < 1e-4, (got, want, forward)


def test_grpo_on_own_data_trains_two_steps(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """A user's JSONL tasks and reward module, through `trl grpo` as a user runs it."""
    data = ROOT / "tests" / "data"
    base = tiny_run("grpo", tiny_models["student"], tiny_models["teacher"], tmp_path / "ckpt")
    run = base.model_copy(update={"data": str(data / "tasks.jsonl"),
                                  "reward": "my_rewards.contains_answer", "taskset": "my-qa",
                                  "eval": base.eval.model_copy(update={"examples": 2})})
    c = backend.compile(run, cpu=True)
    out = write(c, tmp_path / "run")
    env = dict(os.environ, **OFFLINE, PYTHONPATH=str(data))
    p = subprocess.run(c.commands[0], shell=True, cwd=out, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert (tmp_path / "ckpt" / "config.json").exists()


@pytest.mark.parametrize("arm", ["opd", "opsd"])
def test_lora_default_trains_two_steps(arm: str, tiny_models: dict[str, str], tmp_path: Path) -> None:
    """The spec's default is LoRA: use_peft + lora_r must reach peft and train."""
    pytest.importorskip("peft")
    base = tiny_run(arm, tiny_models["student"], tiny_models["teacher"], tmp_path / "ckpt")
    run = base.model_copy(update={"lora": True, "lora_rank": 8})
    c = backend.compile(run, cpu=True)
    assert "use_peft: true" in c.text and "lora_r: 8" in c.text
    out = write(c, tmp_path / "run")
    p = subprocess.run(c.commands[0], shell=True, cwd=out, env=dict(os.environ, **OFFLINE),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert (tmp_path / "ckpt" / "adapter_config.json").exists()


def test_sft_loss_is_cross_entropy_on_the_teachers_tokens(tiny_models: dict[str, str],
                                                          tmp_path: Path) -> None:
    """The teacher samples with the written sample.py; TRL's SFT loss on those rows (as `trl sft`
    parses the written config) = the mean over the teacher's completion tokens only of
    -log p_student, computed here from the raw rows with the chat template and a forward pass."""
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer

    run = tiny_run("sft", tiny_models["student"], tiny_models["teacher"], tmp_path / "ckpt")
    out = write(backend.compile(run, cpu=True), tmp_path / "run")
    sys.path.insert(0, str(out))
    try:
        import sample  # the script written beside the config, run in-process
    finally:
        sys.path.remove(str(out))
        sys.modules.pop("sample", None)
    cwd = os.getcwd()
    os.chdir(out)
    try:
        assert sample.main(["--teacher", tiny_models["teacher"], "--prompts", "3", "--samples", "2",
                            "--max-new-tokens", "8", "--seed", "1"]) == 0
        script, args, _model, _data = parse("config.yaml", "sft")
        rows = load_dataset(script.dataset_name)
    finally:
        os.chdir(cwd)
    train = rows["train"]
    assert len(train) == 6 and set(train.column_names) == {"prompt", "completion"}
    assert args.completion_only_loss is True
    args.per_device_eval_batch_size = len(train)  # one batch: TRL's mean is over every token
    trainer = SFTTrainer(model=run.model, args=args, train_dataset=train, eval_dataset=train)
    batch = next(iter(trainer.get_eval_dataloader()))
    trainer.model.eval()
    with torch.no_grad():
        got = trainer.compute_loss(trainer.model, batch).item()
    logged = trainer.evaluate()["eval_loss"]

    tok = AutoTokenizer.from_pretrained(run.model)
    net = AutoModelForCausalLM.from_pretrained(run.model, dtype=torch.float64).eval()
    nll, count, every, tokens = 0.0, 0, 0.0, 0
    for row in train:
        prompt = tok.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True,
                                         return_dict=True)["input_ids"]
        full = tok.apply_chat_template(row["prompt"] + row["completion"], tokenize=True,
                                       return_dict=True)["input_ids"]
        assert full[: len(prompt)] == prompt  # the completion is a suffix of the conversation
        with torch.no_grad():
            logp = torch.log_softmax(net(input_ids=torch.tensor([full])).logits[0], -1)
        targets = torch.tensor(full[len(prompt):])
        nll -= logp[len(prompt) - 1: len(full) - 1].gather(-1, targets[:, None]).sum().item()
        count += len(targets)
        every -= logp[:-1].gather(-1, torch.tensor(full[1:])[:, None]).sum().item()
        tokens += len(full) - 1
    want = nll / count
    assert int((batch["labels"] != -100).sum()) == count  # the prompt is never a target
    assert abs(every / tokens - want) > 1e-3  # a loss over the prompt too would be told apart
    assert abs(got - want) < 1e-4, (got, want)
    assert abs(logged - want) < 1e-4, (logged, want)


def test_two_stage_run_sft_then_opd_trains_on_the_cpu(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """The written two-stage directory, run as a user would (bash run.sh): the teacher samples,
    trl sft trains 2 steps and saves; trl distillation then trains 2 steps from that saved
    model (its student); both folders parse with TRL's own parser first."""
    import whileai as wai

    first = tiny_run("sft", tiny_models["student"], tiny_models["teacher"], tmp_path / "unused")
    opd = tiny_run("opd", tiny_models["student"], tiny_models["teacher"], tmp_path / "unused")
    run = first.model_copy(update={"output_dir": "outputs", "then": wai.Stage(
        method=opd.method, prompts=opd.prompts, overrides=dict(opd.overrides))})
    c = wai.compile(run, "trl", cpu=True, out=tmp_path / "two")
    out = tmp_path / "two"
    assert [check_dir(out / d) for d in ("1-sft", "2-opd")] == [[], []]
    p = subprocess.run(["bash", str(out / "run.sh")], env=dict(os.environ, **OFFLINE),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-4000:]
    rows = (out / "1-sft" / "teacher_samples" / "train.jsonl").read_text().splitlines()
    assert len(rows) == 2 * 4 * 2  # steps x prompts x samples: fresh completions every step
    assert (out / "1-sft" / "outputs" / "config.json").exists()
    assert (out / "1-sft" / "outputs" / "tokenizer.json").exists()  # stage 2 loads its tokenizer too
    assert (out / "2-opd" / "outputs" / "config.json").exists()
    losses = [float(x) for x in _LOSS.findall(p.stdout + p.stderr)]
    assert len(losses) >= 6 and all(math.isfinite(x) for x in losses)
    assert "model_name_or_path: ../1-sft/outputs\n" in c.stages[1].text
