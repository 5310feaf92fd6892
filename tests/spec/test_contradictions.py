"""Contradictions are errors (exit 2, one line), not notes under "ignores" (issue 40, item 4):
an OPD teacher that is the student, a prompt budget no chat template fits in, a model id no hub
accepts, and a LoRA rank set while lora = false."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from whileai.errors import SpecError
from whileai.spec.load import build, replace_run
from whileai.spec.run import MIN_PROMPT_TOKENS, RunSpec

STUDENT = "Qwen/Qwen3-0.6B"
GRPO = {"type": "grpo"}


def spec(**data: Any) -> RunSpec:
    return build(RunSpec, {"taskset": "reverse-text", "model": STUDENT, "method": GRPO} | data)


def opd(teacher: str) -> dict[str, Any]:
    return {"type": "opd", "teacher": f"vllm:{teacher}@http://localhost:8001/v1"}


@pytest.mark.parametrize("teacher", [STUDENT, STUDENT.lower()])
def test_opd_teacher_that_is_the_student_is_refused(teacher: str) -> None:
    with pytest.raises(SpecError) as e:
        spec(method=opd(teacher))
    assert e.value.field == "method.teacher.model"
    assert "exactly zero" in str(e.value) and "opsd" in str(e.value)


def test_opd_teacher_that_is_the_student_in_a_source_is_refused() -> None:
    with pytest.raises(SpecError) as e:
        spec(sources=[{"taskset": "reverse-text", "method": opd(STUDENT)}])
    assert e.value.field == "sources[0].method.teacher.model"


def test_opd_with_another_teacher_and_a_second_stage_from_the_student_pass() -> None:
    assert spec(method=opd("Qwen/Qwen3-1.7B")).method.teacher.model == "Qwen/Qwen3-1.7B"
    # stage 2's student is stage 1's trained weights: the original id as its teacher is no contradiction
    run = spec(lora=False, then={"method": opd(STUDENT)})
    assert run.then is not None


def test_prompt_budget_below_a_chat_template_is_refused_with_the_reason() -> None:
    with pytest.raises(SpecError) as e:
        spec(prompt_tokens=1, method={"type": "grpo", "max_tokens": 1})
    assert e.value.field == "prompt_tokens"
    assert f"greater than or equal to {MIN_PROMPT_TOKENS}" in str(e.value)
    assert "chat template" in str(e.value)
    assert spec(prompt_tokens=MIN_PROMPT_TOKENS).prompt_tokens == MIN_PROMPT_TOKENS


@pytest.mark.parametrize("model", ["Qwen/Qwën3-0.6B-日本", "Qwen/-Qwen3", "Qwen/Qwen3.", "a--b/c",
                                   "Qwen/Qwen3..0.6B", "Qwen/Qwen3.git", "Qwen/" + "x" * 97,
                                   "Qwen/Qwen3 0.6B"])
def test_model_id_no_hub_accepts_is_refused(model: str) -> None:
    with pytest.raises(SpecError) as e:
        spec(model=model)
    assert e.value.field == "model"


@pytest.mark.parametrize("model", ["Qwen/Qwen3-0.6B", "gpt2", "meta-llama/Llama-3.1-8B-Instruct",
                                   "./mödel 日本", "/models/Qwen3 0.6B", "~/ckpt/final",
                                   "$PWD/../merged", "runs/a/b"])
def test_hub_ids_and_local_paths_pass(model: str) -> None:
    assert spec(model=model).model == model


def test_lora_rank_with_lora_off_is_refused() -> None:
    with pytest.raises(SpecError) as e:
        spec(lora=False, lora_rank=64)
    assert e.value.field == "lora_rank" and "lora = false" in str(e.value)
    with pytest.raises(SpecError) as e:
        spec(lora=False, then={"method": GRPO, "lora": False, "lora_rank": 8})
    assert e.value.field == "then.lora_rank"


def test_lora_rank_for_a_lora_second_stage_and_lora_off_copies_pass() -> None:
    run = spec(lora=False, lora_rank=64, then={"method": GRPO, "lora": True})  # stage 2 reads it
    assert run.lora_rank == 64
    full = replace_run(spec(lora_rank=64), lora=False)  # turning lora off drops the rank
    assert not full.lora
    assert "lora_rank" not in full.model_fields_set


def test_spec_file_contradiction_exits_2_with_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from whileai.cli.app import app

    p = tmp_path / "s.toml"
    p.write_text(f'taskset = "reverse-text"\nmodel = "{STUDENT}"\nlora = false\nlora_rank = 64\n'
                 '[method]\ntype = "grpo"\n')
    r = CliRunner().invoke(app, ["compile", str(p)])
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and r.output.startswith("error: lora_rank")
