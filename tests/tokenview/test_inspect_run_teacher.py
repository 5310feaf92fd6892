"""`whileai inspect --run` with a teacher: the run's own samples scored through prime-rl's teacher
route against a stand-in server with known log-probs (tests/fake_teacher.py, a real HTTP server on
127.0.0.1), or against a tiny local model; and every way a teacher is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import token_export_gen as gen
from fake_openai import refused_url
from fake_teacher import MODEL, FakeTeacher, logprob
from helpers import TEXTS, train_bpe
from typer.testing import CliRunner

from whileai.cli.app import app


def records(run: Path) -> dict[tuple[int, int, int], dict[str, Any]]:
    out = {}
    for f in sorted(run.glob("token_exports/step_*/rank_*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            out[(r["step"], r["rank"], r["export_sequence_idx"])] = r
    return out


def inspect(*args: str) -> Any:
    return CliRunner().invoke(app, ["inspect", *args])


def expected(rec: dict[str, Any], teacher: Any) -> list[float]:
    """student minus teacher log-prob at every trained token after the first position."""
    ids, mask, lp = rec["token_ids"], rec["loss_mask"], rec["trainer_logprobs"]
    return [lp[i] - teacher(i, ids[i]) for i in range(1, len(ids)) if mask[i] and lp[i] is not None]


def test_signal_is_student_minus_teacher_on_every_scored_token(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "run", steps=3, ranks=2, sequences=5, completion=30)
    with FakeTeacher() as server:
        r = inspect("--run", str(tmp_path / "run"), "--teacher-endpoint", f"vllm:{MODEL}@{server.url}",
                    "--per-step", "4", "-o", str(tmp_path / "out"))
        params = server.params
    assert r.exit_code == 0, r.output
    recs = records(tmp_path / "run")
    run = json.loads((tmp_path / "out" / "inspect-run.json").read_text())
    page = json.loads((tmp_path / "out" / "inspect-run-teacher.json").read_text())
    tr = run["teacher"]
    # only the picked samples were sent, each with prime-rl's own body (utils/client.py:498) ...
    prime = {"max_tokens": 1, "temperature": 1.0, "top_p": 1.0, "prompt_logprobs": 1}
    assert sum(p == prime for p in params) == len(tr["samples"]) == 3 * 4
    # ... and the shown ones once more with prompt_logprobs top_k, for the alternatives
    assert sum(p == prime | {"prompt_logprobs": 5} for p in params) == len(page["completions"])
    assert len(params) == len(tr["samples"]) + len(page["completions"])
    assert [s["step"] for s in tr["steps"]] == [0, 1, 2]
    checked = 0
    for s in tr["samples"]:
        want = expected(recs[(s["step"], s["rank"], s["index"])], logprob)
        assert s["stats"]["tokens"] == len(want)
        assert s["stats"]["mean_signal"] == pytest.approx(sum(want) / len(want), abs=1e-6)
        if s["shown"] is not None:
            toks = page["completions"][s["shown"]]["tokens"]
            assert len(toks) == len(want)
            for t, w in zip(toks, want, strict=True):
                assert abs(t["signal"] - w) <= 1e-6
                assert abs(t["signal"] - (t["student_logprob"] - t["teacher_logprob"])) <= 1e-6
                checked += 1
    assert checked == sum(len(c["tokens"]) for c in page["completions"]) > 0
    # the picked samples are those of largest mean student surprise in their step
    for step in (0, 1, 2):
        surprise = sorted((-sum(v for v, m in zip(rec["trainer_logprobs"], rec["loss_mask"], strict=True)
                                if m) / sum(rec["loss_mask"]), key)
                          for key, rec in recs.items() if key[0] == step)
        assert {(s["rank"], s["index"]) for s in tr["samples"] if s["step"] == step} == {
            k[1:] for _, k in surprise[-4:]}
    # the HTML embeds the same numbers
    html = (tmp_path / "out" / "inspect-run-teacher.html").read_text()
    data = json.loads(re.search(r'<script id="whileai-data" type="application/json">(.*?)</script>',
                                html, re.S).group(1))  # type: ignore[union-attr]
    assert data["completions"][0]["tokens"] == page["completions"][0]["tokens"]


def test_pick_all_and_advantage(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "run", steps=2, ranks=1, sequences=4, method="grpo")
    with FakeTeacher() as server:
        r = inspect("--run", str(tmp_path / "run"), "--teacher-endpoint", f"vllm:{MODEL}@{server.url}",
                    "--pick", "advantage", "--per-step", "2", "-o", str(tmp_path / "adv"))
        assert r.exit_code == 0, r.output
        r = inspect("--run", str(tmp_path / "run"), "--teacher-endpoint", f"vllm:{MODEL}@{server.url}",
                    "--pick", "all", "-o", str(tmp_path / "all"))
        assert r.exit_code == 0, r.output
    recs = records(tmp_path / "run")
    adv = json.loads((tmp_path / "adv" / "inspect-run.json").read_text())["teacher"]["samples"]
    for s in adv:
        lowest = sorted(r["advantages"][-1] for k, r in recs.items() if k[0] == s["step"])[:2]
        assert s["picked_by"] == pytest.approx(recs[(s["step"], s["rank"], s["index"])]["advantages"][-1])
        assert s["picked_by"] <= lowest[-1]
    every = json.loads((tmp_path / "all" / "inspect-run.json").read_text())["teacher"]["samples"]
    assert len(every) == len(recs)


def test_teacher_from_the_runs_own_config(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "run", steps=1, ranks=1, sequences=2)
    with FakeTeacher() as server:
        (tmp_path / "run" / "configs").mkdir()
        (tmp_path / "run" / "configs" / "orchestrator.json").write_text(json.dumps(
            {"algo": {"type": "opd", "teacher": {"name": MODEL, "base_url": server.url,
                                                 "api_key_var": "VLLM_API_KEY"}}}))
        r = inspect("--run", str(tmp_path / "run"), "--teacher", "-o", str(tmp_path / "out"))
        assert r.exit_code == 0, r.output
        assert server.params[0]["prompt_logprobs"] == 1 and server.scored == 2 + 2  # scan, then shown
    tr = json.loads((tmp_path / "out" / "inspect-run.json").read_text())["teacher"]
    assert tr["teacher"]["url"] == server.url and tr["teacher"]["model"] == MODEL


def _refused(tmp_path: Path, *args: str) -> str:
    r = inspect("--run", str(tmp_path / "run"), "-o", str(tmp_path / "out"), *args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert not (tmp_path / "out").exists()
    return lines[0]


def test_unreachable_slow_and_wrong_tokenizer_teachers_each_one_line_exit_2(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "run", steps=1, ranks=1, sequences=2)
    url = refused_url()
    line = _refused(tmp_path, "--teacher-endpoint", f"vllm:{MODEL}@{url}")
    assert "--teacher-endpoint" in line and "127.0.0.1" in line and "unreachable" in line
    with FakeTeacher(slow=3.0) as slow:
        line = _refused(tmp_path, "--teacher-endpoint", f"vllm:{MODEL}@{slow.url}", "--timeout", "0.5")
        assert f"{slow.url.removesuffix('/v1')}/tokenize answered nothing within 0.5 s" in line
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    train_bpe(mine, TEXTS * 3, vocab=300)
    train_bpe(theirs, [t[::-1] for t in TEXTS] * 3, vocab=280)
    with FakeTeacher(theirs) as other:
        line = _refused(tmp_path, "--teacher-endpoint", f"vllm:{MODEL}@{other.url}", "--tokenizer", str(mine))
        assert "tokenizer differs from the run's" in line and other.scored == 0
    with FakeTeacher(mine) as same:  # the same tokenizer passes the check
        r = inspect("--run", str(tmp_path / "run"), "--teacher-endpoint", f"vllm:{MODEL}@{same.url}",
                    "--tokenizer", str(mine), "-o", str(tmp_path / "ok"))
        assert r.exit_code == 0, r.output
    note = json.loads((tmp_path / "ok" / "inspect-run.json").read_text())["teacher"]["tokenizer_note"]
    assert note.startswith("same ids")
    with FakeTeacher(fail_after=1) as dying:  # fails mid-run: still one line, nothing written
        line = _refused(tmp_path, "--teacher-endpoint", f"vllm:{MODEL}@{dying.url}")
        assert "/inference/v1/generate answered HTTP 500" in line and "CUDA out of memory" in line
    line = _refused(tmp_path, "--teacher-endpoint", url)  # a bare URL: no model name to send
    assert "vllm:<served model>@<url>" in line
    line = _refused(tmp_path, "--teacher-endpoint", f"vllm:{MODEL}@{url}", "--pick", "best")
    assert "--pick" in line
    for flag, value in (("--pick", "all"), ("--per-step", "3")):  # no teacher: it would do nothing
        line = _refused(tmp_path, flag, value)
        assert flag in line and "--teacher-endpoint" in line and value in line, line


def tiny(folder: Path, seed: int) -> Any:
    """A random tiny Qwen3 saved with a BPE tokenizer in `folder`; the model returned."""
    torch = pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch")
    transformers = pytest.importorskip("transformers")
    train_bpe(folder, TEXTS * 3, vocab=300)
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>"}))
    torch.manual_seed(seed)
    cfg = transformers.Qwen3Config(vocab_size=400, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                   max_position_embeddings=256)
    net = transformers.Qwen3ForCausalLM(cfg).eval()
    net.save_pretrained(folder)
    return net


def test_local_teacher_equals_a_direct_transformers_computation(tmp_path: Path) -> None:
    import torch

    teacher, student = tiny(tmp_path / "teacher", 0), tiny(tmp_path / "student", 1)
    gen.write_run(tmp_path / "run", steps=2, ranks=1, sequences=3, vocab=384, completion=20)
    r = inspect("--run", str(tmp_path / "run"), "--local-teacher", str(tmp_path / "teacher"),
                "--local-student", str(tmp_path / "student"), "--device", "cpu",
                "--per-step", "2", "-o", str(tmp_path / "ok"))
    assert r.exit_code == 0, r.output
    recs = records(tmp_path / "run")
    run = json.loads((tmp_path / "ok" / "inspect-run.json").read_text())
    page = json.loads((tmp_path / "ok" / "inspect-run-teacher.json").read_text())
    assert page["definitions"]["full_kl_available"] is True
    n = 0
    for s in run["teacher"]["samples"]:
        rec = recs[(s["step"], s["rank"], s["index"])]
        ids = rec["token_ids"]
        with torch.no_grad():
            t_lp, s_lp = (torch.log_softmax(m(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
                          for m in (teacher, student))
        want = expected(rec, lambda i, tid, lp=t_lp: float(lp[i - 1, tid]))
        kl = (s_lp.exp() * (s_lp - t_lp)).sum(-1)  # KL(student‖teacher) predicting position i at row i - 1
        want_kl = [float(kl[i - 1]) for i in range(1, len(ids)) if rec["loss_mask"][i]]
        assert s["stats"]["mean_signal"] == pytest.approx(sum(want) / len(want), abs=1e-5)
        assert s["stats"]["mean_full_kl"] == pytest.approx(sum(want_kl) / len(want_kl), abs=1e-5)
        if s["shown"] is not None:
            toks = page["completions"][s["shown"]]["tokens"]
            for t, w, k in zip(toks, want, want_kl, strict=True):
                assert abs(t["signal"] - w) <= 1e-5 and abs(t["full_kl"] - k) <= 1e-5
                n += 1
    assert n > 0
    # a local student with an endpoint teacher is refused: the full KL needs both distributions
    line = _refused(tmp_path, "--local-student", str(tmp_path / "student"), "--teacher-endpoint",
                    f"vllm:{MODEL}@{refused_url()}")
    assert "--local-student" in line
