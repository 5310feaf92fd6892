"""The loss step: verl's own loss on stand-in log-probs, and its metric names read back by whileai.

- main_ppo with `distillation.enabled`: the distillation config built as the workers build it
  (`omega_conf_to_dataclass`, trainer_base.py:360; its `__post_init__` refuses a teacher context
  below prompt + response + 1: workers/config/distillation.py:172-185, which vLLM would refuse at
  the first long sample: vllm_async_server.py:593-599), the actor's config, then
  `distillation_ppo_loss` (trainer/distillation/losses.py:164-225) as the actor calls it
  (engine_workers.py:638-641) on a batch of rollout.n stand-in samples of the configured shapes:
  the student's and the teacher's per-token log-probs (the teacher's with a few far-off tokens, so
  `loss_max_clamp` acts), `loss_mode`, `use_policy_gradient`, `use_task_rewards`. Its metrics are
  named as the trainer logs them (`rename_dict(…, "actor/")`, trainer_base.py:1861) and read back
  by whileai's reader (whileai.targets.verl.metrics): `teacher_kl` must read
  `actor/distillation/loss`, and without task rewards so must `train_loss` (verl logs an
  `actor/pg_loss` it then zeroes: losses.py:214-217).
- main_ppo without distillation (GRPO and the other estimators): verl's advantage estimator
  (`core_algos.get_adv_estimator_fn(algorithm.adv_estimator)`: an unknown name passes the config
  check and fails here) on stand-in rewards in groups of rollout.n, then `ppo_loss`
  (workers/utils/losses.py:57-150) with those advantages; the reader's `train_loss` must read
  `actor/pg_loss`.
- sft_trainer and main_generation_server: nothing to compute (skipped, said so).
"""

from __future__ import annotations

import json
from typing import Any

from whileai.targets.verl.rehearse.common import first_line, root, run_step
from whileai.targets.verl.rehearse.context import Context, StepRecord

PROMPT = 8  # stand-in prompt tokens a sample; responses take the configured data.max_response_length


def run(ctx: Context) -> StepRecord:
    if ctx.job != "main_ppo":
        return run_step("loss", ctx, lambda c, s: s.facts.update(skipped=f"{c.job} has no RL loss"))
    dist = ctx.config.get("distillation")
    return run_step("loss", ctx, _distillation if dist is not None and dist.get("enabled") else _grpo)


def _distillation(ctx: Context, step: StepRecord) -> None:
    import torch
    from verl.trainer.distillation.losses import distillation_ppo_loss
    from verl.utils.config import omega_conf_to_dataclass

    cfg = ctx.config
    teachers = {name: t.inference.get("max_model_len") for name, t in cfg.distillation.teacher_models.items()}
    step.facts["teacher_max_model_len"] = teachers
    try:
        dcfg = omega_conf_to_dataclass(cfg.distillation)  # refuses a teacher context too short
    except Exception as e:
        if "requires room for the student prompt" in str(root(e)):
            step.error = (f"{first_line(e)} (vLLM would refuse the first sample this long: "
                          "workers/rollout/vllm_rollout/vllm_async_server.py:593-599)")
        raise
    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    step.ran += ["verl.utils.config.omega_conf_to_dataclass: DistillationConfig, ActorConfig",
                 "verl.trainer.distillation.losses.distillation_ppo_loss"]
    if any(v is None for v in teachers.values()):
        step.facts["teacher_context"] = ("max_model_len unset: the teacher's max_position_embeddings "
                                         "(vllm_async_server.py:1104-1105), not known offline")
    loss = dcfg.distillation_loss
    mode = str(loss.loss_mode)
    if mode == "forward_kl_topk":
        step.facts["skipped"] = ("forward_kl_topk's loss is computed in the model's logits processor "
                                 "(losses.py:117-160), which needs the student's logits: not rehearsed")
        return
    n, resp = int(cfg.actor_rollout_ref.rollout.n), int(cfg.data.max_response_length)
    data, student = _batch(n, resp, torch)
    gen = torch.Generator().manual_seed(1)
    teacher = student - torch.rand(student.shape, generator=gen)
    teacher[::97] = -40.0  # far-off tokens: the k-estimators blow up there, loss_max_clamp bounds them
    data["teacher_logprobs"] = teacher.unsqueeze(-1)
    step.stood_in.append(f"student and teacher log-probs: {n} samples (rollout.n) of {PROMPT} prompt "
                         f"tokens and up to {resp} response tokens (data.max_response_length), flat as "
                         "the actor's model output (workers/utils/padding.py:97-140)")
    total, metrics = distillation_ppo_loss(actor, dcfg, model_output={"log_probs": student}, data=data)
    logged = _logged(metrics)
    step.facts |= {"loss_mode": mode, "use_policy_gradient": bool(loss.use_policy_gradient),
                   "use_task_rewards": bool(loss.use_task_rewards), "loss_max_clamp": loss.loss_max_clamp,
                   "loss": float(total), "logged": sorted(logged),
                   "token_loss_max": logged.get("actor/distillation/loss_max")}
    if not torch.isfinite(torch.as_tensor(total)):
        step.error, step.cause = f"the distillation loss is {float(total)}", "trainer/distillation/losses.py"
        return
    want = {"teacher_kl": "actor/distillation/loss"}
    if not loss.use_task_rewards:
        want["train_loss"] = "actor/distillation/loss"
    _read_back(step, logged, want)


