"""Tokenizer check from the files: measured when both tokenizers are local (a folder or the HF cache
layout), the family heuristic otherwise, and the compile report says which."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import TEMPLATE, TEXTS
from helpers import save_tokenizer as save

import whileai as wai
from whileai.rules.facts import Facts
from whileai.rules.research import RULES
from whileai.vocab import compare as tokcheck

tokenizers = pytest.importorskip("tokenizers", reason="the trl extra (pip install -e '.[trl]'): tokenizers")
RULE = next(r for r in RULES if r.id == "tokenizer-mismatch")


def test_the_same_tokenizer_is_identical(tmp_path: Path) -> None:
    a, b = save(tmp_path / "a", rows=320), save(tmp_path / "b", rows=320)
    check = tokcheck.check_names(str(a), str(b))
    assert check is not None and check.verdict == "identical" and check.differences == []
    assert check.probe_same and check.chat_template_same and check.id_overlap == 1.0
    assert check.special["eos"].student == "<|im_end|>" and check.special["eos"].student_id == 2


def test_other_merges_are_different(tmp_path: Path) -> None:
    a = save(tmp_path / "a")
    b = save(tmp_path / "b", texts=["completely other words", "zebra quantum 9999"], vocab=280)
    check = tokcheck.check_names(str(a), str(b))
    assert check is not None and check.verdict == "different" and not check.probe_same
    assert any("probe text encodes to different ids" in d for d in check.differences)
    assert check.vocab_size[0] != check.vocab_size[1]


def test_same_ids_but_template_eos_or_rows_differ(tmp_path: Path) -> None:
    a = save(tmp_path / "a", rows=320)
    b = save(tmp_path / "b", rows=384, template=TEMPLATE.replace("<|im_start|>{{", "<|im_start|> {{"))
    check = tokcheck.check_names(str(a), str(b))
    assert check is not None and check.verdict == "same-ids", check.differences
    assert check.chat_template_same is False and check.embedding_rows == (320, 384)
    c = save(tmp_path / "c", eos="<|endoftext|>")
    other = tokcheck.check_names(str(a), str(c))
    assert other is not None and other.verdict == "same-ids"  # ids agree; the end token does not
    assert any(d.startswith("EOS differs") and "inflated" in d for d in other.differences)


def test_hub_cache_snapshots_are_found_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--org--Qwen3-0.6B"
    save(repo / "snapshots" / "abc123")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    assert tokcheck.locate("org/Qwen3-0.6B") == repo / "snapshots" / "abc123"
    assert tokcheck.locate("org/not-cached") is None and tokcheck.locate("no-slash") is None


def opd_run(student: str, teacher: str) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=student,
                       method=wai.OPD(wai.Endpoint(url="http://localhost:8001/v1", model=teacher)))


def test_compile_states_the_measured_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    for name, texts in (("student", TEXTS), ("teacher", ["completely other words", "zebra 9999"])):
        save(tmp_path / "hub" / f"models--org--{name}" / "snapshots" / "r1", texts=texts)
    finding = RULE(opd_run("org/student", "org/teacher"), Facts())
    assert finding is not None and finding.message.startswith("tokenizers compared from local files")
    assert "silently wrong" in finding.message
    with pytest.raises(wai.SpecError, match=r"method.teacher.model: 'org/teacher'.*measured from local "
                       r"tokenizer files.*-b trl"):  # measured: prime-rl scores ids, so refused
        wai.compile(opd_run("org/student", "org/teacher"))
    save(tmp_path / "hub" / "models--org--teacher" / "snapshots" / "r1")  # now the same tokenizer
    assert RULE(opd_run("org/student", "org/teacher"), Facts()) is None  # measured identical: nothing to say


def test_compile_says_when_it_fell_back_to_the_family_heuristic() -> None:
    finding = RULE(opd_run("Qwen/Qwen3-1.7B", "meta-llama/Llama-3.1-8B-Instruct"), Facts())
    assert finding is not None and finding.message.startswith("by model-name family only")
    assert "Qwen/Qwen3-1.7B" in finding.message and "no local tokenizer files" in finding.message
