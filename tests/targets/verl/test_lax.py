"""whileai's own rules where verl 0.9.1 is lax (whileai/targets/verl/lax.py), each shown against
verl's own recorded verdict (tests/fixtures/verl/lax.json: what verl's config check said about
the same overrides; scripts/gen_verl_fixture.py records it with a Python that has verl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai.errors import SpecError
from whileai.targets.verl import lax
from whileai.targets.verl.job import launcher_gpus
from whileai.targets.verl.values import INTERPOLATION, fits, parse_value

ROOT = Path(__file__).resolve().parents[3]
LAX = json.loads((ROOT / "tests" / "fixtures" / "verl" / "lax.json").read_text())
BY_NAME = {v["name"]: v for v in LAX["variants"]}
FILES = ["data/train.parquet", "data/test.parquet", "data/prompts.parquet", "data/sft.parquet"]
# each rule, with a mistake of battery.toml that verl 0.9.1 accepts and the rule refuses
SHOWN_BY = {
    "unknown-key": "added-key-typo", "type": "lr-not-a-number", "choice": "adv-estimator-typo",
    "rollout-tp": "rollout-tp-3-of-8", "memory-utilization": "memory-utilization-1.7",
    "greedy-samples": "temperature-0-with-n-8", "batch-gpus": "dynamic-bsz-skips-divisibility",
    "mini-batch": "micro-not-dividing-mini-share", "data-file": "missing-data-file",
    "teacher-pool": "opd-one-teacher-replicas-ignored",
    "teacher-dropped": "opd-teacher-model-dropped-beside-named", "sft-gpus": "sft-batch-not-dividing-gpus",
}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A run folder holding the data files the battery's valid runs name."""
    for f in FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"")
    return tmp_path


def _refusals(variant: dict, base: Path) -> list[lax.Refusal]:
    return lax.refusals(lax.as_mapping(variant["overrides"]), job=variant["kind"], base=base,
                        launcher=launcher_gpus(variant["launcher"]))


def _changed(variant: dict) -> set[str]:
    """The keys the variant's mistake sets or drops (a leading + ignored)."""
    return {o.split("=", 1)[0].lstrip("+") for o in variant["set"]} | set(variant["drop"])


def test_every_rule_is_shown_by_a_mistake_verl_accepts_and_documented():
    assert set(SHOWN_BY) == set(lax.RULES)
    docs = (ROOT / "docs" / "verl.md").read_text()
    for rule, (what, cite) in lax.RULES.items():
        assert what and ("verl #" in cite or ".py" in cite or "Hydra" in cite), rule
        assert f"| `{rule}` |" in docs, f"docs/verl.md's table of rules lacks {rule}"


def test_the_gpus_torchrun_starts():
    assert launcher_gpus(["torchrun", "--standalone", "--nnodes=2", "--nproc_per_node=8", "-m"]) == (8, 2)
    assert launcher_gpus(["torchrun", "--nproc-per-node", "4", "-m"]) == (4, 1)
    assert launcher_gpus(["python3", "-m"]) is None
    assert launcher_gpus(["torchrun", "--nproc_per_node=$N", "-m"]) is None


@pytest.mark.parametrize("rule", sorted(SHOWN_BY))
def test_rule_refuses_what_verl_itself_accepts(rule, base):
    variant = BY_NAME[SHOWN_BY[rule]]
    assert variant["verl"]["accepted"] is True, "verl 0.9.1's own check lets the mistake through"
    [r] = _refusals(variant, base)
    assert r.rule == rule and r.key.lstrip("+") in _changed(variant) | {
        "actor_rollout_ref.rollout.tensor_model_parallel_size"}
    assert r.verl.startswith("lets it through"), r
    base_variant = BY_NAME[f"{variant['base']}-base"]
    assert _refusals(base_variant, base) == []  # the same run without the mistake passes


