"""whileai.vocab.tiny, the one tiny-model builder: it imports nothing of whileai, and run by its path
(as prime-rl's rehearsal runs it, in prime-rl's environment) it writes a family's stand-in."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai.targets.prime_rl.rehearse import prepare, scope
from whileai.vocab import tiny


def test_the_builder_imports_nothing_of_whileai_even_inside_a_function() -> None:
    tree = ast.parse(Path(tiny.__file__).read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert "tokenizers" in names and "transformers" in names  # the walk sees the functions' imports
    assert [n for n in names if n.partition(".")[0] == "whileai"] == []


def test_the_rehearsal_runs_this_module_and_has_every_family_it_picks() -> None:
    assert prepare.TINY == Path(tiny.__file__) and prepare.TINY.is_file()
    picked = {*scope.RENDERERS.values(), *(fam for _, fam, _ in scope.NAME_HINTS), "generic"}
    assert picked <= set(tiny.FAMILIES)


def test_run_by_path_it_writes_the_stand_in_and_prints_its_facts(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers", reason="the trl extra (pip install -e '.[trl]'): tokenizers")
    pytest.importorskip("transformers", reason="the trl extra (pip install -e '.[trl]'): transformers")
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(["hello world", "reverse the text"] * 20))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a plain python, no whileai path
    args = [str(tmp_path / "m"), "llama", str(texts), "llama"]
    done = subprocess.run([sys.executable, str(prepare.TINY), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts == json.loads((tmp_path / "m" / "WHILEAI_TINY.json").read_text())
    assert facts["family"] == "llama" and facts["model_type"] == "llama"
    assert {p.name for p in (tmp_path / "m").iterdir()} == {
        "WHILEAI_TINY.json", "chat_template.jinja", "config.json", "generation_config.json",
        "tokenizer.json", "tokenizer_config.json"}
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and config["eos_token_id"] == facts["eos_token_id"]
    assert config["vocab_size"] == facts["vocab_size"] <= 512
    saved = json.loads((tmp_path / "m" / "tokenizer_config.json").read_text())
    assert saved["bos_token"] == "<|begin_of_text|>"


def test_the_trl_models_tokenizer_is_chatml_alone_padded_on_the_left() -> None:
    pytest.importorskip("tokenizers", reason="the trl extra (pip install -e '.[trl]'): tokenizers")
    pytest.importorskip("transformers", reason="the trl extra (pip install -e '.[trl]'): transformers")
    tok = tiny.tokenizer(["hello world", "reverse the text"] * 20, "chatml", left=True)
    assert [tok.convert_ids_to_tokens(i) for i in range(3)] == [tiny.PAD, tiny.IM_START, tiny.IM_END]
    assert "<think>" not in tok.get_vocab() and tok.padding_side == tok.truncation_side == "left"
    assert (tok.eos_token, tok.pad_token, tok.bos_token) == (tiny.IM_END, tiny.PAD, None)
    chat = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                   add_generation_prompt=True)
    assert chat == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
