"""The rehearsal's data, reward and loss steps (whileai/targets/verl/rehearse/) run with verl's own
code on run folders compiled from the bundled examples and from specs with planted faults.

The steps run in a Python that has verl 0.9.1 (WHILEAI_VERL_PYTHON; docs/verl.md sets it up), all
in one subprocess: a small driver composes each command's config as whileai's check does, builds
the step's Context and calls the step's `run`. Elsewhere those tests are skipped; the stand-in
tokenizer's chat template is tested here with transformers alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai.targets.verl.rehearse.reward import completions
from whileai.targets.verl.rehearse.student import QWEN3, family

ROOT = Path(__file__).resolve().parents[3]
VERL = os.environ.get("WHILEAI_VERL_PYTHON")
needs_verl = pytest.mark.skipif(
    not VERL, reason="WHILEAI_VERL_PYTHON is not set: a Python with verl 0.9.1 (`whileai "
                     "rehearse --setup VENV -t verl` prints the commands that make one)")

# run by verl's Python: argv[1] a JSON list of [folder, [step, ...]]; prints one JSON line a step
DRIVER = r"""
import importlib, json, sys, tempfile
from pathlib import Path
import verl
from hydra import compose, initialize_config_dir
from whileai.targets.verl.check import CONFIGS
from whileai.targets.verl.novllm import without_vllm
from whileai.targets.verl.rehearse.context import Context
from whileai.targets.verl.runsh import read

config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
for folder, steps in json.loads(sys.argv[1]):
    folder = Path(folder)
    for cmd in read(folder, {"PWD": str(folder)}):
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name=CONFIGS[cmd.kind], overrides=list(cmd.overrides))
        ctx = Context(folder, cmd.kind, list(cmd.overrides), 8, 1, Path(tempfile.mkdtemp()), cfg)
        for name in steps:
            with without_vllm():
                step = importlib.import_module(f"whileai.targets.verl.rehearse.{name}").run(ctx)
            print(json.dumps({"folder": folder.name, "folder_path": str(folder), "job": cmd.kind,
                              **json.loads(step.to_json())}),
                  flush=True)
