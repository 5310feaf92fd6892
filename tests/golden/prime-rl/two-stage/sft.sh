#!/usr/bin/env bash
# written by whileai: a two-stage run, in order. Run: bash sft.sh
set -euo pipefail
CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL --server.port 8001 --vllm.gpu-memory-utilization 0.4 &  # serve the teacher at http://localhost:8001/v1
uv run rl @ sft-1-sft.toml
uv run python -c 'import os, sys; from transformers import AutoConfig, AutoTokenizer; a, b = sys.argv[1:]; os.path.exists(os.path.join(b, "STABLE")) or sys.exit(b + ": no STABLE marker: stage 1 has not finished"); AutoConfig.from_pretrained(a).save_pretrained(b); AutoTokenizer.from_pretrained(a).save_pretrained(b)' Qwen/Qwen3-0.6B-Base outputs/sft-1-sft/broadcasts/step_50  # stage 1's final weights -> stage 2's student
uv run rl @ sft-2-opd.toml
