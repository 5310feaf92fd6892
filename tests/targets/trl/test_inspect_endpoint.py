"""`whileai inspect` against OpenAI-compatible servers: a fake vLLM on 127.0.0.1 backed by the tiny
models, so every number is checked against a forward pass; the API key is sent, never written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_vllm import FakeVLLM
from inspect_check import load, recheck
from test_inspect_local import inspect, read

pytestmark = pytest.mark.trl
SECRET = "sk-test-0123456789abcdef"


def spec(folder: Path, url: str, key_env: str) -> Path:
    path = folder / "opd.toml"
    path.write_text('taskset = "reverse-text"\nmodel = "tiny-student"\n\n[method]\ntype = "opd"\n'
                    f'[method.teacher]\nurl = "{url}"\nmodel = "tiny-teacher"\napi_key_env = "{key_env}"\n')
    return path


def run_against(server: FakeVLLM, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], str]:
    monkeypatch.setenv("TINY_KEY", SECRET)
    path = spec(tmp_path, server.url, "TINY_KEY")
    code, stdout, stderr = inspect(str(path), "--student-endpoint", server.url, "--student-api-key-env",
                                   "TINY_KEY", "--prompts", "2", "--samples", "2", "--max-tokens", "10",
                                   "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    text = stdout + stderr + "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").iterdir())
    assert SECRET not in text and SECRET[:12] not in text
    return read(tmp_path / "out"), stdout


def test_endpoints_with_prompt_logprobs(tiny_models: dict[str, str], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    models = {"tiny-student": tiny_models["student"], "tiny-teacher": tiny_models["teacher"]}
    with FakeVLLM(models, key=SECRET, deadline=60) as server:
        report, stdout = run_against(server, tmp_path, monkeypatch)
        seen = {(path, body.get("model")) for path, body, _ in server.requests}
    assert {auth for *_, auth in server.requests} == {f"Bearer {SECRET}"}
    assert ("/tokenize", "tiny-student") in seen and ("/v1/completions", "tiny-teacher") in seen
    assert report["student"]["kind"] == report["teacher"]["kind"] == "endpoint"
    assert report["teacher"]["logprobs"] == "prompt_logprobs"
    assert report["teacher"]["api_key_env"] == "TINY_KEY"
    assert report["definitions"]["full_kl_available"] is False
    assert "top-k" in report["definitions"]["full_kl_note"]
    assert recheck(report, load(tiny_models["student"]), load(tiny_models["teacher"]), full=False) > 0
    ranks = [t["teacher_rank"] for c in report["completions"] for t in c["tokens"]]
    assert all(r is not None and r >= 1 for r in ranks)  # vLLM reports the sampled token's rank
    assert "through each side's own tokenizer the probe text gives same ids" in report["tokenizer_note"]
    assert "prompt_logprobs" in stdout


def test_endpoints_without_prompt_logprobs_fall_back_to_echo(tiny_models: dict[str, str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    models = {"tiny-student": tiny_models["student"], "tiny-teacher": tiny_models["teacher"]}
    with FakeVLLM(models, key=SECRET, prompt_logprobs=False, deadline=60) as server:
        report, _ = run_against(server, tmp_path, monkeypatch)
    assert report["teacher"]["logprobs"] == report["student"]["logprobs"] == "echo"
    assert recheck(report, load(tiny_models["student"]), load(tiny_models["teacher"]), full=False) > 0
    alts = [a for c in report["completions"] for t in c["tokens"] for a in t["teacher_top"]]
    assert alts and all(a["id"] is None for a in alts)


def test_local_student_with_the_specs_teacher_endpoint(tiny_models: dict[str, str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeVLLM({"tiny-teacher": tiny_models["teacher"]}, deadline=60) as server:
        path = spec(tmp_path, server.url, "UNSET_KEY_VAR")
        code, _, stderr = inspect(str(path), "--local-student", tiny_models["student"], "--prompts", "1",
                                  "--max-tokens", "6", "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    report = read(tmp_path / "out")
    assert report["student"]["kind"] == "local" and report["teacher"]["kind"] == "endpoint"
    assert recheck(report, load(tiny_models["student"]), load(tiny_models["teacher"]), full=False) > 0
    assert json.dumps(report).count(server.url) >= 1


def test_a_wrong_key_is_one_line_naming_the_variable(tiny_models: dict[str, str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINY_KEY", "sk-wrong-0000000000")
    with FakeVLLM({"tiny-student": tiny_models["student"], "tiny-teacher": tiny_models["teacher"]},
                  key=SECRET, deadline=60) as server:
        path = spec(tmp_path, server.url, "TINY_KEY")
        code, stdout, stderr = inspect(str(path), "--student-endpoint", server.url,
                                       "--student-api-key-env", "TINY_KEY", "-o", str(tmp_path / "o"))
    assert code == 2 and "HTTP 401" in stderr and "a valid API key in $TINY_KEY" in stderr
    assert "sk-wrong-0000000000" not in stdout + stderr and not (tmp_path / "o").exists()


def test_opsd_on_one_endpoint(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """OPSD's teacher is the student's own server, asked with the hint in the prompt."""
    path = tmp_path / "opsd.toml"
    path.write_text('taskset = "reverse-text"\nmodel = "tiny-student"\n\n[method]\ntype = "opsd"\n')
    with FakeVLLM({"tiny-student": tiny_models["student"]}, deadline=60) as server:
        code, _, stderr = inspect(str(path), "--student-endpoint", server.url, "--prompts", "1",
                                  "--max-tokens", "6", "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    report = read(tmp_path / "out")
    assert report["teacher"]["kind"] == "endpoint" and report["teacher"]["model"] == "tiny-student"
    assert "<demonstration>" in report["prompts"][0]["teacher_context"]
    net = load(tiny_models["student"])
    assert recheck(report, net, net, full=False) > 0