def _grpo(ctx: Context, step: StepRecord) -> None:
    import numpy as np
    import torch
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.utils.losses import ppo_loss

    cfg = ctx.config
    name = str(cfg.algorithm.adv_estimator)
    estimator = get_adv_estimator_fn(name)
    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    step.ran += [f"verl.trainer.ppo.core_algos.get_adv_estimator_fn({name!r}): {estimator.__name__}",
                 "verl.workers.utils.losses.ppo_loss"]
    n, resp = int(cfg.actor_rollout_ref.rollout.n), int(cfg.data.max_response_length)
    data, student = _batch(2 * n, resp, torch)
    mask = data["response_mask"].float()
    scores = torch.tensor([1.0, 0.0] * n)  # group 0: half right; group 1 (same index) likewise
    scores[n:] = 0.5  # group 1: one score for all: no signal, advantage 0
    rewards = torch.zeros_like(mask)
    last = mask.sum(-1).long() - 1
    rewards[torch.arange(2 * n), last] = scores
    index = np.array([0] * n + [1] * n, dtype=object)
    if name != "grpo":
        step.facts["skipped"] = f"adv_estimator {name}: only GRPO's advantage is rehearsed"
        return
    adv, _ = estimator(token_level_rewards=rewards, response_mask=mask, index=index,
                       norm_adv_by_std_in_grpo=bool(cfg.algorithm.get("norm_adv_by_std_in_grpo", True)))
    step.stood_in.append(f"rewards: 2 groups of rollout.n={n} samples (one half right, one all equal) "
                         f"of up to {resp} response tokens -> core_algos.py:268-330")
    step.facts["advantages"] = [round(float(adv[i][0]), 3) for i in range(2 * n)]
    if not bool(torch.isfinite(adv).all()) or bool(adv[n:].abs().max() > 1e-4):
        step.error, step.cause = "GRPO's advantages are not finite or not zero in a flat group", \
            "verl/trainer/ppo/core_algos.py:268"
        return
    data["advantages"] = adv
    total, metrics = ppo_loss(actor, model_output={"log_probs": student}, data=data)
    logged = _logged(metrics)
    step.facts |= {"loss": float(total), "logged": sorted(logged)}
    _read_back(step, logged, {"train_loss": "actor/pg_loss"})


def _batch(n: int, resp: int, torch: Any) -> tuple[Any, Any]:
    """A micro batch as the actor gets it (padded prompts, responses and attention mask; response
    lengths from the full configured length down) and the student's flat per-token log-probs."""
    from tensordict import TensorDict

    lengths = [max(1, resp >> (i % 4)) for i in range(n)]
    mask = torch.zeros(n, PROMPT + resp, dtype=torch.long)
    response_mask = torch.zeros(n, resp, dtype=torch.long)
    for i, r in enumerate(lengths):
        mask[i, : PROMPT + r] = 1
        response_mask[i, :r] = 1
    total = int(mask.sum())
    gen = torch.Generator().manual_seed(0)
    student = -torch.rand(total, generator=gen) * 3
    old = torch.zeros(n, resp)
    offset = 0
    for i, r in enumerate(lengths):  # old log-probs = the student's: ratio 1 (padding.py:132-138)
        end = offset + PROMPT + r
        old[i, :r] = student[end - r - 1 : end - 1]
        offset = end
    data = TensorDict({"prompts": torch.ones(n, PROMPT, dtype=torch.long),
                       "responses": torch.ones(n, resp, dtype=torch.long), "attention_mask": mask,
                       "response_mask": response_mask, "old_log_probs": old,
                       "advantages": torch.zeros(n, resp)}, batch_size=[])
    data["dp_size"], data["batch_num_tokens"], data["global_batch_size"] = 1, int(response_mask.sum()), n
    return data, student


def _logged(metrics: dict[str, Any]) -> dict[str, float]:
    """The loss's metrics as the trainer logs them: `actor/` prefixed, each reduced to a number
    (trainer_base.py:1861-1863: rename_dict, reduce_metrics)."""
    from verl.utils.metric import reduce_metrics
    from verl.utils.py_functional import rename_dict

    out = reduce_metrics({k: v if hasattr(v, "aggregate") else [float(v)]
                          for k, v in rename_dict(dict(metrics), "actor/").items()})
    return {k: float(v) for k, v in out.items()}


def _read_back(step: StepRecord, logged: dict[str, float], want: dict[str, str]) -> None:
    """whileai's metrics reader on one file-logger line of these metrics: each series in `want`
    must read the value of its verl key."""
    from whileai.targets.verl.metrics import parse_verl_jsonl

    series = parse_verl_jsonl([json.dumps({"step": 1, "data": logged})])
    read = {name: points[-1][1] for name, points in series.items()}
    step.ran.append("whileai.targets.verl.metrics.parse_verl_jsonl")
    step.facts["read"] = read
    wrong = [f"{name} reads {read.get(name, 'nothing')}, not {key} = {logged.get(key, 'not logged')}"
             for name, key in want.items() if key not in logged or read.get(name) != logged[key]]
    if wrong:
        step.error = "whileai's metrics reader: " + "; ".join(wrong)
        step.cause = "whileai/targets/verl/metrics.py: VERL_SERIES"
