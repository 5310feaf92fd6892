"""SFT on teacher samples with a thinking template: verl's SFT dataset tokenises each turn alone
and asserts the concatenation equals the whole conversation's tokens
(utils/dataset/multiturn_sft_dataset.py:425-456), which Qwen3's template breaks by adding an empty
think block to the last assistant turn in the whole form only. The compiled sft_trainer job turns
verl's switch on (sft_trainer_engine.yaml:42-47), and convert.py strips the teacher's think blocks.

The live test builds verl's own MultiTurnSFTDataset with the compiled job's data config, on a
small local tokenizer (whileai.vocab.tiny) whose template renders think blocks as Qwen3's does
(WHILEAI_VERL_PYTHON: a Python with verl 0.9.1)."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from helpers import EXAMPLES, verl_python

from whileai.spec.load import load_spec
from whileai.targets.verl import convert
from whileai.targets.verl.compile import compile
from whileai.targets.verl.runsh import parse

ROOT = Path(__file__).resolve().parents[3]
# Qwen3's rule, in small: an assistant turn after the last user turn renders its reasoning in a
# think block (an empty one when it is the last turn); any other renders only the text after
# </think>. A turn alone (verl's per-turn form) has no user turn before it, so it never gets one.
THINKING = (
    "{%- set ns = namespace(last=messages|length - 1, found=false) %}"
    "{%- for m in messages[::-1] %}{%- if not ns.found and m.role == 'user' %}"
    "{%- set ns.found = true %}{%- set ns.last = (messages|length - 1) - loop.index0 %}"
    "{%- endif %}{%- endfor %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}"
    "{%- set content = m.content %}{%- set reasoning = '' %}"
    "{%- if '</think>' in content %}"
    "{%- set reasoning = content.split('</think>')[0].split('<think>')[-1].strip('\\n') %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}{%- endif %}"
    "{%- if loop.index0 > ns.last and (loop.last or reasoning) %}"
    "{{- '<|im_start|>assistant\\n<think>\\n' + reasoning + '\\n</think>\\n\\n' + content"
    " + '<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>assistant\\n' + content + '<|im_end|>\\n' }}{%- endif %}"
    "{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def sft_overrides(c) -> list[str]:
    [train] = [cmd for cmd in parse(c.files["run.sh"], {"PWD": "/run"}) if cmd.kind == "sft_trainer"]
    return list(train.overrides)


def test_the_compiled_sft_job_turns_verls_mismatch_switch_on_and_says_why():
    c = compile(load_spec(EXAMPLES / "sft.toml"))
    assert "data.ignore_input_ids_mismatch=True" in sft_overrides(c)
    [fixed] = [f for f in c.fixed if f.path == "sft.data.ignore_input_ids_mismatch"]
    assert fixed.value is True and "multiturn_sft_dataset.py:425-456" in fixed.reason
    assert "sft.data.ignore_input_ids_mismatch=True" in c.files["README.md"]
    assert any("<think>...</think> is stripped" in n for n in c.notes)


def test_an_override_can_turn_it_off_again():
    run = load_spec(EXAMPLES / "sft.toml")
    from whileai.spec.load import replace_run

    c = compile(replace_run(run, overrides={"sft.data.ignore_input_ids_mismatch": False}))
    assert "data.ignore_input_ids_mismatch=False" in sft_overrides(c)


def test_convert_strips_the_teachers_think_block(tmp_path):
    answers = ["<think>\nadd them\n</think>\n\n5", "5", "<think>\nstill going"]
    responses = pd.DataFrame([{"prompt": [{"role": "user", "content": "2+3?"}], "responses": answers,
                               "split": "train"}])
    responses.to_parquet(tmp_path / "responses.parquet")
    assert convert.messages(tmp_path / "responses.parquet", tmp_path / "sft.parquet") == 3
    rows = pd.read_parquet(tmp_path / "sft.parquet")["messages"].tolist()
    assert [list(r)[-1]["content"] for r in rows] == ["5", "5", "<think>\nstill going"]
    assert convert.final_answer("<think>a</think>b</think>\n\nc") == ("c", False)


@pytest.mark.slow
def test_live_verls_sft_dataset_asserts_without_the_switch_and_reads_the_row_with_it(tmp_path):
    python = verl_python()
    c = compile(load_spec(EXAMPLES / "sft.toml"))
    (tmp_path / "convert.py").write_text(c.files["convert.py"])
    answers = ["<think>\nreverse it\n</think>\n\nolleh", "dlrow"]
    pd.DataFrame([{"prompt": [{"role": "user", "content": "Reverse: hello"}], "responses": answers,
                   "split": "train"}]).to_parquet(tmp_path / "responses.parquet")
    cases = {"on": sft_overrides(c), "off": [*sft_overrides(c), "data.ignore_input_ids_mismatch=False"]}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    check = textwrap.dedent(f"""
        import json, subprocess, sys
        from pathlib import Path
        import verl
        from hydra import compose, initialize_config_dir
        from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset
        from whileai.vocab.tiny import tokenizer

        subprocess.run([sys.executable, "convert.py", "messages", "responses.parquet", "sft.parquet"],
                       check=True)
        tok = tokenizer(["Reverse: hello olleh dlrow reverse it"] * 20, "qwen3")
        tok.chat_template = {THINKING!r}
        config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
        for name, overrides in json.load(open("cases.json")).items():
            with initialize_config_dir(config_dir=config_dir, version_base=None):
                cfg = compose(config_name="sft_trainer_engine", overrides=overrides)
            ds = MultiTurnSFTDataset("sft.parquet", tok, cfg.data)
            try:
                row = ds[0]
            except AssertionError as e:
                print(name, "AssertionError", str(e).splitlines()[0])
                continue
            print(name, "row", len(row["input_ids"]), json.dumps(tok.decode(row["input_ids"])))
    """)
    done = subprocess.run([python, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = {ln.split(" ", 1)[0]: ln.split(" ", 2)[1:] for ln in done.stdout.splitlines()
             if ln.startswith(("on ", "off "))}
    assert lines["off"][0] == "AssertionError", done.stdout
    assert lines["on"][0] == "row", done.stdout
    text = json.loads(lines["on"][1].split(" ", 1)[1])
    assert "olleh" in text and "reverse it" not in text  # the answer trained, the reasoning not
