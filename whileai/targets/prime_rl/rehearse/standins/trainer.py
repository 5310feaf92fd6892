"""The trainer stand-in, behind a `torchrun` found first on PATH: `rl` starts it as it starts the
real trainer (`torchrun ... -m prime_rl.trainer.rl.train @ configs/trainer.json`).

It loads that file with prime-rl's own TrainerConfig, receives every batch through prime-rl's
own DataLoader (the transport the config names: ZMQ or files), checks each micro batch, and
writes the weight-broadcast markers the orchestrator waits for (`broadcasts/step_N/STABLE`,
with an adapter folder for LoRA). No model, no optimizer, no GPU.

Checks per micro batch: the tensors' shapes agree, the packed length fits `seq_len`, every
token id is inside the model's vocabulary, and the streams each method's real loss reads are
there and weigh the trained tokens (trainer/rl/loss.py compute_loss: an absent `ce_weights` or
`ref_kl_weights` is no ce / ref_kl term at all, silently): OPD and OPSD `ref_kl_weights` and the
teacher's `ref_logprobs`, SFT `ce_weights`, GRPO `advantages` (some nonzero in the step), read
from `$WHILEAI_REHEARSE_DIR/expect.json`. Per step, the samples that arrived against the plan's
traces (prompts x samples x seats = batch_size: train_sink.py cuts a batch at batch_size traces
of whole groups, each trace one sample or more), the arithmetic in the step's facts. Facts per
step go to `trainer-steps.jsonl` there; the first failed check exits 1 with one line
`whileai rehearse: trainer check failed: ...`.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from pathlib import Path
from typing import Any

PREFIX = "whileai rehearse: trainer check failed:"


def _argv_config(argv: list[str]) -> list[str]:
    """torchrun's arguments → the trainer's own (`@ FILE` and what follows the module)."""
    if "-m" in argv:
        rest = argv[argv.index("-m") + 2 :]
        return rest
    return argv[argv.index("@") :] if "@" in argv else argv


WHY = {
    "ref_logprobs": "the teacher's log-probs, the ref_kl term's target",
    "ref_kl_weights": "loss.py runs no ref_kl term without it: OPD/OPSD would train nothing",
    "ce_weights": "loss.py runs no ce term without it: SFT would train nothing",
    "advantages": "the rl term's credit",
}


def check_micro_batch(mb: dict[str, Any], *, seq_len: int, vocab: int, needs: list[str]) -> list[str]:
    """What is wrong with one converted micro batch (prime-rl's TensorMicroBatch), as lines."""
    problems: list[str] = []
    ids = mb["input_ids"]
    n = int(ids.shape[-1])
    for key in ("position_ids", "loss_mask", "advantages", "inference_logprobs", "temperatures"):
        t = mb.get(key)
        if t is not None and tuple(t.shape) != tuple(ids.shape):
            problems.append(f"{key} has shape {tuple(t.shape)}, input_ids {tuple(ids.shape)}")
    if n > seq_len:
        problems.append(f"a packed micro batch holds {n} tokens, more than seq_len = {seq_len}")
    if sum(mb["sequence_lengths"]) != n:
        problems.append(f"sequence_lengths sum to {sum(mb['sequence_lengths'])}, input_ids hold {n}")
    if n:
        hi, lo = int(ids.max()), int(ids.min())
        if hi >= vocab or lo < 0:
            problems.append(f"token id {hi if hi >= vocab else lo} is outside the vocabulary (size {vocab})")
    trained = mb["loss_mask"].bool()
    for need in needs:
        t = mb.get(need)
        if t is None:
            problems.append(f"{need} is missing ({WHY.get(need, 'the method trains on it')})")
        elif tuple(t.shape) != tuple(ids.shape):
            problems.append(f"{need} has shape {tuple(t.shape)}, input_ids {tuple(ids.shape)}")
        elif need == "ref_logprobs" and bool((t[trained] > 0).any()):
            problems.append("ref_logprobs holds a positive log-probability")
        elif need.endswith("_weights") and bool(trained.any()) and not bool((t[trained] != 0).any()):
            term = need.removesuffix("_weights")
            problems.append(f"{need} is 0 on every trained token: the {term} term would train nothing")
    return problems


def needed(expect: dict[str, Any], env_names: list[str]) -> list[str]:
    """The streams a micro batch must carry: those of every source whose samples it packs."""
    by_env: dict[str, list[str]] = expect.get("needs", {})
    return sorted({n for e in set(env_names) for n in by_env.get(e, by_env.get("*", []))})


def plan_line(expect: dict[str, Any]) -> str:
    """The plan's traces per step, as arithmetic: prompts x samples x seats = batch_size (a
    mixture: prompts and samples per source, each source's seats summed)."""
    batch, group = expect.get("batch_size"), expect.get("group_size")
    seats = expect.get("traces_per_episode") or [1]
    if not isinstance(batch, int) or not isinstance(group, int) or not group:
        return "token_batch_size: no fixed trace count"
    prompts = batch // group // max(1, sum(seats))
    head = f"{prompts} prompt{'s' if prompts != 1 else ''} x {group} sample{'s' if group != 1 else ''}"
    if len(seats) == 1:
        return f"{head} x {seats[0]} trace{'s' if seats[0] != 1 else ''} per episode = {batch} traces"
    return (f"{head} per source x ({'+'.join(map(str, seats))}) traces per episode over "
            f"{len(seats)} sources = {batch} traces")


def check_step(step: int, samples: int, signal: bool | None, expect: dict[str, Any]) -> str | None:
    """What is wrong with a whole step, or None: fewer samples than the plan's traces (each trace
    is one sample or more), or a step needing advantages where every trained one is 0."""
    batch = expect.get("batch_size")
    if isinstance(batch, int) and samples < batch:
        return (f"step {step}: {samples} samples arrived, fewer than the plan's {plan_line(expect)}: "
                "the batch is not what compile promised")
    if signal is False:
        return (f"step {step}: every trained token's advantage is 0: the rl term trains nothing "
                "(no advantages stamped, or every group's rewards equal)")
    return None


def no_trainable(step: int, batch: list[dict[str, Any]], seq_len: int) -> str:
    """Why a step holds nothing to train on; samples as long as seq_len mean it cut them."""
    longest = max((n for mb in batch for n in mb["sequence_lengths"]), default=0)
    why = f"step {step}: the batch holds no trainable token ({len(batch)} micro batches"
    if longest >= seq_len:
        return (f"{why}; its samples are cut at seq_len = {seq_len} tokens, the prompt alone fills "
                "it: seq_len is too small for the data)")
    return f"{why}, the longest sample {longest} tokens)"


def safetensors(path: Path) -> None:
    """A one-tensor safetensors file (8-byte header length, JSON header, data): what the inference
    stand-in opens as vLLM's loaders would."""
    head = json.dumps({"whileai.rehearse": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"\0\0\0\0")


def _broadcast(run_dir: Path, step: int, lora: Any) -> None:
    """The step's weights as the filesystem broadcast writes them: a model's safetensors, or an
    adapter folder (adapter_config.json with its rank and alpha, adapter_model.safetensors)."""
    d = run_dir / "broadcasts" / f"step_{step}"
    d.mkdir(parents=True, exist_ok=True)
    if lora is not None:  # the folder a LoRA adapter is loaded from
        config = {"peft_type": "LORA", "r": int(lora.rank), "lora_alpha": float(lora.alpha),
                  "target_modules": list(lora.target_modules), "whileai_rehearse": "stand-in adapter"}
        (d / "adapter_config.json").write_text(json.dumps(config))
        safetensors(d / "adapter_model.safetensors")
    else:
        safetensors(d / "model.safetensors")
    (d / "STABLE").touch()


def _fail(line: str) -> None:
    print(f"{PREFIX} {line}", flush=True)
    sys.exit(1)


def main() -> None:
    os.environ.update(
        {
            k: os.environ.get(k, v)
            for k, v in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("LOCAL_WORLD_SIZE", "1"))
        }
    )
    from prime_rl.configs.trainer import TrainerConfig
    from prime_rl.trainer.rl.data import DataLoader
    from prime_rl.utils.config import cli

    sys.argv = ["trainer", *_argv_config(sys.argv[1:])]
    config = cli(TrainerConfig)
    where = Path(os.environ["WHILEAI_REHEARSE_DIR"])
    expect = json.loads((where / "expect.json").read_text())
    run_dir, lora = Path(config.output_dir), config.model.lora
    seq_len, vocab = int(config.model.seq_len), int(expect["vocab"])
    print(
        f"whileai rehearse: trainer stand-in for {run_dir} (seq_len {seq_len}, vocab {vocab}, "
        f"lora {lora is not None}, transport {config.rollout_transport.type})",
        flush=True,
    )
    start = 1
    loader = DataLoader(run_dir, start, 1, config.rollout_transport)
    _broadcast(run_dir, start - 1, lora)
    steps = config.max_steps or int(expect.get("steps", 2))
    for step in range(start, steps + 1):
        t0 = time.time()
        loader.wait_for_batch()
        batch = loader.get_batch()
        samples = tokens = trained = 0
        signal: bool | None = None  # some nonzero advantage, where a method needs them
        for i, mb in enumerate(batch):
            need = needed(expect, mb["env_names"])
            for p in check_micro_batch(mb, seq_len=seq_len, vocab=vocab, needs=need):
                _fail(f"step {step}, micro batch {i}: {p}")
            if "advantages" in need and mb.get("advantages") is not None:
                signal = bool(signal) or bool((mb["advantages"][mb["loss_mask"].bool()] != 0).any())
            samples += len(mb["sequence_lengths"])
            tokens += int(mb["input_ids"].shape[-1])
            trained += int(mb["loss_mask"].sum())
        if not batch or not trained:
            _fail(no_trainable(step, batch, seq_len))
        if (why := check_step(step, samples, signal, expect)) is not None:
            _fail(why)
        fact = {
            "step": step,
            "t": round(time.time(), 3),
            "micro_batches": len(batch),
            "samples": samples,
            "plan": plan_line(expect),
            "tokens": tokens,
            "trained_tokens": trained,
            "wait_s": round(time.time() - t0, 2),
            "envs": sorted({e for mb in batch for e in mb["env_names"]}),
        }
        with open(where / "trainer-steps.jsonl", "a") as f:
            f.write(json.dumps(fact) + "\n")
        print(f"whileai rehearse: step {step}: {json.dumps(fact)}", flush=True)
        _broadcast(run_dir, step, lora)
    print("whileai rehearse: trainer stand-in done", flush=True)


if __name__ == "__main__":
    main()
