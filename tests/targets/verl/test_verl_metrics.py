"""OPD's series read from verl 0.9.1's file-logger lines (utils/tracking.py:543-545: one
`{"step": n, "data": {...}}` a step), with the keys an OPD step logs under k1 with the policy
gradient and task rewards off (as whileai writes it)."""

from __future__ import annotations

import json

from whileai.targets.verl.metrics import parse_verl_jsonl


def opd_step(step: int, pg: float, distill: float) -> str:
    """The actor's metrics of one OPD step, named as verl names them: ppo_loss's (workers/utils/
    losses.py:119) for the task-reward loss it then zeroes (trainer/distillation/losses.py:214-217),
    the distillation loss's (losses.py:225, 255-256, 289-290; abs_loss: losses.py:403), each
    prefixed `actor/` by trainer_base.py:1861."""
    data = {"actor/pg_loss": pg, "actor/pg_clipfrac": 0.0, "actor/ppo_kl": 0.0,
            "actor/pg_clipfrac_lower": 0.0,
            "actor/distillation/abs_loss": abs(distill) + 0.2, "actor/distillation/loss_min": -3.0,
            "actor/distillation/loss_max": 7.5, "actor/distillation/pg_clipfrac": 0.0,
            "actor/distillation/ppo_kl": 0.0, "actor/distillation/loss": distill, "actor/entropy": 0.9,
            "actor/grad_norm": 1.1, "actor/lr": 1e-5, "critic/score/mean": 0.25, "perf/mfu/actor": 0.3}
    return json.dumps({"step": step, "data": data})


def test_opds_training_loss_is_the_distillation_loss_not_the_zeroed_task_loss():
    lines = [opd_step(1, pg=-0.31, distill=0.52), opd_step(2, pg=0.07, distill=0.41),
             opd_step(3, pg=0.0, distill=0.33)]
    s = parse_verl_jsonl(lines)
    assert s["train_loss"] == [(1, 0.52), (2, 0.41), (3, 0.33)]
    assert s["teacher_kl"] == s["train_loss"]  # k1's surrogate: the reverse-KL estimate at ratio 1
    assert s["train_reward"] == [(1, 0.25), (2, 0.25), (3, 0.25)] and s["entropy"][0] == (1, 0.9)


def test_a_grpo_log_keeps_pg_loss_and_an_sft_log_its_train_loss():
    grpo = [json.dumps({"step": 1, "data": {"actor/pg_loss": 0.12, "critic/score/mean": 0.4}})]
    assert parse_verl_jsonl(grpo)["train_loss"] == [(1, 0.12)]
    sft = [json.dumps({"step": 1, "data": {"train/loss": 1.7}})]
    assert parse_verl_jsonl(sft) == {"train_loss": [(1, 1.7)]}
