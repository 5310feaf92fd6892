"""The GPU-hour estimate against hand computations (docs/cost.md's worked examples), the model
sizes it reads, and the GPUs a model needs to be served."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT

from whileai.cost import estimate as cost
from whileai.cost import sizes
from whileai.spec.load import build, load_spec
from whileai.spec.run import RunSpec
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.trl import compile as trl

PEAK = 989e12  # H100 SXM dense BF16, FLOP/s


def spec(**fields: object) -> RunSpec:
    method = fields.pop("method", {"type": "grpo"})
    return build(RunSpec, {"taskset": "reverse-text", "method": method} | fields)


def test_grpo_8b_matches_the_hand_computation() -> None:
    """100 steps x 64 prompts x 8 samples, 2048 + 4096 tokens, Qwen3-8B (8e9 parameters)."""
    c = prime_rl.compile(spec(model="Qwen/Qwen3-8B", gpus=8, inference_gpus=4, lora=False))
    tokens = 100 * (64 * 8) * (2048 + 4096)  # 314,572,800
    train = 6 * 8e9 * tokens / (PEAK * 0.40) / 3600  # 10.60 GPU-hours
    sample = 2 * 8e9 * tokens / (PEAK * 0.10) / 3600  # 14.14
    assert c.cost is not None and c.cost.gpu_hours is not None
    h = c.cost.gpu_hours
    assert h.train == pytest.approx(train) and round(train, 2) == 10.60
    assert h.sample == pytest.approx(sample) and round(sample, 2) == 14.14
    # eval: steps 0, 25, 50, 75, 100 x 128 examples, sampled by the student on inference
    evals = 2 * 8e9 * (5 * 128) * (2048 + 4096) / (PEAK * 0.10) / 3600  # 0.18
    assert h.eval == pytest.approx(evals) and round(evals, 2) == 0.18
    assert h.teacher is None and h.total == pytest.approx(train + sample + evals)
    # 4 trainer and 4 inference GPUs work at once: the slower pool sets the wall time
    assert c.cost.wall_hours == pytest.approx(max(train / 4, (sample + evals) / 4))
    d = c.cost.to_dict()
    assert (d["tokens_per_step"], d["sampled_tokens"], d["teacher_tokens"]) == \
        (3_145_728, 100 * 512 * 4096, 0)
    assert d["gpu_seconds"] == pytest.approx((train + sample + evals) * 3600)
    assert "≈ 24.9 GPU-hours of compute" in c.cost.line()


def test_opd_32b_from_a_moe_teacher_matches_the_hand_computation() -> None:
    """examples/scale/opd-32b-8nodes.toml: 150 steps x 2048 rollouts x 10240 tokens; the teacher
    Qwen3-235B-A22B scores with its 22B active parameters on a node of its own."""
    c = prime_rl.compile(load_spec(EXAMPLES / "scale" / "opd-32b-8nodes.toml"))
    tokens = 150 * (512 * 4) * (2048 + 8192)  # 3,145,728,000
    train = 6 * 32e9 * tokens / (PEAK * 0.40) / 3600  # 424.1
    sample = 2 * 32e9 * tokens / (PEAK * 0.10) / 3600  # 565.5
    teacher = 2 * 22e9 * tokens / (PEAK * 0.40) / 3600  # 97.2
    assert (round(train, 1), round(sample, 1), round(teacher, 1)) == (424.1, 565.5, 97.2)
    assert c.cost is not None and c.cost.gpu_hours is not None
    h = c.cost.gpu_hours
    # eval every 30 steps (a divisor of 150) and at step 0: 6 x 128 rollouts, the student samples
    evals = 2 * 32e9 * (6 * 128) * (2048 + 8192) / (PEAK * 0.10) / 3600  # 1.41
    assert (h.train, h.sample, h.teacher, h.eval) == pytest.approx(
        (train, sample, teacher, evals))
    wall = max(train / 32, (sample + evals) / 32, teacher / 8)  # 32 trainer, 32 inference, 8 teacher
    assert c.cost.wall_hours == pytest.approx(wall)
    assert c.cost.held_gpus == 72 and round(wall * 72) == 1275
    assert "1,088 GPU-hours of compute" in c.cost.line() and "1,275 GPU-hours held" in c.cost.line()


def test_trl_processes_sample_score_and_train_in_turn() -> None:
    c = trl.compile(spec(model="Qwen/Qwen3-8B", method={"type": "opd", "teacher":
                                                         "vllm:Qwen/Qwen3-32B@http://t:8001/v1"},
                         gpus=8))
    assert c.cost is not None and c.cost.gpu_hours is not None
    # the prompts are measured on the rows TRL trains on (reverse-text's first 512), by the rule:
    # 4 characters a token, 3 tokens around each chat message and 3 for the reply
    from whileai.tasksets import reverse_text
    counts = [sum(3 + math.ceil(len(m["content"]) / 4) for m in r["prompt"]) + 3
              for r in reverse_text.splits()[0][:512]]
    prompt = math.ceil(sum(counts) / len(counts))
    assert 30 < prompt < 60 and c.cost.prompt_tokens == prompt
    tokens = 100 * 64 * (prompt + 8192)  # DistillationTrainer: one completion per prompt
    h = c.cost.gpu_hours
    assert h.teacher == pytest.approx(2 * 32e9 * tokens / (PEAK * 0.40) / 3600)
    assert c.cost.wall_hours == pytest.approx(h.total / 8)


def test_unknown_sizes_are_said_not_guessed() -> None:
    c = prime_rl.compile(spec(model="my-org/my-finetune"))
    assert c.cost is not None and c.cost.gpu_hours is None
    assert "unknown" in c.cost.line() and "tokens per step" in c.cost.line()
    teacher = prime_rl.compile(spec(model="Qwen/Qwen3-8B", gpus=4, method={
        "type": "opd", "teacher": "vllm:org/mystery-teacher@http://localhost:8001/v1"}))
    assert teacher.cost is not None and teacher.cost.gpu_hours is not None
    assert teacher.cost.gpu_hours.teacher is None and "not counted" in teacher.cost.unknown


@pytest.mark.parametrize(("name", "total", "active"), [
    ("Qwen/Qwen3-32B", 32, 32), ("Qwen/Qwen3-30B-A3B", 30, 3), ("Qwen/Qwen3-235B-A22B", 235, 22),
    ("deepseek-ai/DeepSeek-V3-0324", 671, 37), ("zai-org/GLM-4.5-Air", 106, 12),
    ("zai-org/GLM-4.5", 355, 32), ("openai/gpt-oss-120b", 117, 5.1),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7, 12.9), ("/models/llama-3.1-70b", 70, 70),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 1.5, 1.5), ("deepseek-ai/DeepSeek-R1-0528", 671, 37),
])
def test_sizes_from_names_and_the_table(name: str, total: float, active: float) -> None:
    s = sizes.params(name)
    assert s is not None and (s.total_b, s.active_b) == (total, active)


def test_serving_gpus_follow_the_stated_formula() -> None:
    for b, gpus in [(0.6, 1), (8, 1), (32, 2), (70, 4), (235, 8), (671, 32)]:
        need = math.ceil(2 * b * 1.2 / (80 * 0.9))
        assert sizes.serve_gpus(b) == gpus == 1 << max(0, need - 1).bit_length()
    assert sizes.params("org/no-size-here") is None


def test_the_docs_state_the_formula_and_every_assumption() -> None:
    text = (ROOT / "docs" / "cost.md").read_text()
    for fact in ("6 x N x T", "2 x N x T", "2 x N_teacher x T", "989 TFLOP/s", "arXiv:2001.08361",
                 "arXiv:2407.21783", "10.60 GPU-hours", "424.1 GPU-hours", "1,272 GPU-hours held"):
        assert fact in text, fact
    for stage, mfu in cost.MFU.items():
        assert f"{mfu:.0%}" in text, stage
    assert Path(ROOT / cost.DOCS).is_file()
