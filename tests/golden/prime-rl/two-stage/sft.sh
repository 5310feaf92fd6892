#!/usr/bin/env bash
# written by whileai: a two-stage run, in order. Run: bash sft.sh
set -euo pipefail
WAIT_S="${WHILEAI_TEACHER_WAIT_S:-1800}"  # how long to wait for each teacher
INTERVAL_S="${WHILEAI_TEACHER_POLL_S:-5}"
declare -A pids=()  # teacher number -> the process group this script started for it
stop_servers() {  # stop_servers [N...]: stop those servers (all when none named), whole groups
  local n ns=("$@")
  [ "$#" -gt 0 ] || ns=("${!pids[@]}")
  for n in ${ns[@]+"${ns[@]}"}; do
    [ -n "${pids[$n]:-}" ] || continue
    kill -TERM -- "-${pids[$n]}" 2>/dev/null || true
    wait "${pids[$n]}" 2>/dev/null || true
    unset "pids[$n]"
  done
}
trap stop_servers EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_server() {  # start_server N [VAR=value...] cmd...: in the background, in a group of its own
  local n="$1"
  shift
  setsid env "$@" &
  pids[$n]="$!"
}
wait_for() {  # wait_for HEALTH_URL MODEL KEY_VAR: until the server answers, or give up
  local url="$1" model="$2" key="${!3:-}" deadline=$((SECONDS + WAIT_S))
  local auth=()
  if [ -n "$key" ]; then auth=(-H "Authorization: Bearer $key"); fi
  until curl -sf -o /dev/null ${auth[@]+"${auth[@]}"} "$url"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "whileai: the teacher $model did not answer at $url within ${WAIT_S}s" \
        "(WHILEAI_TEACHER_WAIT_S): not starting rl; stopping the servers this script started" >&2
      exit 1
    fi
    sleep "$INTERVAL_S"
  done
}

# stage 1
start_server 1 CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL --server.port 8001 --vllm.gpu-memory-utilization 0.4 --vllm.max-model-len 10241  # serve the teacher at http://localhost:8001/v1
wait_for http://localhost:8001/health PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL VLLM_API_KEY
uv run rl @ sft-1-sft.toml
uv run python -c 'import os, sys; from transformers import AutoConfig, AutoTokenizer; a, b = sys.argv[1:]; os.path.exists(os.path.join(b, "STABLE")) or sys.exit(b + ": no STABLE marker: stage 1 has not finished"); AutoConfig.from_pretrained(a).save_pretrained(b); AutoTokenizer.from_pretrained(a).save_pretrained(b)' Qwen/Qwen3-0.6B-Base outputs/sft-1-sft/broadcasts/step_50  # stage 1's final weights -> stage 2's student
# stage 2
wait_for http://localhost:8001/health PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL VLLM_API_KEY
uv run rl @ sft-2-opd.toml
