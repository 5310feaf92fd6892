"""Two-stage runs (`then`): both files, their order, and the hand-off of the first stage's final
weights to the second; the article's SFT arm and recovery example."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import tomllib
from helpers import EXAMPLES, STUDENT, TEACHER
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.cli.pairs import bundled
from whileai.errors import SpecError
from whileai.spec.load import build, load_spec
from whileai.targets.prime_rl.check import check_document

T = wai.Endpoint(url="http://localhost:8001/v1", model=TEACHER)


def chain(**fields: object) -> wai.RunSpec:
    base: dict[str, object] = dict(taskset="reverse-text", model="Qwen/Qwen3-0.6B-Base", lora=False,
                                   steps=50, method=wai.SFT(T, max_tokens=1024),
                                   then=wai.Stage(method=wai.OPD(T), steps=100))
    return wai.RunSpec(**(base | fields))  # type: ignore[arg-type]


def test_the_first_stage_must_train_full_weights() -> None:
    with pytest.raises(SpecError) as e:
        chain(lora=True)
    assert e.value.field == "lora" and "merging" in str(e.value) and "lora = false" in str(e.value)
    with pytest.raises(SpecError, match="then.oops"):
        build(wai.RunSpec, {"taskset": "reverse-text", "model": "m", "lora": False,
                            "method": {"type": "grpo"}, "then": {"method": {"type": "grpo"}, "oops": 1}})


def test_prime_rl_stages_name_their_runs_and_hand_the_weights_on() -> None:
    c = wai.compile(chain(overrides={"max_steps": 40, "output_dir": "/shared/runs"}), "prime-rl")
    one, two = (tomllib.loads(s.text) for s in c.stages)
    assert one["run"]["name"] == "sft-1-sft" and one["weight_broadcast"]["type"] == "filesystem"
    assert one["max_steps"] == 40  # the first stage's overrides (and --set) are its own
    weights = "/shared/runs/sft-1-sft/broadcasts/step_40"  # read from stage 1's final values
    assert two["model"]["name"] == weights and two["run"]["name"] == "sft-2-opd"
    assert two["tokenizer"]["name"] == "Qwen/Qwen3-0.6B-Base"
    assert two["orchestrator"]["renderer"]["name"] == one["orchestrator"]["renderer"]["name"] == "qwen3"
    assert two["max_steps"] == 100 and "lora" not in two["trainer"].get("model", {})
    assert check_document(one) == [] and check_document(two) == []
    serve, rl1, handoff, rl2 = c.commands  # one teacher server for both stages
    assert serve.startswith(f"CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model {TEACHER} ")
    assert (rl1, rl2) == ("uv run rl @ sft-1-sft.toml", "uv run rl @ sft-2-opd.toml")
    assert "STABLE" in handoff and handoff.split("  #")[0].endswith(f"Qwen/Qwen3-0.6B-Base {weights}")
    # the same steps, in order (tests/targets/prime_rl/test_stage_script.py runs it)
    script = c.files["sft.sh"]
    assert script.index("--server.port 8001") < script.index(rl1) < script.index("STABLE") \
        < script.index(rl2)
    assert any(r.field == "then" and r.value == weights for r in c.reads)
    assert "student: stage 1's final weights at /shared/runs/sft-1-sft" in str(c)


def test_stage_one_must_write_its_weights_to_disk() -> None:
    with pytest.raises(SpecError, match="only the filesystem broadcast writes the final weights"):
        wai.compile(chain(overrides={"weight_broadcast.type": "nccl"}), "prime-rl")


def test_stage_two_opsd_gets_the_original_students_renderer() -> None:
    run = chain(model=STUDENT, then=wai.Stage(method=wai.OPSD(), lora=True, lora_rank=16))
    two = tomllib.loads(wai.compile(run, "prime-rl").stages[1].text)
    assert two["orchestrator"]["algo"]["renderer"]["name"] == "prime-qwen3"
    assert two["trainer"]["model"]["lora"]["rank"] == 16  # LoRA on top of the stage-1 weights
    assert check_document(two) == []


def test_trl_stages_are_run_directories_in_order(tmp_path: Path) -> None:
    c = wai.compile(chain(), "trl", cpu=True, out=tmp_path / "run")
    root = tmp_path / "run"
    assert (root / "1-sft" / "sample.py").is_file() and (root / "2-opd" / "config.yaml").is_file()
    assert [s.out for s in c.stages] == [str(root / "1-sft" / "config.yaml"),
                                         str(root / "2-opd" / "config.yaml")]
    two = (root / "2-opd" / "config.yaml").read_text()
    assert "model_name_or_path: ../1-sft/outputs\n" in two
    script = (root / "run.sh").read_text().splitlines()
    assert script[3] == 'cd "$(dirname "$0")"'
    assert script[4].startswith("(cd 1-sft && python sample.py --teacher ")
    assert script[5:] == ["(cd 1-sft && trl sft --config config.yaml --accelerate_config accelerate.yaml)",
                          "(cd 2-opd && trl distillation --config config.yaml --accelerate_config "
                          "accelerate.yaml)"]
    assert "save_model" in (root / "README.md").read_text()
    again = wai.compile(chain(), "trl", cpu=True, out=root)  # whileai's own files: rewritten in place
    assert again.files == c.files
    absolute = wai.compile(chain(output_dir=str(tmp_path / "models")), "trl", cpu=True)
    outs = [s.run.output_dir for s in absolute.stages]
    assert outs == [str(tmp_path / "models" / "1-sft"), str(tmp_path / "models" / "2-opd")]
    assert f"model_name_or_path: {outs[0]}\n" in absolute.stages[1].text
    assert absolute.stages[1].run.model == "Qwen/Qwen3-0.6B-Base"  # the original: sizes, rules


def test_cli_writes_both_stages_and_reports_them(tmp_path: Path) -> None:
    spec = tmp_path / "coldstart.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "Qwen/Qwen3-0.6B-Base"\nlora = false\n'
                    '[method]\ntype = "sft"\nteacher = "vllm:Qwen/Qwen3-8B@http://localhost:8001/v1"\n'
                    '[then.method]\ntype = "opd"\nteacher = "vllm:Qwen/Qwen3-8B@http://localhost:8001/v1"\n')
    r = CliRunner().invoke(app, ["compile", str(spec), "-o", str(tmp_path / "out"), "--plain"])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(tmp_path / "out")) == [".whileai-files", "coldstart-1-sft.toml",
                                                     "coldstart-2-opd.toml", "coldstart.sh"]
    assert r.stdout.startswith(f"prime-rl 2-stage run: {tmp_path / 'out' / 'coldstart-1-sft.toml'}")
    assert "stage 2 of 2: prime-rl config:" in r.stdout and "run, in order:" in r.stdout
    j = CliRunner().invoke(app, ["compile", str(spec), "--json"])
    doc = json.loads(j.stdout)
    assert [s["main"] for s in doc["stages"]] == ["coldstart-1-sft.toml", "coldstart-2-opd.toml"]
    assert {r["field"] for r in doc["reads"]} >= {"then.method.type", "then.method.teacher.model", "then"}


def test_sft_example_is_a_default_arm_and_recovery_is_not() -> None:
    assert bundled() == ["grpo", "opd", "opsd", "sft"]
    rec = load_spec(EXAMPLES / "recovery" / "opd.toml")
    assert rec.model == "checkpoints/Qwen3-8B-docs-sft" and rec.method.teacher.model == "Qwen/Qwen3-8B"  # type: ignore[union-attr]
    assert wai.compile(rec, "trl").run.method.type == "opd"
    with pytest.raises(SpecError, match="^data: .*prime-rl trains only on the rows of the taskset"):
        wai.compile(rec, "prime-rl")  # its prompts are a file: prime-rl would train on others
    rows = [json.loads(x) for x in (EXAMPLES / "recovery" / "prompts.jsonl").read_text().splitlines()]
    assert len(rows) >= 32 and all(r["prompt"][0]["role"] == "user" for r in rows)


def test_a_two_stage_spec_is_not_an_arm(tmp_path: Path) -> None:
    from whileai.launch.arms import load_arms

    spec = tmp_path / "coldstart.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "m"\nlora = false\n[method]\ntype = "grpo"\n'
                    '[then.method]\ntype = "grpo"\n')
    with pytest.raises(SpecError, match="one-stage spec"):
        load_arms([EXAMPLES / "grpo.toml", spec])


def test_algo_rows_write_one_methods_table_anywhere() -> None:
    """prime_rl_algo.algo_rows(table, field): the same rows write the run's orchestrator.algo
    today and a training source's algo tomorrow (a mixture), reading the method at `field`."""
    from whileai.targets.fieldmap import apply, field_value
    from whileai.targets.prime_rl.algo import algo_rows

    run = wai.RunSpec(taskset="reverse-text", model=STUDENT, method=wai.SFT(T))
    top = apply(algo_rows(), run)
    assert top.doc == {"orchestrator": {"algo": {"type": "sft", "sampling": {"source": {
        "name": TEACHER, "base_url": "http://localhost:8001/v1", "api_key_var": "VLLM_API_KEY"}}}}}
    assert {r.field for r in top.reads} == {"type", "teacher.model", "teacher.url", "teacher.api_key_env"}
    # a method found elsewhere in the spec (a list item by its index), written at a source's table
    holder = {"sources": [wai.GRPO(), wai.OPD(T)]}
    assert field_value(holder, "sources[1].teacher.model") == TEACHER  # type: ignore[arg-type]
    assert field_value(holder, "sources.1.teacher.model") == TEACHER  # type: ignore[arg-type]
    opd = wai.RunSpec(taskset="reverse-text", model=STUDENT, method=wai.OPD(T))
    src = apply(algo_rows("orchestrator.train.source[0].algo"), opd)
    algo = src.doc["orchestrator"]["train"]["source"][0]["algo"]
    assert algo == {"type": "opd", "teacher": {"name": TEACHER, "base_url": "http://localhost:8001/v1",
                                               "api_key_var": "VLLM_API_KEY"}}
    assert {i.field for i in src.ignores} == {"top_k"}
