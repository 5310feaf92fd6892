#!/usr/bin/env bash
# written by whileai 0.1.0 for verl==0.9.1: SFT on PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL's answers on reverse-text
# Run it from anywhere: it works in its own folder (see README.md).
set -xeuo pipefail
cd "$(dirname "$0")"

python3 convert.py prompts data/train.jsonl data/prompts.parquet --rows 6400 --seed 0 --holdout data/test.jsonl --holdout-rows 128

python3 -m verl.trainer.main_generation_server \
    data.train_files="\"$PWD/data/prompts.parquet\"" \
    data.prompt_key=prompt \
    +data.output_path="\"$PWD/samples/responses.parquet\"" \
    actor_rollout_ref.model.path=PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=4 \
    actor_rollout_ref.rollout.temperature=1.0 \
    actor_rollout_ref.rollout.response_length=4096 \
    actor_rollout_ref.rollout.prompt_length=2048 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.85 \
    trainer.n_gpus_per_node=1 \
    trainer.nnodes=1

python3 convert.py messages samples/responses.parquet data/sft.parquet --val data/sft_val.parquet

torchrun --standalone --nnodes=1 --nproc_per_node=1 -m verl.trainer.sft_trainer \
    data.train_files="\"$PWD/data/sft.parquet\"" \
    data.messages_key=messages \
    data.ignore_input_ids_mismatch=True \
    data.train_batch_size=256 \
    data.use_dynamic_bsz=False \
    data.micro_batch_size_per_gpu=8 \
    data.max_length=6144 \
    data.val_files="\"$PWD/data/sft_val.parquet\"" \
    model.path=PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT \
    model.lora_rank=32 \
    model.lora_alpha=64 \
    optim.lr=0.0001 \
    trainer.total_epochs=1 \
    trainer.seed=0 \
    trainer.total_training_steps=100 \
    trainer.nnodes=1 \
    trainer.n_gpus_per_node=1 \
    trainer.test_freq=25 \
    trainer.save_freq=100 \
    trainer.default_local_dir="\"$PWD/outputs\"" \
    trainer.logger='["console"]' \
    trainer.experiment_name=sft-reverse-text