def test_every_mistake_verl_lets_through_is_refused_with_one_line(base):
    """Each variant verl accepts (or crashes on) that is a mistake: exactly one refusal, on the key
    the mistake changed (or the default it left), saying what verl itself does."""
    assert len(LAX["meta"]["lax"]) >= 25
    for name in LAX["meta"]["lax"]:
        variant = BY_NAME[name]
        got = _refusals(variant, base)
        assert len(got) == 1, (name, got)
        r = got[0]
        assert "\n" not in r.line() and r.key and r.message and r.allowed and r.rule in lax.RULES
        if variant["drop"]:  # a dropped key takes verl's default: the refusal names it
            assert r.key in variant["drop"], (name, r)
        else:
            assert r.key.lstrip("+") in _changed(variant), (name, r)
        expected = "crashes" if variant["expect"] == "raw" else "lets it through"
        assert r.verl.startswith(expected), (name, r.verl)


def test_what_lax_says_verl_refuses_verl_refuses(base):
    """Where lax also refuses a mistake verl's own check catches, it says verl refuses it."""
    caught = 0
    for variant in LAX["variants"]:
        if variant["expect"] != "refuses":
            continue
        for r in _refusals(variant, base):
            assert r.verl.startswith("refuses"), (variant["name"], r)
            caught += 1
    assert caught >= 10


def test_bases_and_verls_own_refusals_outside_lax_pass(base):
    for name in ("grpo-base", "opd-base", "generation-base", "sft-base", "rollout-micro-missing",
                 "opd-k1-without-policy-gradient", "generation-no-output-path"):
        assert _refusals(BY_NAME[name], base) == [], name


def test_data_files_written_by_an_earlier_step_or_elsewhere_count(tmp_path):
    run = {"data.train_files": "data/train.parquet", "data.val_files": "[out/a.parquet,/abs/b.parquet]"}
    got = lax.refusals(run, job="main_ppo", base=tmp_path)
    assert [(r.key, r.rule) for r in got] == [("data.train_files", "data-file"),
                                              ("data.val_files", "data-file")]
    # the absolute one names the machine that runs it: not checked
    assert got[1].message.startswith("out/a.parquet is not in the run folder")
    assert lax.refusals(run, job="main_ppo", base=tmp_path, produced=["data/train.parquet", "out"]) == []
    assert lax.refusals(run, job="main_ppo") == []  # no base: files are not checked
    assert lax.refusals({"data.train_files": "${oc.env:DATA}"}, job="main_ppo", base=tmp_path) == []


def test_keys_types_and_choices():
    got = lax.refusals({"+trainer.total_training_step": "10", "algorithm.adv_estimator": "grp0",
                        "trainer.logger": "[console,wandbb]", "~trainer.logger": "",
                        "actor_rollout_ref.rollout.temperature": "${oc.env:T}",
                        "actor_rollout_ref.actor.optim.lr": "1e-6", "data.train_batch_size": "2.5"},
                       job="main_ppo")
    assert [r.key for r in got] == ["+trainer.total_training_step", "algorithm.adv_estimator",
                                    "trainer.logger", "data.train_batch_size"]
    assert "did you mean 'trainer.total_training_steps'?" in got[0].message
    assert "did you mean 'grpo'?" in got[1].message and "core_algos.py" in got[1].allowed
    assert "'wandbb'" in got[2].message and "did you mean 'wandb'?" in got[2].message
    assert got[3].message == "'2.5' is not an integer"
    plus = lax.refusals({"+trainer.total_epochs": "2"}, job="main_ppo")
    assert plus[0].allowed == "trainer.total_epochs=2 (without +)" and plus[0].verl.startswith("refuses")
    teacher = {"+distillation.teacher_models.math.model_path": "Qwen/Qwen3-4B",
               "+distillation.teacher_models.math.inference.tensor_model_parallel_size": "2"}
    assert lax.refusals(teacher, job="main_ppo") == []  # an added teacher takes teacher_model's keys


