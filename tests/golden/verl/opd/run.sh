#!/usr/bin/env bash
# written by whileai 0.1.0 for verl==0.9.1: OPD on reverse-text
# Run it from anywhere: it works in its own folder (see README.md).
set -xeuo pipefail
cd "$(dirname "$0")"

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="\"$PWD/data/train.jsonl\"" \
    data.val_files="\"$PWD/data/test.jsonl\"" \
    data.max_prompt_length=2048 \
    data.max_response_length=8192 \
    data.train_batch_size=64 \
    data.seed=0 \
    data.val_max_samples=128 \
    actor_rollout_ref.rollout.seed=0 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=4 \
    actor_rollout_ref.rollout.temperature=1.0 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.rollout.val_kwargs.do_sample=True \
    actor_rollout_ref.rollout.val_kwargs.temperature=1.0 \
    actor_rollout_ref.rollout.val_kwargs.n=1 \
    actor_rollout_ref.model.path=PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT \
    actor_rollout_ref.model.lora_rank=32 \
    actor_rollout_ref.model.lora_alpha=64 \
    actor_rollout_ref.model.target_modules=all-linear \
    actor_rollout_ref.actor.optim.lr=0.0001 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.actor.use_kl_loss=False \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \
    reward.custom_reward_function.path="\"$PWD/reward.py\"" \
    reward.custom_reward_function.name=compute_score \
    distillation.enabled=True \
    distillation.distillation_loss.loss_mode=k1 \
    distillation.distillation_loss.use_policy_gradient=True \
    distillation.distillation_loss.loss_max_clamp=10.0 \
    distillation.distillation_loss.log_prob_min_clamp=-10.0 \
    distillation.distillation_loss.use_task_rewards=False \
    distillation.teacher_models.teacher_model.model_path=PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL \
    distillation.teacher_models.teacher_model.num_replicas=1 \
    distillation.teacher_models.teacher_model.inference.tensor_model_parallel_size=1 \
    distillation.teacher_models.teacher_model.inference.gpu_memory_utilization=0.9 \
    distillation.teacher_models.teacher_model.inference.max_model_len=10241 \
    distillation.n_gpus_per_node=1 \
    distillation.nnodes=1 \
    trainer.total_training_steps=100 \
    trainer.nnodes=1 \
    trainer.n_gpus_per_node=1 \
    trainer.test_freq=25 \
    trainer.save_freq=100 \
    trainer.default_local_dir="\"$PWD/outputs\"" \
    trainer.logger='["console"]' \
    trainer.experiment_name=opd-reverse-text \
    trainer.total_epochs=7 "$@"
