"""`whileai inspect` on tiny local models: the JSON matches an independent forward pass, OPSD's
teacher sees the hint, SFT's teacher samples and both score, and the page renders in Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_check import browser, chromium, load, recheck
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.cli.schemas import generate
from whileai.tokenview import adapters

pytestmark = pytest.mark.trl
ROOT = Path(__file__).resolve().parents[3]


def write_spec(folder: Path, method: str, student: str, teacher: str = "", extra: str = "") -> Path:
    body = {"opd": f'type = "opd"\nteacher = "vllm:{teacher}@http://localhost:8001/v1"\n',
            "sft": f'type = "sft"\nteacher = "vllm:{teacher}@http://localhost:8001/v1"\n',
            "opsd": 'type = "opsd"\nprivileged = "answer"\n'}[method]
    path = folder / f"{method}.toml"
    path.write_text(f'taskset = "reverse-text"\nmodel = "{student}"\n{extra}\n[method]\n{body}')
    return path


def inspect(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["inspect", *args], env={"COLUMNS": "120"})
    return r.exit_code, r.stdout, r.stderr


def read(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "inspect.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def opd(tiny_models: dict[str, str],
        tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    tmp = tmp_path_factory.mktemp("inspect-opd")
    spec = write_spec(tmp, "opd", tiny_models["student"], tiny_models["teacher"])
    out = tmp / "out"
    code, stdout, stderr = inspect(str(spec), "--local-student", tiny_models["student"], "--local-teacher",
                                   tiny_models["teacher"], "--prompts", "2", "--samples", "2",
                                   "--max-tokens", "12", "-o", str(out))
    assert code == 0, stderr
    return read(out), out, stdout


def test_opd_json_matches_an_independent_forward_pass(opd: Any, tiny_models: dict[str, str]) -> None:
    report, _, _ = opd
    Draft202012Validator(generate("inspect")).validate(report)
    assert len(report["completions"]) == 4
    checked = recheck(report, load(tiny_models["student"]), load(tiny_models["teacher"]), full=True)
    assert checked == report["overall"]["tokens"] > 0
    assert report["definitions"]["full_kl_available"] is True
    assert report["student"]["logprobs"] == report["teacher"]["logprobs"] == "forward pass"
    signals = [t["signal"] for c in report["completions"] for t in c["tokens"]]
    assert abs(report["overall"]["mean_signal"] - sum(signals) / len(signals)) < 1e-9
    assert sum(b["tokens"] for b in report["by_position"]) == len(signals)


def test_opd_summary_and_tokenizer_check(opd: Any) -> None:
    report, out, stdout = opd
    assert report["tokenizer_check"]["verdict"] == "identical"
    assert "tokenizers compared from local files" in report["tokenizer_note"]
    for words in ("inspect: opd on reverse-text", "overall", "mean signal", "most disagreed-with",
                  "tokenizers compared from local files", f"wrote {out / 'inspect.html'}"):
        assert words in stdout, words


def test_opsd_teacher_is_the_student_shown_the_answer(tiny_models: dict[str, str], tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "opsd", tiny_models["student"])
    code, _, stderr = inspect(str(spec), "--local-student", tiny_models["student"], "--prompts", "2",
                              "--max-tokens", "8", "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    report = read(tmp_path / "out")
    for p in report["prompts"]:
        assert p["privileged"] and p["privileged"] in p["teacher_context"]
        assert "<demonstration>" in p["teacher_context"] and "<demonstration>" not in p["student_context"]
        assert p["teacher_context_ids"][: 5] == p["student_context_ids"][: 5]  # same system prompt
    net = load(tiny_models["student"])
    assert recheck(report, net, net, full=True) > 0
    assert report["tokenizer_check"] is None and "one model" in report["tokenizer_note"]


def test_sft_the_teacher_samples_and_both_score(tiny_models: dict[str, str], tmp_path: Path) -> None:
    """SFT's adapter: the teacher generates, both models score its tokens, signal = log p_t −
    log p_s on each (checked against an independent forward pass of both models)."""
    assert adapters.ADAPTERS["sft"].sampler == "teacher"
    spec = write_spec(tmp_path, "sft", tiny_models["student"], tiny_models["teacher"])
    code, stdout, stderr = inspect(str(spec), "--local-student", tiny_models["student"], "--local-teacher",
                                   tiny_models["teacher"], "--prompts", "1", "--samples", "2",
                                   "--max-tokens", "6", "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    report = read(tmp_path / "out")
    Draft202012Validator(generate("inspect")).validate(report)
    assert report["method"] == {"type": "sft", "sampler": "teacher",
                                "teacher_context": adapters.ADAPTERS["sft"].teacher_context}
    assert "inspect: sft on reverse-text" in stdout
    teacher, student = load(tiny_models["teacher"]), load(tiny_models["student"])
    assert recheck(report, student, teacher, full=True, sampler="teacher") == report["overall"]["tokens"] > 0


def test_a_model_that_is_not_local_is_one_line_exit_2(tiny_models: dict[str, str], tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "opd", tiny_models["student"], tiny_models["teacher"])
    code, _, stderr = inspect(str(spec), "--local-student", "nobody/no-such-model-xyz", "--local-teacher",
                              tiny_models["teacher"], "-o", str(tmp_path / "out"))
    assert code == 2
    assert stderr.count("\n") == 1 and "--local-student" in stderr and "never downloads" in stderr
    assert not (tmp_path / "out").exists()


COLLECT = ("<script>window.__errs=[];addEventListener('error',function(e){__errs.push('error: '+e.message)});"
           "addEventListener('unhandledrejection',function(e){__errs.push('rejection: '+e.reason)});"
           "addEventListener('securitypolicyviolation',function(e){__errs.push('csp: '+e.blockedURI)});"
           "['error','warn'].forEach(function(k){var f=console[k];console[k]=function(){"
           "__errs.push(k+': '+[].join.call(arguments,' '));f.apply(console,arguments)}});</script>")
REPORT = "<script>document.body.setAttribute('data-errors',JSON.stringify(window.__errs));</script>"


def test_page_renders_in_chromium_with_no_console_errors(opd: Any, tmp_path: Path) -> None:
    if browser() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium; .ci/run does it)")
    report, out, _ = opd
    page = (out / "inspect.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "the page loads something external"
    assert "<link" not in page and "@import" not in page
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + COLLECT, 1).replace("</body>", REPORT + "</body>", 1),
                     encoding="utf-8")
    done = chromium("--virtual-time-budget=3000", "--dump-dom", probe.as_uri(),
                    user_data=tmp_path / "profile")
    dom = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'data-ready="1"' in dom, "the page's script did not finish"
    assert 'data-errors="[]"' in dom, re.findall(r'data-errors="[^"]*"', dom)
    assert "Uncaught" not in done.stderr
    spans = re.findall(r'<span class="t[^"]*" data-c="\d+" data-p="\d+" style="background-color: rgba?\(',
                       dom)
    assert len(spans) == report["overall"]["tokens"], "every token is shown and coloured"
    assert "log p teacher" in dom  # the most disagreed-with token is pinned in the side panel
    shown = [t["text"] for c in report["completions"] for t in c["tokens"] if t["text"].strip().isalnum()]
    assert shown and all(text in dom for text in shown)
