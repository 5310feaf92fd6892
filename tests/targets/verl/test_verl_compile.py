"""`-t verl`: the run directory whileai writes for verl 0.9.1, read back as verl would receive it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers import EXAMPLES, STUDENT, TEACHER

import whileai as wai
from whileai.spec.load import load_spec
from whileai.targets import registry
from whileai.targets.base import Options
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import parse


def overrides(c: wai.Compiled, index: int = 0) -> dict[str, str]:
    """The Hydra overrides of run.sh's `index`-th verl command, as the process receives them (a
    path in the run folder Hydra-quoted: its quotes removed here, kept by test_paths_quoted)."""
    cmd = parse(c.files["run.sh"], {"PWD": "/run"})[index]
    return {k: unquoted(v) for k, v in (o.lstrip("+").split("=", 1) for o in cmd.overrides)}


def unquoted(value: str) -> str:
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value


def run(kind: str, **fields: object) -> wai.RunSpec:
    teacher = {"url": "http://localhost:8001/v1", "model": TEACHER}
    method = {"type": kind} | ({"teacher": teacher} if kind in ("opd", "sft") else {})
    return wai.RunSpec.model_validate({"taskset": "reverse-text", "model": STUDENT, "method": method}
                                      | fields)


def test_grpo_run_sh_has_the_spec_at_verls_keys():
    c = compile(load_spec(EXAMPLES / "grpo.toml"))
    [cmd] = parse(c.files["run.sh"], {"PWD": "/run"})
    assert cmd.kind == "main_ppo" and cmd.launcher == ("python3", "-m")
    o = overrides(c)
    assert o["algorithm.adv_estimator"] == "grpo"
    assert o["data.train_batch_size"] == "64"  # prompts, as verl counts them
    assert o["actor_rollout_ref.rollout.n"] == str(c.run.method.samples)
    assert o["trainer.total_training_steps"] == "100"
    assert o["data.train_files"] == "/run/data/train.jsonl"
    assert o["actor_rollout_ref.model.path"] == STUDENT
    assert o["actor_rollout_ref.model.lora_rank"] == "32"
    # one optimizer update a step; the micro batch divides a GPU's share of it
    assert o["actor_rollout_ref.actor.ppo_mini_batch_size"] == "64"
    share = 64 * c.run.method.samples // int(o["trainer.n_gpus_per_node"])
    micro = o["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"]
    assert share % int(micro) == 0
    # the log-prob passes use the actor's micro batch (issue #6280), the reference's too
    assert o["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu"] == micro
    assert o["actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu"] == micro
    assert {"data/train.jsonl", "data/test.jsonl", "reward.py", "README.md"} <= set(c.files)


def test_run_sh_has_one_override_a_line_in_verls_example_shape():
    text = compile(load_spec(EXAMPLES / "grpo.toml")).files["run.sh"]
    lines = text.splitlines()
    start = lines.index("python3 -m verl.trainer.main_ppo \\")
    body = lines[start + 1:]
    assert "set -xeuo pipefail" in lines
    assert all(ln.startswith("    ") and "=" in ln for ln in body)
    assert all(ln.endswith(" \\") for ln in body[:-1]) and body[-1].endswith('"$@"')


def test_opd_teacher_is_a_pool_and_its_url_is_ignored():
    c = compile(load_spec(EXAMPLES / "opd.toml"))
    o = overrides(c)
    assert o["distillation.enabled"] == "True"
    assert o["distillation.distillation_loss.loss_mode"] == "k1"
    assert o["distillation.distillation_loss.use_policy_gradient"] == "True"
    t = "distillation.teacher_models.teacher_model"
    assert o[f"{t}.model_path"] == TEACHER
    pool = int(o["distillation.n_gpus_per_node"]) * int(o["distillation.nnodes"])
    assert int(o[f"{t}.num_replicas"]) * int(o[f"{t}.inference.tensor_model_parallel_size"]) == pool
    [url] = [i for i in c.ignores if i.field == "teacher.url"]
    assert "trainer_base.py:837-846" in url.reason


def test_a_big_teacher_gets_a_pool_of_its_tensor_parallel_size():
    r = run("opd", gpus=4)
    r = r.model_copy(update={"method": r.method.model_copy(update={"teacher": wai.Endpoint(
        url="http://x:8001/v1", model="Qwen/Qwen2.5-72B-Instruct")})})
    o = overrides(compile(r))
    tp = int(o["distillation.teacher_models.teacher_model.inference.tensor_model_parallel_size"])
    assert tp > 1 and o["distillation.n_gpus_per_node"] == str(tp)


def test_an_overridden_pool_is_filled_with_replicas():
    o = overrides(compile(run("opd", overrides={"distillation.n_gpus_per_node": 4})))
    t = "distillation.teacher_models.teacher_model"
    assert o["distillation.n_gpus_per_node"] == "4"
    assert int(o[f"{t}.num_replicas"]) * int(o[f"{t}.inference.tensor_model_parallel_size"]) == 4


def test_sft_is_two_verl_jobs_with_whileais_conversion_between():
    c = compile(load_spec(EXAMPLES / "sft.toml"))
    gen, train = parse(c.files["run.sh"], {"PWD": "/run"})
    assert (gen.kind, train.kind) == ("main_generation_server", "sft_trainer")
    assert train.launcher[0] == "torchrun"
    g = dict(o.lstrip("+").split("=", 1) for o in gen.overrides)
    s = dict(o.lstrip("+").split("=", 1) for o in train.overrides)
    assert g["actor_rollout_ref.model.path"] == TEACHER
    assert '+data.output_path="/run/samples/responses.parquet"' in gen.overrides
    assert s["model.path"] == STUDENT and s["data.messages_key"] == "messages"
    assert s["data.train_batch_size"] == str(64 * c.run.method.samples)
    text = c.files["run.sh"]
    assert text.index("convert.py prompts") < text.index("main_generation_server") < \
        text.index("convert.py messages") < text.index("sft_trainer")
    assert "convert.py" in c.files
    # validation: the teacher answers the holdout in the same job; sft_trainer's loss on them
    assert unquoted(s["data.val_files"]) == "/run/data/sft_val.parquet" and int(s["trainer.test_freq"]) > 0
    assert "--holdout data/test.jsonl --holdout-rows 128" in text and "--val data/sft_val.parquet" in text
    assert not any(w.rule == "eval-never-runs" for w in c.warnings)


def test_opsd_is_refused_naming_verl_and_the_feature_issue():
    with pytest.raises(wai.SpecError, match=r"verl==0\.9\.1.*#6827"):
        compile(load_spec(EXAMPLES / "opsd.toml"))


def test_jsd_and_mixtures_are_refused():
    r = run("opd")
    with pytest.raises(wai.SpecError, match="no JSD"):
        compile(r.model_copy(update={"method": r.method.model_copy(update={"divergence": "jsd"})}))


def test_a_batch_verl_cannot_split_over_the_gpus_is_refused():
    with pytest.raises(wai.SpecError, match="divide by the 3 GPUs"):
        compile(run("grpo", gpus=3, prompts=5, method={"type": "grpo", "samples": 2}))


def test_two_nodes_write_the_ray_and_slurm_lines():
    c = compile(run("grpo", nodes=2, gpus_per_node=8, slurm={"partition": "gpu", "account": "a"}))
    o = overrides(c)
    assert (o["trainer.nnodes"], o["trainer.n_gpus_per_node"]) == ("2", "8")
    assert any(line.startswith("ray start --head") for line in c.commands)
    assert any("ray job submit" in line and '-- bash "$PWD/run.sh"' in line for line in c.commands)
    assert "#SBATCH --nodes=2" in c.files["slurm.sh"] and "#SBATCH --partition=gpu" in c.files["slurm.sh"]


def test_two_nodes_run_in_the_shared_folder_not_a_ray_working_dir_copy(tmp_path: Path):
    """A Ray working_dir runs the driver and workers in Ray's per-node copy: outputs never land in
    the run folder. The job runs run.sh in place, by its absolute path, on the shared filesystem."""
    c = compile(run("grpo", nodes=2, gpus_per_node=8), out=str(tmp_path / "my run"))
    assert "runtime_env.yaml" not in c.files
    assert not any("runtime-env" in line or "working_dir" in line for line in c.commands)
    assert not any("working_dir:" in text for text in c.files.values())
    assert "filesystem every node sees" in c.files["README.md"]
    [submit] = [line for line in c.commands if "ray job submit" in line]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ray").write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    (fake / "ray").chmod(0o755)
    (tmp_path / "my run").mkdir()
    p = subprocess.run(["bash", "-c", submit.split("  #")[0]], capture_output=True, text=True,
                       env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "HEAD_IP": "h"})
    assert p.returncode == 0, p.stderr
    args = p.stdout.splitlines()
    assert args[args.index("--") + 1:] == ["bash", str(tmp_path / "my run" / "run.sh")]


def test_compile_is_pure_and_the_registry_finds_verl(tmp_path: Path):
    target = registry.get("verl")
    c = target.compile(run("grpo"), name="grpo", out=str(tmp_path / "x"), options=Options())
    assert not (tmp_path / "x").exists() and c.target == "verl" and target.shape.suffix is None


def test_check_is_claimed_by_verl_not_trl(tmp_path: Path):
    c = compile(run("grpo"))
    (tmp_path / "run.sh").write_text(c.files["run.sh"])
    claimed = [n for n in registry.names() if registry.get(n).claims(tmp_path)]
    assert claimed == ["verl"]
    (tmp_path / "run.sh").write_text("#!/bin/bash\ntrl grpo --config config.yaml\n")
    assert [n for n in registry.names() if registry.get(n).claims(tmp_path)] == []  # no one's layout
    (tmp_path / "config.yaml").write_text("max_steps: 1\n")  # TRL's own mark: its config
    assert [n for n in registry.names() if registry.get(n).claims(tmp_path)] == ["trl"]
    (tmp_path / "run.sh").unlink()
    (tmp_path / "config.yaml").unlink()  # an empty folder: TRL's check says what is missing
    assert [n for n in registry.names() if registry.get(n).claims(tmp_path)] == ["trl"]


@pytest.mark.parametrize("key,value,words", [
    ("actor_rollout_ref.actor.optim.lr", "abc", "type float"),
    ("algorithm.adv_estimator", "grp0", "one of gae"),
    ("actor_rollout_ref.rollout.name", "vlm", "vllm"),
    ("actor_rollout_ref.rollout.nam", "vllm", "did you mean 'actor_rollout_ref.rollout.name'"),
])
def test_overrides_verl_lets_through_are_refused_against_its_catalogue(key, value, words):
    """verl 0.9.1's own check accepts lr=abc, adv_estimator=grp0, rollout.name=vlm
    (tests/fixtures/verl/lax.json); whileai refuses them in one line naming the key."""
    with pytest.raises(wai.SpecError, match=f"overrides.{key}") as e:
        compile(run("grpo", overrides={key: value}))
    assert words in str(e.value)


def test_an_override_lands_in_run_sh_and_the_report_says_what_it_replaced():
    c = compile(run("grpo", overrides={"actor_rollout_ref.rollout.gpu_memory_utilization": 0.5}))
    assert overrides(c)["actor_rollout_ref.rollout.gpu_memory_utilization"] == "0.5"
    [r] = [r for r in c.reads if r.field.startswith("overrides.")]
    assert "replaces" in r.note


def test_sft_overrides_name_their_job():
    c = compile(run("sft", overrides={"sft.optim.lr": 2e-5, "generate.data.output_path": "/x.parquet"}))
    gen, train = parse(c.files["run.sh"], {"PWD": "/run"})
    assert "+data.output_path=/x.parquet" in gen.overrides and "optim.lr=2e-05" in train.overrides
    with pytest.raises(wai.SpecError, match="generate. .* or sft."):
        compile(run("sft", overrides={"optim.lr": 2e-5}))


@pytest.mark.parametrize("key,value,words", [
    ("actor_rollout_ref.rollout.tensor_model_parallel_size", 3, "does not divide the 4 GPUs"),
    ("actor_rollout_ref.rollout.gpu_memory_utilization", 1.7, "fraction"),
    ("actor_rollout_ref.rollout.temperature", 0.0, "n = 8"),
])
def test_whileais_own_rules_refuse_what_verl_lets_through(key, value, words):
    """verl 0.9.1 accepts each (tests/fixtures/verl/lax.json); compile refuses it in one line
    naming the override (whileai.targets.verl.lax, called once per job)."""
    r = run("grpo", gpus=4, prompts=8, method={"type": "grpo", "samples": 8}, overrides={key: value})
    with pytest.raises(wai.SpecError, match=f"overrides.{key}") as e:
        compile(r)
    assert words in str(e.value)


def test_sft_jobs_meet_the_lax_rules_too():
    with pytest.raises(wai.SpecError, match="overrides.generate.actor_rollout_ref.rollout.temperature"):
        compile(run("sft", overrides={"generate.actor_rollout_ref.rollout.temperature": 0.0}))


def test_a_list_override_is_checked_item_by_item():
    """trainer.logger takes several backends (the recipe adds "file"); each must be one verl has."""
    c = compile(run("grpo", overrides={"trainer.logger": ["console", "file"]}))
    assert overrides(c)["trainer.logger"] == '["console","file"]'
    with pytest.raises(wai.SpecError, match="overrides.trainer.logger") as e:
        compile(run("grpo", overrides={"trainer.logger": ["console", "fle"]}))
    assert e.value.value == "fle" and "each item one of" in e.value.allowed


def test_a_key_whose_default_is_null_takes_a_value():
    """trainer.validation_data_dir defaults to null in verl's YAML: null is its unset, not its type."""
    c = compile(run("grpo", overrides={"trainer.validation_data_dir": "$PWD/outputs/val"}))
    assert overrides(c)["trainer.validation_data_dir"] == "/run/outputs/val"
