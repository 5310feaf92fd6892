"""Issue 23: the TRL backend states what TRL 1.16 does at run time: no zero-step run, one process
where one was planned, TRL's own divisibility rule, notes and warnings that match TRL's code.

The checks against TRL's own classes (its config's rule, its sampler, accelerate's launcher, the
adapter EMA) are in tests/targets/trl/test_trl_runtime.py; these need no TRL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLES, STUDENT, seed_methods
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.spec.load import load_spec
from whileai.targets.trl import compile as trl

runner = CliRunner()
METHODS = ("opd", "grpo", "opsd")  # the trainers whose RepeatSampler drops an incomplete batch


def seed_run(kind: str, method: object = None, **kw: object) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=STUDENT,  # type: ignore[arg-type]
                       method=method or seed_methods()[kind], **kw)


def tasks(tmp_path: Path, train: int, test: int = 2) -> str:
    path = tmp_path / "tasks.jsonl"
    rows = [{"prompt": f"What is {i}+1?", "answer": str(i + 1)} for i in range(train)]
    rows += [{"prompt": f"What is {i}+2?", "answer": str(i + 2), "split": "test"} for i in range(test)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "rewards.py").write_text("def contains_answer(completions, **kw):\n    return [0.0]\n")
    return str(path)


def own(kind: str, data: str, prompts: int, **kw: object) -> wai.RunSpec:
    extra = {"reward": "rewards.contains_answer"} if kind == "grpo" else {}
    return wai.RunSpec(taskset="my-qa", model=STUDENT, method=seed_methods()[kind], data=data,  # type: ignore[arg-type]
                       prompts=prompts, **extra, **kw)


@pytest.mark.parametrize("kind", METHODS)
def test_fewer_training_rows_than_prompts_is_refused_at_compile(kind: str, tmp_path: Path) -> None:
    """TRL would train 0 steps and exit 0 ("stopping training at step 0"): refuse, one line."""
    data = tasks(tmp_path, 6)
    spec = tmp_path / "s.toml"
    reward = 'reward = "rewards.contains_answer"\n' if kind == "grpo" else ""
    method = {"opd": 'type = "opd"\nteacher = { url = "http://localhost:8001/v1", model = "t/t" }\n',
              "grpo": 'type = "grpo"\nsamples = 4\n', "opsd": 'type = "opsd"\nprivileged = "answer"\n'}[kind]
    spec.write_text(f'taskset = "my-qa"\nmodel = "Qwen/Qwen3-0.6B"\ndata = "{data}"\n{reward}'
                    f"steps = 5\nprompts = 8\n\n[method]\n{method}")
    out = tmp_path / "run"
    r = runner.invoke(app, ["compile", str(spec), "-b", "trl", "-o", str(out)], env={"COLUMNS": "200"})
    assert r.exit_code == 2, r.stdout
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    for words in ("prompts", "8 prompts per step", "6 training rows", "step 0", "at most 6"):
        assert words in r.stderr, (words, r.stderr)
    assert not out.exists()  # nothing written
    assert trl.compile(own(kind, data, 6)).facts.prompts == 6  # every row in one batch: trains


def test_the_boundary_follows_processes_and_overrides(tmp_path: Path) -> None:
    data = tasks(tmp_path, 10)
    trl.compile(own("grpo", data, 10, gpus=2))  # 10 prompts x 8 samples over 2 processes
    with pytest.raises(SpecError, match="11 prompts per step but .* 10 training rows"):
        trl.compile(own("grpo", data, 11))
    # the generation batch an override makes is what TRL's sampler cuts the rows into
    with pytest.raises(SpecError, match="^overrides.steps_per_generation: 20 prompts per step"):
        trl.compile(own("grpo", data, 10, overrides={"steps_per_generation": 20}))
    with pytest.raises(SpecError, match="^prompts: 12 prompts per step"):
        trl.compile(own("opd", data, 12))


def test_sft_with_few_rows_trains_so_it_is_not_refused(tmp_path: Path) -> None:
    """sample.py cycles the training rows to as many prompts as the steps need."""
    c = trl.compile(own("sft", tasks(tmp_path, 6), 8))
    assert "--prompts 800" in c.commands[0]  # 100 steps x 8 prompts x 4 samples / 4 samples


@pytest.mark.parametrize("name", ["grpo.toml", "opsd.toml"])
def test_own_data_examples_have_a_step_of_rows(name: str) -> None:
    run = load_spec(EXAMPLES / "own-data" / name)
    c = trl.compile(run)
    train = c.files["data/train.jsonl"].count("\n")
    assert train >= run.prompts and c.facts.prompts == run.prompts


@pytest.mark.parametrize("prompts,samples,gpus", [(6, 4, 8), (3, 8, 8), (10, 2, 4), (9, 4, 4)])
def test_generation_batch_is_checked_over_every_process(prompts: int, samples: int, gpus: int) -> None:
    """TRL: per_device x processes x steps_per_generation divides by num_generations; a
    per-process batch need not (6 prompts x 4 on 8 GPUs: 3 a process, 24 in all)."""
    import yaml

    c = trl.compile(seed_run("grpo", method=wai.GRPO(samples=samples), prompts=prompts, gpus=gpus))
    doc = yaml.safe_load(c.files["config.yaml"])
    assert yaml.safe_load(c.files["accelerate.yaml"])["num_processes"] == gpus
    batch = doc["per_device_train_batch_size"] * gpus * doc["gradient_accumulation_steps"]
    assert batch == prompts * samples and doc["num_generations"] == samples
    assert c.facts.prompts == prompts and c.facts.rollouts == prompts * samples


def test_uneven_split_over_processes_and_overridden_batches_blame_what_the_user_set() -> None:
    with pytest.raises(SpecError, match="^prompts: 5 .*15 completions split evenly over the 2"):
        trl.compile(seed_run("grpo", method=wai.GRPO(samples=3), prompts=5, gpus=2))
    with pytest.raises(SpecError, match=r"^overrides.per_device_train_batch_size: a generation batch "
                       r"of per_device_train_batch_size 3 x 1 process x steps_per_generation 4 = 12"):
        trl.compile(seed_run("grpo", method=wai.GRPO(samples=8), prompts=4,
                             overrides={"per_device_train_batch_size": 3}))
    with pytest.raises(SpecError, match="^overrides.generation_batch_size: 20 .*multiple of "
                       "per_device_train_batch_size 8 x 2 processes = 16"):
        trl.compile(seed_run("grpo", prompts=8, gpus=2, overrides={"generation_batch_size": 20}))
    with pytest.raises(SpecError, match="^overrides.num_generations: 5 .*set samples = 5 in the spec"):
        trl.compile(seed_run("grpo", prompts=8, overrides={"num_generations": 5,
                                                           "per_device_train_batch_size": 6}))


@pytest.mark.parametrize("kind", ["opd", "grpo", "opsd", "sft"])
@pytest.mark.parametrize("cpu", [False, True])
def test_one_process_is_stated_in_every_command_and_the_report(kind: str, cpu: bool) -> None:
    c = trl.compile(seed_run(kind), cpu=cpu, out="runs/x")
    train = c.commands[-1]
    assert ("--accelerate_config accelerate.yaml" in train
            or "accelerate launch --config_file accelerate.yaml" in train), train
    launch = c.files["accelerate.yaml"]
    assert "num_processes: 1\n" in launch and "distributed_type: 'NO'" in launch
    assert ("use_cpu: true" in launch) == cpu
    assert "num_processes 1" in c.header()[0] and "num_processes 1" in c.files["README.md"]
    assert train.split("&& ", 1)[1] in c.files["config.yaml"].splitlines()[1]  # the header's command


def test_trl_warnings_say_what_trl_does() -> None:
    """top_k is TRL's sampling filter only; temperature divides both models' logits in the loss."""
    opd = seed_run("opd", method=wai.OPD(wai.Endpoint(url="http://x/v1", model="t/t"), top_k=1,
                                         temperature=0.7))
    got = {f.rule: f.message for f in trl.compile(opd).warnings}
    assert "top-k-small" not in got
    assert "changes the objective" in got["temperature-off-policy"]
    opsd = trl.compile(seed_run("opsd", method=wai.OPSD(privileged="answer", temperature=0.7)))
    assert "changes the objective" in {f.rule: f.message for f in opsd.warnings}["temperature-off-policy"]
    assert any(r.path == "temperature" and "logits in the loss" in r.note for r in opsd.reads)


def test_ema_with_lora_is_called_an_adapter_ema_and_sharded_layouts_are_warned() -> None:
    ema = wai.OPSD(privileged="answer", anchor="ema:0.01")
    one = trl.compile(seed_run("opsd", method=ema))
    rules = {f.rule: f.message for f in one.warnings}
    assert "A and B matrices separately" in rules["ema-lora-adapter"] and "full weights" in rules[
        "ema-lora-adapter"]
    assert "ema-lora-sharded" not in rules
    note = next(r.note for r in one.reads if r.path == "teacher_model_kind")
    assert "not of the student's weights" in note
    four = {f.rule for f in trl.compile(seed_run("opsd", method=ema, gpus=4)).warnings}
    assert {"ema-lora-adapter", "ema-lora-sharded"} <= four
    full = trl.compile(seed_run("opsd", method=ema, lora=False, gpus=4))
    assert not {"ema-lora-adapter", "ema-lora-sharded"} & {f.rule for f in full.warnings}
    initial = trl.compile(seed_run("opsd", method=wai.OPSD(privileged="answer", anchor="initial")))
    assert "ema-lora-adapter" not in {f.rule for f in initial.warnings}


def test_grpo_reference_model_note_follows_beta() -> None:
    default = trl.compile(seed_run("grpo", gpus=2, lora=False)).files["README.md"]
    assert "no reference model" in default and "reference model is sharded" not in default
    kl = trl.compile(seed_run("grpo", gpus=2, lora=False, overrides={"beta": 0.04})).files["README.md"]
    assert "reference model is sharded too" in kl


def test_sft_prompts_per_step_is_called_an_average() -> None:
    c = trl.compile(seed_run("sft"))
    assert "x ~64 prompts x 4 rollouts" in c.header()[1]
    assert any("is an average: trl sft shuffles" in n for n in c.notes)