def test_several_teachers_must_sum_to_the_pool():
    run = {"distillation.enabled": "True", "distillation.n_gpus_per_node": "8", "distillation.nnodes": "1",
           "+distillation.teacher_models.a.num_replicas": "2",
           "+distillation.teacher_models.a.inference.tensor_model_parallel_size": "2",
           "+distillation.teacher_models.b.num_replicas": "1",
           "+distillation.teacher_models.b.inference.tensor_model_parallel_size": "4"}
    assert lax.refusals(run, job="main_ppo") == []
    [r] = lax.refusals({**run, "+distillation.teacher_models.b.num_replicas": "2"}, job="main_ppo")
    assert (r.rule, r.allowed) == ("teacher-pool", "a sum of 8") and "sum to 12" in r.message


def test_two_nodes_count_every_gpu():
    run = {"trainer.n_gpus_per_node": "8", "trainer.nnodes": "2", "data.train_batch_size": "4",
           "actor_rollout_ref.rollout.n": "4", "actor_rollout_ref.actor.ppo_mini_batch_size": "4",
           "actor_rollout_ref.rollout.tensor_model_parallel_size": "8"}
    assert lax.refusals(run, job="main_ppo") == []
    [r] = lax.refusals({**run, "actor_rollout_ref.rollout.tensor_model_parallel_size": "16"}, job="main_ppo")
    assert r.rule == "rollout-tp" and "spans nodes of 8 GPUs" in r.message
    assert r.verl.startswith("lets it through")


def test_first_error_is_one_spec_error_line():
    assert lax.first_error({"data.train_batch_size": "256"}, job="main_ppo") is None
    with pytest.raises(SpecError) as e:
        lax.first_error({"actor_rollout_ref.rollout.gpu_memory_utilization": "1.7",
                         "algorithm.adv_estimator": "grp0"}, job="main_ppo")
    assert e.value.field == "algorithm.adv_estimator" and e.value.value == "grp0"
    assert "\n" not in str(e.value) and "verl 0.9.1 lets it through" in str(e.value)


@pytest.mark.parametrize(("raw", "value"), [
    ("1e-6", 1e-06), ("16", 16), ("-1", -1), ("True", True), ("false", False), ("null", None),
    ("abc", "abc"), ("'1e-6'", "1e-6"), ("[console,wandb]", ["console", "wandb"]),
    ('["console"]', ["console"]), ("{a: 1}", {"a": 1}), ("0.5", 0.5), ("inf", float("inf")),
])
def test_values_read_as_hydra_reads_them(raw, value):
    assert parse_value(raw) == value
    assert parse_value("${data.x}") is INTERPOLATION


def test_fits():
    assert fits(3, "float") and fits(1e-6, "float") and not fits("abc", "float")
    assert not fits(2.5, "int") and fits(2.0, "int") and not fits(2.5, "int", strict=False)
    assert fits(None, "int") and fits("x", "str | None")
    assert not fits(["a"], "str") and fits(["a"], "str", strict=False)
    assert fits(True, "bool") and not fits("yes", "bool") and fits({"a": 1}, "MtpConfig")
    assert fits(["a"], "list[str] | None") and not fits(True, "int")


def test_what_verls_own_scripts_write_is_not_refused():
    """Shapes verl's example scripts use: a dataclass field the YAML leaves out, added with +; one
    logger as a string (utils/tracking.py:63 takes it); a variable the script leaves unset."""
    ok = {"+actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype": "bf16",
          "trainer.logger": "console", "trainer.nnodes": "$SLURM_JOB_NUM_NODES",
          "+ray_kwargs.ray_init.runtime_env.env_vars.NCCL_DEBUG": "WARN"}
    assert lax.refusals(ok, job="main_ppo") == []
    [r] = lax.refusals({"actor_rollout_ref.actor.fsdp_config.mixed_precision": "null"}, job="main_ppo")
    assert r.allowed == "+actor_rollout_ref.actor.fsdp_config.mixed_precision=null"
    assert r.verl.startswith("refuses it at compose")