"""
STEPS = ["data", "reward", "loss"]
CLEAN = {"grpo": "examples/grpo.toml", "opd": "examples/opd.toml", "sft": "examples/sft.toml",
         "gsm8k-opd": "examples/tasksets/gsm8k-opd.toml", "own-grpo": "examples/own-data/grpo.toml"}
# planted faults: folder -> (spec, --set overrides)
FAULTS = {"no-prompt-column": ("examples/grpo.toml", ["data.prompt_key=question"]),
          "no-prompt-column-filtered": ("examples/grpo.toml", ["data.prompt_key=question",
                                                              "data.filter_overlong_prompts=true"]),
          "sft-switch-off": ("examples/sft.toml", ["sft.data.ignore_input_ids_mismatch=false"]),
          "sft-switch-on": ("examples/sft.toml", ["sft.data.ignore_input_ids_mismatch=true"]),
          "short-teacher": ("examples/opd.toml",
                            ["distillation.teacher_models.teacher_model.inference.max_model_len=4096"])}
# a user's rewards without **kwargs: a TRL-style one (behind the run's wrapper) and a verl-style one
STRICT_REWARD = ("def strict(prompts, completions, answer):\n"
                 "    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]\n\n\n"
                 "def verl_strict(data_source, solution_str, ground_truth):\n"
                 "    return float(str(ground_truth) in solution_str)\n")
VERL_STRICT = ["reward.custom_reward_function.path=$PWD/rewards.py",
               "reward.custom_reward_function.name=verl_strict"]


def _compile(spec: Path, out: Path, sets: list[str]) -> Path:
    args = [a for s in sets for a in ("--set", s)]
    done = subprocess.run([sys.executable, "-m", "whileai", "compile", str(spec), "-t", "verl", "-o",
                           str(out), *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    return out


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> dict[tuple[str, str], dict]:
    """{(folder, step): the StepRecord's JSON} for every command's steps (the last command's wins)."""
    if not VERL:
        pytest.skip("WHILEAI_VERL_PYTHON is not set")
    base = tmp_path_factory.mktemp("rehearse")
    folders = [_compile(ROOT / spec, base / name, []) for name, spec in CLEAN.items()]
    folders += [_compile(ROOT / spec, base / name, sets) for name, (spec, sets) in FAULTS.items()]
    own = base / "strict-spec"  # a user reward without **kwargs behind the run's reward wrapper
    own.mkdir()
    (own / "tasks.jsonl").write_text((ROOT / "examples/own-data/tasks.jsonl").read_text())
    (own / "rewards.py").write_text(STRICT_REWARD)
    (own / "grpo.toml").write_text((ROOT / "examples/own-data/grpo.toml").read_text()
                                   .replace("rewards.contains_answer", "rewards.strict"))
    folders.append(_compile(own / "grpo.toml", base / "strict-reward", []))
    folders.append(_compile(own / "grpo.toml", base / "verl-strict-reward", VERL_STRICT))
    done = subprocess.run([VERL, "-c", DRIVER, json.dumps([[str(f), STEPS] for f in folders])],
                          cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[tuple[str, str], dict] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            key = (d["folder"], d["name"])
            if not (key in out and out[key]["ok"] is False):  # a failed command's step stays failed
                out[key] = d
    return out


# -- offline: the stand-in tokenizer's template --------------------------------------------------
def test_family_of_a_student_from_its_name():
    assert family("Qwen/Qwen3-0.6B") == family("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT") == "qwen3"
    assert family("Qwen/Qwen2.5-7B-Instruct") == "qwen2"
    assert family("meta-llama/Llama-3.1-8B-Instruct") == "llama"
    assert family("some/model") == "chatml"


def test_qwen3_stand_in_template_adds_the_think_block_only_to_a_whole_conversation():
    """The behaviour verl's SFT sanity check trips on (multiturn_sft_dataset.py:425-456): the last
    assistant turn gets an empty think block in the whole form, none when rendered alone."""
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from whileai.targets.verl.rehearse.student import tokenizer

    tok, why = tokenizer("Qwen/Qwen3-0.6B", ["hello world"])
    assert tok.chat_template == QWEN3 and "Qwen3's chat template" in why
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
    whole = tok.apply_chat_template(chat, tokenize=False)
    alone = "".join(tok.apply_chat_template([m], tokenize=False) for m in chat)
    assert whole == ("<|im_start|>user\nhi<|im_end|>\n"
                     "<|im_start|>assistant\n<think>\n\n</think>\n\nok<|im_end|>\n")
    assert alone == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nok<|im_end|>\n"
    # a teacher's reasoning kept in the whole form, dropped from the turn rendered alone
    said = [chat[0], {"role": "assistant", "content": "<think>\nplan\n</think>\n\nok"}]
    assert "plan" in tok.apply_chat_template(said, tokenize=False)
    assert "plan" not in tok.apply_chat_template(said[1:], tokenize=False)
    prompt = tok.apply_chat_template(chat[:1], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|im_start|>assistant\n")


def test_a_chatml_student_renders_turns_alike_alone_and_whole():
    pytest.importorskip("transformers")
    from whileai.targets.verl.rehearse.student import tokenizer

    tok, _ = tokenizer("Qwen/Qwen2.5-0.5B-Instruct", ["hello"])
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
    assert tok.apply_chat_template(chat, tokenize=False) == \
        "".join(tok.apply_chat_template([m], tokenize=False) for m in chat)


def test_stand_in_completions_hold_the_truth_or_not():
    right, wrong = completions("42")
    assert "#### 42" in right and "<reversed_text>42</reversed_text>" in right and "42" not in wrong


# -- with verl: clean examples pass, planted faults fail with their cause ------------------------
@needs_verl
@pytest.mark.slow
@pytest.mark.parametrize("folder", list(CLEAN))
@pytest.mark.parametrize("name", STEPS)
def test_clean_example_passes(steps, folder, name):
    """Every bundled example's data, reward and loss steps pass (the SFT example needs
    ignore_input_ids_mismatch written; OPD's loss needs the reader to read verl's distillation series)."""
    got = steps[(folder, name)]
    assert got["ok"], (got["error"], got["cause"])  # each step's seconds: benchmarks/bench_verl_rehearse.py


@needs_verl
@pytest.mark.slow
def test_rows_without_the_prompt_column_fail_the_data_step(steps):
    got = steps[("no-prompt-column", "data")]
    assert not got["ok"] and got["error"] == "KeyError: 'question'"
    assert got["cause"].startswith("verl/utils/dataset/rl_dataset.py:")
    assert "verl.utils.dataset.rl_dataset.RLHFDataset" in got["ran"]


@needs_verl
@pytest.mark.slow
def test_rows_without_the_prompt_column_and_verls_length_filter_leave_no_batch(steps):
    """With filter_overlong_prompts verl counts an unreadable row as overlong and drops it
    (rl_dataset.py:248-276): no row is left, and the step names the missing column."""
    got = steps[("no-prompt-column-filtered", "data")]
    assert not got["ok"] and got["facts"]["train_kept"] == 0
    assert "KeyError: 'question'" in got["error"] and "rl_dataset.py:248-276" in got["cause"]


@needs_verl
@pytest.mark.slow
def test_sft_switch_off_on_a_qwen3_student_fails_with_verls_assertion(steps):
    got = steps[("sft-switch-off", "data")]
    assert not got["ok"] and got["error"].startswith("AssertionError: MultiTurnSFTDataset")
    assert got["cause"].startswith("verl/utils/dataset/multiturn_sft_dataset.py:")
    assert "apply_chat_template to each turn separately" in got["facts"]["verl_message"]
    assert any("Qwen3's chat template" in s for s in got["stood_in"])


@needs_verl
@pytest.mark.slow
def test_sft_switch_on_passes_and_says_the_teachers_reasoning_is_not_trained(steps):
    got = steps[("sft-switch-on", "data")]
    assert got["ok"], got["error"]
    assert got["facts"]["ignore_input_ids_mismatch"] is True
    assert got["facts"]["teacher_reasoning_trained"] is False


def _wrapper_verdict(folder: Path) -> str:
    """What the compiled reward.py does when verl calls it as naive.py does: "" or its TypeError."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compiled_reward", folder / "reward.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    saved = (list(sys.path), dict(sys.modules))
    try:
        spec.loader.exec_module(module)
        module.compute_score(data_source="whileai/own-data", solution_str="5", ground_truth="5",
                             extra_info={"answer": "5", "prompt": "2+3?", "split": "train", "index": 0,
                                         "num_turns": 2, "rollout_reward_scores": {}})
        return ""
    except TypeError as e:
        return str(e)
    finally:
        sys.path[:] = saved[0]
        sys.modules.pop("rewards", None)


@needs_verl
@pytest.mark.slow
def test_the_reward_step_fails_exactly_when_the_wrapper_passes_verls_keys_on(steps, tmp_path):
    """A user's reward without **kwargs behind the run's wrapper: the step fails, naming verl's key,
    when the wrapper hands verl's extra_info keys (num_turns, ...) on to it, and passes when the
    wrapper gives the function only what it takes."""
    got = steps[("strict-reward", "reward")]
    refused = _wrapper_verdict(Path(got["folder_path"]))
    if refused:
        assert "unexpected keyword argument 'num_turns'" in refused
        assert not got["ok"] and refused in got["error"] and "naive.py:50-52" in got["error"]
        assert got["cause"].startswith("reward.py:")
    else:
        assert got["ok"], got["error"]


@needs_verl
@pytest.mark.slow
def test_a_verl_reward_that_rejects_extra_info_fails_the_reward_step(steps):
    """The fault re-opened with --set: a verl-style function without extra_info as the run's reward."""
    got = steps[("verl-strict-reward", "reward")]
    assert not got["ok"] and "unexpected keyword argument 'extra_info'" in got["error"]
    assert "naive.py:76-83" in got["error"] and got["cause"].startswith("verl/trainer/ppo/reward.py:")


@needs_verl
@pytest.mark.slow
def test_rewards_tell_a_right_completion_from_a_wrong_one(steps):
    for folder in ("grpo", "gsm8k-opd", "own-grpo"):
        got = steps[(folder, "reward")]
        assert all(right > wrong for right, wrong in got["facts"]["scores"]), (folder, got["facts"])


@needs_verl
@pytest.mark.slow
def test_a_teacher_context_below_prompt_plus_response_fails_the_loss_step(steps):
    got = steps[("short-teacher", "loss")]
    assert not got["ok"] and "max_model_len=4096" in got["error"]
    assert got["cause"].startswith("verl/workers/config/distillation.py:")
    assert "vllm_async_server.py" in got["error"]


@needs_verl
@pytest.mark.slow
def test_opd_loss_metrics_are_what_the_reader_maps(steps):
    """verl's distillation loss logs actor/distillation/loss; the reader's teacher_kl and (without
    task rewards) train_loss must read it, not the actor/pg_loss verl zeroes (losses.py:214-217)."""
    got = steps[("opd", "loss")]
    assert "actor/distillation/loss" in got["facts"]["logged"]
    assert "verl.trainer.distillation.losses.distillation_ppo_loss" in got["ran"]
    assert got["facts"]["read"]["train_loss"] == pytest.approx(got["facts"]["loss"])


@needs_verl
@pytest.mark.slow
def test_grpo_advantage_is_zero_in_a_flat_group(steps):
    adv = steps[("grpo", "loss")]["facts"]["advantages"]
    half = len(adv) // 2
    assert all(a == 0.0 for a in adv[half:]) and any(a > 0 for a in adv[:half])
