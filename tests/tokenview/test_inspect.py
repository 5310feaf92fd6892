"""`whileai inspect` without models: statistics, prompts and hints, the page, bad input (exit 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.spec.load import load_spec
from whileai.tokenview import data, stats
from whileai.tokenview.document import (
    Completion,
    Definitions,
    InspectReport,
    Method,
    Prompt,
    Settings,
    Side,
    Token,
)
from whileai.tokenview.page import render, shown


def tok(i: int, signal: float, full: float | None = None, rank: int | None = 1) -> Token:
    return Token(id=i, text=f"t{i}", student_logprob=-1.0, teacher_logprob=-1.0 - signal, signal=signal,
                 full_kl=full, teacher_rank=rank, teacher_top=[])


def test_top_share_is_the_top_one_percent_of_positive_mass() -> None:
    assert stats.top_share([]) is None and stats.top_share([-1.0, 0.0]) is None
    assert stats.top_share([3.0, 1.0, -5.0]) == pytest.approx(0.75)  # 1 token of 3; negatives count 0
    values = [10.0] * 2 + [1.0] * 198  # 200 tokens: the top 1% is 2 tokens
    assert stats.top_share(values) == pytest.approx(20 / 218)


def test_stats_of_a_completion() -> None:
    toks = [tok(1, 0.5, 0.2, rank=1), tok(2, -0.1, 0.1, rank=9), tok(3, 0.2, 0.3, rank=None)]
    s = stats.stats(toks, top_k=5)
    assert s.tokens == 3 and s.mean_signal == pytest.approx(0.2) and s.sum_signal == pytest.approx(0.6)
    assert s.mean_full_kl == pytest.approx(0.2) and s.top1_share_full_kl == pytest.approx(0.5)
    assert s.teacher_top_k_hit == pytest.approx(1 / 3)
    assert stats.stats([tok(1, 0.5)], 5).mean_full_kl is None  # any missing full_kl: none at all


def test_positions_and_top_tokens() -> None:
    assert [stats.bin_width(n) for n in (1, 16, 17, 40, 100, 1000, 5000)] == [1, 1, 2, 4, 10, 100, 400]
    empty = stats.stats([], 5)
    comps = [Completion(prompt=0, sample=0, text="", finished=True,
                        tokens=[tok(7, 1.0), tok(8, 0.1), tok(7, 3.0)], stats=empty),
             Completion(prompt=0, sample=1, text="", finished=False, tokens=[tok(8, 0.4)], stats=empty)]
    bins = stats.by_position(comps)
    assert [(b.start, b.tokens) for b in bins] == [(0, 2), (1, 1), (2, 1)]
    assert bins[0].mean_signal == pytest.approx(0.7)
    top = stats.top_tokens(comps)
    assert [(r.id, r.count) for r in top] == [(7, 2), (8, 2)]
    assert top[0].sum_signal == pytest.approx(4.0)
    assert (top[0].worst.completion, top[0].worst.position) == (0, 2)


def test_opsd_hint_follows_the_trl_form() -> None:
    chat = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert data.with_hint(chat, "H") == [{"role": "system", "content": "S"},
                                         {"role": "user", "content": "U\n\nH"}]
    assert data.with_hint("Q", "H") == "Q\n\nH"
    assert data.lookup({"info": {"answer": "in info"}, "answer": "top"}, "answer") == "in info"
    assert data.stringify([{"role": "assistant", "content": "a"}, {"content": "b"}]) == "a\nb"
    t = data.task(3, {"prompt": "Q", "answer": 5}, ("answer", "see: {demonstration}"))
    assert (t.teacher_prompt, t.privileged) == ("Q\n\nsee: 5", "5")
    with pytest.raises(SpecError, match="method.privileged"):
        data.task(0, {"prompt": "Q"}, ("answer", "{demonstration}"))


def test_prompts_come_from_the_spec_data_reproducibly() -> None:
    run = load_spec(EXAMPLES / "own-data" / "opsd.toml")
    picked = data.sample(run, 3, seed=1, split="train", privileged=("answer", "{demonstration}"))
    assert [t.row for t in picked] == [t.row for t in data.sample(run, 3, seed=1, split="train",
                                                                  privileged=("answer", "{demonstration}"))]
    assert len(picked) == 3 and all(t.privileged and t.privileged in str(t.teacher_prompt) for t in picked)
    built_in = data.sample(load_spec(EXAMPLES / "opd.toml"), 2, seed=0, split="holdout", privileged=None)
    assert all(t.prompt == t.teacher_prompt and isinstance(t.prompt, list) for t in built_in)


def report_with(text: str) -> InspectReport:
    side = Side(role="student", kind="local", model="m", url=None, api_key_env=None, logprobs="forward pass",
                full_distribution=True)
    toks = [Token(id=1, text=text, student_logprob=-0.1, teacher_logprob=-2.0, signal=1.9, full_kl=0.4,
                  teacher_rank=3, teacher_top=[]), tok(2, -0.2, 0.1)]
    comp = Completion(prompt=0, sample=0, text=text, finished=True, tokens=toks, stats=stats.stats(toks, 5))
    return InspectReport(
        whileai="0", spec="s.toml", taskset="reverse-text",
        method=Method(type="opd", sampler="student", teacher_context="same"),
        student=side, teacher=side.model_copy(update={"role": "teacher"}),
        settings=Settings(prompts=1, samples=1, max_tokens=4, temperature=1.0, top_k=5, seed=0, split="train",
                          data="d"),
        definitions=Definitions(full_kl_available=True, full_kl_note="local"), tokenizer_check=None,
        tokenizer_note="n", overall=comp.stats, by_position=stats.by_position([comp]),
        top_tokens=stats.top_tokens([comp]),
        prompts=[Prompt(index=0, row=0, prompt="p", privileged=None, student_context="p", teacher_context="p",
                        student_context_ids=[1], teacher_context_ids=[1])],
        completions=[comp], timings={"load": 0, "generate": 0, "score": 0, "total": 0})


def test_token_text_is_shown_on_one_line() -> None:
    assert shown("a\nb\t\x01\\xc6 ü") == "a\\nb\\t\\x01\\xc6 ü"


def test_page_is_self_contained_and_escapes_token_text() -> None:
    page = render(report_with("</script><img src=x onerror=alert(1)>"))
    assert page.count("</script>") == 2  # the data block and the page's own script, nothing injected
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page) and "<link" not in page
    assert "default-src 'none'" in page  # the browser may fetch nothing
    blob = page.split('<script id="whileai-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(blob)["completions"][0]["tokens"][0]["text"].startswith("</script>")
    for words in ("log p_sampler(x_t) − log p_other(x_t)", "Most disagreed-with tokens", "By position"):
        assert words in page


runner = CliRunner()
HEAD = 'taskset = "reverse-text"\nmodel = "m/student"\n'
OPD = '[method]\ntype = "opd"\nteacher = "vllm:m/teacher@http://127.0.0.1:9/v1"\n'


def run(tmp_path: Path, body: str, *args: str, head: str = HEAD) -> tuple[int, str, str]:
    spec = tmp_path / "s.toml"
    spec.write_text(head + body)
    r = runner.invoke(app, ["inspect", str(spec), "-o", str(tmp_path / "out"), *args], env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


BAD = [
    ('[method]\ntype = "grpo"\n', [], ["method.type", "'grpo'", "opd, opsd"]),
    (OPD, [], ["--local-student", "--student-endpoint"]),
    (OPD, ["--local-student", "a", "--student-endpoint", "http://h:1/v1"], ["either --local-student"]),
    ('[method]\ntype = "opsd"\n', ["--local-student", "a", "--local-teacher", "b"],
     ["--local-teacher", "no teacher flag for opsd"]),
    (OPD, ["--student-endpoint", "localhost:8000"], ["--student-endpoint", "http(s)://host"]),
    (OPD, ["--local-student", "a", "--split", "test"], ["--split", "train or holdout"]),
    (OPD, ["--local-student", "a", "--device", "tpu"], ["--device", "'tpu'", "cuda:N"]),
    (OPD, ["--student-endpoint", "http://127.0.0.1:9/v1"], ["--student-endpoint", "unreachable"]),
    (OPD, ["--local-student", "."], ["method.teacher", "unreachable"]),  # before any model loads
    # a local model that is not there: its own flag, before the teacher's endpoint is called
    (OPD, ["--local-student", "no/such-model"], ["--local-student", "not in the local Hugging Face cache"]),
    (OPD, ["--student-endpoint", "http://h:1/v1", "--student-api-key-env", "sk-abcdefghijk"],
     ["--student-api-key-env", "NAME of an environment variable"]),
]


@pytest.mark.parametrize("body,args,words", BAD, ids=[w[0] for *_, w in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, body: str, args: list[str],
                                                         words: list[str]) -> None:
    code, stdout, stderr = run(tmp_path, body, *args)
    assert code == 2, stdout + stderr
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "Traceback" not in stderr
    for w in words:
        assert w in line, (w, line)
    assert not (tmp_path / "out").exists()


def test_a_taskset_without_local_data_asks_for_data(tmp_path: Path) -> None:
    code, _, stderr = run(tmp_path, OPD, "--student-endpoint", "http://127.0.0.1:9/v1",
                          head='taskset = "primeintellect/wordle"\nmodel = "m/student"\n')
    assert code == 2 and "taskset" in stderr and 'data = "tasks.jsonl"' in stderr
    assert "unreachable" not in stderr


@pytest.mark.parametrize("flag", ["--local-student", "--local-teacher"])
def test_a_local_model_that_is_not_there_is_blamed_on_its_own_flag(
        flag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--local-student /nonexistent` names --local-student, before any model loads or the spec's
    teacher endpoint is called (it blamed the teacher's endpoint, opened first)."""
    from whileai.tokenview import app as inspect_app

    def opened(*a: object, **k: object) -> None:
        raise AssertionError("a model was opened before the local path was checked")

    monkeypatch.setattr(inspect_app, "open_model", opened)
    missing = str(tmp_path / "nonexistent")
    argv = ["inspect", str(EXAMPLES / "opd.toml"), flag, missing, "-o", str(tmp_path / "out")]
    if flag == "--local-teacher":
        argv += ["--local-student", str(tmp_path)]  # a folder: the student's check passes
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"error: {flag}: ") and "no such folder" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    # a hub id that is not in the local cache: the same flag, before anything loads
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    r = CliRunner().invoke(app, [*argv[:3], "nobody/no-such-model", *argv[4:]])
    assert r.exit_code == 2 and r.stderr.startswith(f"error: {flag}: ") and "cache" in r.stderr
