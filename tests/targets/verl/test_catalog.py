"""The pinned catalogue of verl 0.9.1's keys (schemas/verl-0.9.1.catalog.json) and its lookups.

The catalogue is written by scripts/gen_verl_catalog.py in a Python with verl; the live test
regenerates it there (`--check`) where verl is importable or WHILEAI_VERL_PYTHON names a Python
that has it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import verl_python

from whileai.targets.verl import catalog
from whileai.targets.verl import check as verl_check
from whileai.targets.verl.runsh import parse, read

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "verl"
LAX = json.loads((FIXTURES / "lax.json").read_text())


def test_catalogue_is_pinned_with_every_job():
    doc = catalog.document()
    assert doc["verl_version"] == verl_check.PIN == catalog.PIN
    assert set(doc["jobs"]) == set(verl_check.CONFIGS) == set(catalog.JOBS)
    assert {j: doc["jobs"][j]["config"] for j in doc["jobs"]} == verl_check.CONFIGS
    assert len(catalog.keys("main_ppo")) > 800 and len(catalog.keys("sft_trainer")) > 150


def test_every_key_the_accepted_runs_set_is_known():
    """Each override of every valid run verl 0.9.1 accepted (lax.json's bases and the runs
    whileai compiled) is a key of the catalogue; the one typo'd key added with + is not."""
    runs = [(v["kind"], v["overrides"]) for v in LAX["variants"] if v["name"].endswith("-base")]
    runs += [(c.kind, c.overrides) for r in LAX["compiled"] if r.get("run_sh") for c in parse(r["run_sh"])]
    assert len(runs) >= 4
    for kind, overrides in runs:
        for o in overrides:
            assert catalog.lookup(o.split("=", 1)[0], kind) is not None, (kind, o)
    assert catalog.lookup("+trainer.total_training_step") is None



def test_every_key_verl_refused_as_unknown_is_unknown_here():
    for v in LAX["variants"]:
        if v["verl"]["step"] == "compose" and "Could not override" in v["verl"]["error"]:
            key = v["verl"]["error"].split("'")[1]
            assert catalog.lookup(key, v["kind"]) is None, key


def test_lookup_reads_types_defaults_and_verls_choices():
    lr = catalog.lookup("actor_rollout_ref.actor.optim.lr")
    assert lr and (lr.type, lr.default, lr.source) == ("float", 1e-06, "yaml")
    assert catalog.lookup("optim.lr", "sft_trainer").default == 0.001  # type: ignore[union-attr]
    adv = catalog.lookup("algorithm.adv_estimator")
    assert adv and "grpo" in adv.choices and "grp0" not in adv.choices and "core_algos" in adv.choices_from
    name = catalog.lookup("actor_rollout_ref.rollout.name")
    assert name and set(name.choices) == {"vllm", "sglang", "trtllm"}
    loss = catalog.lookup("distillation.distillation_loss.loss_mode")
    assert loss and {"k1", "k3", "forward_kl_topk"} <= set(loss.choices) and loss.default == "k3"
    tp = catalog.lookup("actor_rollout_ref.rollout.tensor_model_parallel_size")
    assert tp and tp.default == 2  # verl's default TP 2, on one GPU too (#1191)
    n = catalog.lookup("actor_rollout_ref.rollout.log_prob_use_dynamic_bsz")
    assert n and n.interpolation.startswith("${oc.select:actor_rollout_ref.actor.use_dynamic_bsz")


def test_added_teachers_open_maps_and_keys_verl_reads_without_a_default():
    teacher = catalog.lookup("+distillation.teacher_models.math.inference.tensor_model_parallel_size")
    assert teacher and teacher.type == "int"
    assert catalog.lookup("+distillation.teacher_models.math.modl_path") is None
    assert catalog.suggest("distillation.teacher_models.math.modl_path") == \
        "did you mean 'distillation.teacher_models.math.model_path'?"
    kw = catalog.lookup("+actor_rollout_ref.rollout.engine_kwargs.vllm.enable_sleep_mode")
    assert kw and kw.source == "open"
    out = catalog.lookup("+data.output_path", "main_generation_server")
    assert out and out.source.startswith("read at trainer/main_generation_server.py:")
    assert catalog.lookup("+data.output_path", "main_ppo") is None


def test_suggest_names_the_near_key():
    assert catalog.suggest("+trainer.total_training_step") == "did you mean 'trainer.total_training_steps'?"
    assert catalog.suggest("actor_rollout_ref.rolout.n") == "did you mean 'actor_rollout_ref.rollout.n'?"
    assert catalog.suggest("zzzz.qqqq") == ""
    with pytest.raises(KeyError, match="verl jobs are"):
        catalog.lookup("a", "main_dpo")


def test_the_fixture_runs_use_only_known_keys():
    for run in ("grpo", "sft", "example-style"):
        for cmd in read(FIXTURES / "runs" / run):
            unknown = [o for o in cmd.overrides if catalog.lookup(o.split("=", 1)[0], cmd.kind) is None]
            assert unknown == [], (run, cmd.kind, unknown)


@pytest.mark.slow
def test_live_catalogue_is_up_to_date():
    python = verl_python()
    done = subprocess.run([python, str(ROOT / "scripts" / "gen_verl_catalog.py"), "--check"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_maps_verl_passes_on_whole_take_any_key():
    """ray.init's kwargs (main_ppo.py:63-74) and the reward manager's kwargs verl reads whole."""
    env = catalog.lookup("+ray_kwargs.ray_init.runtime_env.env_vars.TOKENIZERS_PARALLELISM")
    assert env and env.source == "open"
    kwargs = catalog.lookup("+reward.reward_kwargs.overlong_buffer_cfg.len")
    assert kwargs and kwargs.source.startswith("read at ")
    assert catalog.lookup("+ray_kwargs.ray_int.num_cpus") is None
