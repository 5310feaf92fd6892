"""`whileai inspect --run`: prime-rl's token exports read step by step (whileai.tokenview.exports,
runsummary, runpage). Exports come from prime-rl's own exporter at the pin where its source tree
is on the machine (tests/tokenview/pin_exporter.py) and from tests/tokenview/token_export_gen.py,
which writes the same layout without prime-rl."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import token_export_gen as gen
from pin_exporter import load, micro_batch, pin
from typer.testing import CliRunner

from whileai.cli.app import app
from whileai.cli.schemas import generate
from whileai.errors import SpecError
from whileai.tokenview import exports
from whileai.tokenview.runsummary import summarise


def _pin_run(tmp: Path) -> tuple[Path, dict[int, list[tuple[Any, Any]]]]:
    """Three steps of two ranks through the pin's TokenExporter; STABLE on steps 0 and 1 only
    (the trainer 'stopped' inside step 2). Returns the run dir and each step's micro-batches."""
    root = pin()
    if root is None:
        pytest.skip("WHILEAI_PRIME_RL_PIN is not set: a prime-rl source tree at the pin "
                    "(git archive 559b447; docs/loader-env.md says what the environment holds)")
    pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch")
    m = load(root)
    batches: dict[int, list[tuple[Any, Any]]] = {}
    exporters = [m.TokenExporter(tmp, rank=r) for r in range(2)]
    for step in range(3):
        for rank, ex in enumerate(exporters):
            for micro in range(2):
                b, o = micro_batch(100 * step + 10 * rank + micro, [20, 26], 6, opd=True,
                                   env="reverse-text", pad=5)
                ex.export(step, micro, b, o, [20, 31], m.DefaultLossConfig())
                batches.setdefault(step, []).append((b, o))
        if step < 2:
            for ex in exporters:
                ex.mark_stable()
    return tmp, batches


def test_the_pins_own_exports_are_read_and_summed_right(tmp_path: Path) -> None:
    run, batches = _pin_run(tmp_path)  # skips without the pin's tree or torch
    import torch

    report = summarise(run)
    assert report.reading.steps_read == [0, 1] and report.reading.steps_unstable == [2]
    assert report.reading.ranks == 2 and report.reading.records == 16  # 2 ranks x 2 micro x 2 seqs
    assert report.reading.torn_lines == report.reading.invalid_lines == 0
    assert report.signal_name == "nll"  # the pin exports no ref_logprobs
    for s in report.steps:
        mask = torch.cat([b["loss_mask"][0] for b, _ in batches[s.step]])
        lp = torch.cat([o["logprobs"][0] for _, o in batches[s.step]])
        inf = torch.cat([b["inference_logprobs"][0] for b, _ in batches[s.step]])
        ent = torch.cat([o["entropy"][0] for _, o in batches[s.step]])
        log_r = lp - inf
        mkl = torch.exp(log_r) - log_r - 1
        masked = (torch.exp(lp) - torch.exp(inf)) < -0.2  # OPD: advantage 0 -> the low side
        assert s.trained_tokens == int(mask.sum()) and s.sequences == 8
        assert s.mean_signal == pytest.approx(float(-lp[mask].mean()), rel=1e-5)
        assert s.mean_mismatch_kl == pytest.approx(float(mkl[mask].mean()), rel=1e-4)
        assert s.mean_entropy == pytest.approx(float(ent[mask].mean()), rel=1e-5)
        assert s.masked_fraction == pytest.approx(float(masked[mask].float().mean()))
        assert s.mean_advantage == 0.0
    assert report.shown is not None and report.shown.step == 1 and report.shown.sequences_total == 8


def test_the_generator_writes_the_pins_layout(tmp_path: Path) -> None:
    """Same keys, same order, same padding-free sequences as the pin's exporter."""
    run, _ = _pin_run(tmp_path / "pin")
    theirs = json.loads((run / "token_exports/step_0/rank_0.jsonl").read_text().splitlines()[0])
    gen.write_run(tmp_path / "gen", steps=1, ranks=1, sequences=1)
    ours = json.loads((tmp_path / "gen/token_exports/step_0/rank_0.jsonl").read_text())
    assert list(ours) == list(theirs) == [*exports.HEADER, *exports.COLUMNS]
    assert {k: type(v) for k, v in ours.items()} == {k: type(v) for k, v in theirs.items()}


def test_torn_and_invalid_lines_are_counted_never_fatal(tmp_path: Path) -> None:
    root = gen.write_run(tmp_path, steps=2, ranks=2, sequences=3)
    f = root / "step_1/rank_1.jsonl"
    good = f.read_text().splitlines()
    rec = json.loads(good[0])
    bad_value = dict(rec, trainer_logprobs=["x"] * len(rec["token_ids"]))
    short = dict(rec, entropy=rec["entropy"][:-1])
    lines = [*good, "not json", json.dumps(dict(rec, schema_version=2)), json.dumps(short),
             json.dumps(bad_value), json.dumps(dict(rec, step=0)), "[1, 2]"]
    f.write_text("\n".join(lines) + "\n" + good[0][: len(good[0]) // 2])  # a torn last line
    report = summarise(tmp_path)
    rd = report.reading
    assert rd.torn_lines == 1 and rd.invalid_lines == 6
    assert rd.records == 12  # every good line of both steps
    assert any("schema_version 2" in e for e in rd.problem_examples)
    assert any("entropy is not a list" in e for e in rd.problem_examples)
    assert "skipped 1 torn and 6 invalid" in " ".join(report.notes)


def test_steps_window_and_unstable_steps(tmp_path: Path) -> None:
    gen.write_run(tmp_path, steps=10, ranks=1, sequences=1, stable=[0, 1, 2, 3, 4, 5, 6, 8])
    assert exports.parse_steps("2:8:3") == (2, 8, 3) and exports.parse_steps("::5") == (None, None, 5)
    report = summarise(tmp_path, window=exports.parse_steps("2:8:2"))
    assert report.reading.steps_read == [2, 4, 6, 8] and report.reading.steps_unstable == []
    report = summarise(tmp_path, window=exports.parse_steps("5:"))
    assert report.reading.steps_read == [5, 6, 8] and report.reading.steps_unstable == [7, 9]
    assert "left out, no STABLE marker" in report.notes[0] and report.notes[0].endswith(": steps 7, 9")
    for bad in ("a:b", "1:2:3:4", "3:1", "::0"):
        with pytest.raises(SpecError, match="--steps"):
            exports.parse_steps(bad)


def test_signal_falls_and_hot_tokens_stay_high(tmp_path: Path) -> None:
    """The generator's student grows surer step by step except on ids 17 and 42."""
    gen.write_run(tmp_path, steps=6, ranks=2, sequences=6, completion=80, envs=("a", "b"))
    report = summarise(tmp_path)
    means = [s.mean_signal for s in report.steps]
    assert all(x is not None for x in means) and means == sorted(means, reverse=True)  # type: ignore[type-var]
    assert {r.id for r in report.top_tokens[:2]} == {17, 42}
    assert report.top_tokens[0].steps_high == 6
    assert sorted(report.by_env) == ["a", "b"]
    for env_rows in report.by_env.values():
        assert [s.step for s in env_rows] == list(range(6))
    total = sum(s.trained_tokens for s in report.steps)
    assert total == sum(s.trained_tokens for rows in report.by_env.values() for s in rows)


def test_teacher_logprobs_when_an_export_carries_them(tmp_path: Path) -> None:
    """A later exporter may add ref_logprobs: then the signal is log p_student − log p_teacher."""
    root = gen.write_run(tmp_path, steps=1, ranks=1, sequences=2)
    f = root / "step_0/rank_0.jsonl"
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    for r in recs:
        r["ref_logprobs"] = [t - 0.5 if t is not None else None for t in r["trainer_logprobs"]]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    report = summarise(tmp_path)
    assert report.signal_name == "reverse_kl"
    assert report.steps[0].mean_signal == pytest.approx(0.5)


def test_cli_writes_page_and_json_that_match_the_schema(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "outputs/run-a", steps=3, ranks=2, sequences=2, envs=("x", "y"))
    out = tmp_path / "view"
    r = CliRunner().invoke(app, ["inspect", "--run", str(tmp_path / "outputs"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads((out / "inspect-run.json").read_text())
    jsonschema.Draft202012Validator(generate("inspect-run")).validate(data)
    page = (out / "inspect-run.html").read_text()
    assert "written by whileai inspect" in page and "<script src" not in page and "<link" not in page
    assert data["reading"]["exports"].endswith("run-a/token_exports")
    assert "mean signal" in r.output and "wrote" in r.output


@pytest.mark.parametrize("args, field", [
    (["--run", "{tmp}/nothing"], "--run"),
    (["--run", "{tmp}/empty"], "--run"),
    (["--run", "{tmp}/run", "--steps", "9:1"], "--steps"),
    (["--run", "{tmp}/run", "--tokenizer", "{tmp}/no-tokenizer"], "--tokenizer"),
    (["--run", "{tmp}/run", "--show-step", "7"], "--show-step"),
    (["examples/opd.toml", "--run", "{tmp}/run"], "--run"),
    ([], "missing argument SPEC"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, args: list[str], field: str) -> None:
    (tmp_path / "empty").mkdir()
    gen.write_run(tmp_path / "run", steps=2, ranks=1, sequences=1)
    out = tmp_path / "out"
    argv = ["inspect", *[a.format(tmp=tmp_path) for a in args], "-o", str(out)]
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}"), r.output
    assert not out.exists()


def test_tokens_are_decoded_with_a_local_tokenizer(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers", reason="the trl extra (pip install -e '.[trl]'): tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {f"w{i}": i for i in range(400)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    (tmp_path / "tok").mkdir()
    tok.save(str(tmp_path / "tok/tokenizer.json"))
    gen.write_run(tmp_path / "run", steps=2, ranks=1, sequences=2)
    out = tmp_path / "view"
    r = CliRunner().invoke(app, ["inspect", "--run", str(tmp_path / "run"), "--tokenizer",
                                 str(tmp_path / "tok"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads((out / "inspect-run.json").read_text())
    seq = data["shown"]["sequences"][0]
    assert all(t["text"] == f"w{t['id']}" for t in seq["shown"])
    assert data["top_tokens"][0]["text"] == f"w{data['top_tokens'][0]['id']}"
    assert not any("not decoded" in n for n in data["notes"])


def test_floats_survive_as_the_exporter_wrote_them(tmp_path: Path) -> None:
    """Non-finite values are null in the export (allow_nan=False): they are left out of means."""
    root = gen.write_run(tmp_path, steps=1, ranks=1, sequences=1)
    f = root / "step_0/rank_0.jsonl"
    rec = json.loads(f.read_text())
    first = rec["loss_mask"].index(True)
    rec["entropy"][first] = None
    f.write_text(json.dumps(rec) + "\n")
    s = summarise(tmp_path).steps[0]
    kept = [x for x, m in zip(rec["entropy"], rec["loss_mask"], strict=True) if m and x is not None]
    assert s.mean_entropy == pytest.approx(math.fsum(kept) / len(kept))


def test_memory_is_bounded_by_a_step_not_the_run(tmp_path: Path) -> None:
    """Four times the steps, the same peak: records are folded into per-step totals as they
    stream (benchmarks/bench_inspect_run.py measures the real 300 MB case)."""
    import tracemalloc

    def peak(steps: int) -> int:
        run = tmp_path / f"run{steps}"
        gen.write_run(run, steps=steps, ranks=2, sequences=30, completion=120, vocab=5000, hot=())
        tracemalloc.start()
        report = summarise(run)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert report.reading.records == steps * 60
        return top

    few, many = peak(3), peak(12)
    step_bytes = sum(p.stat().st_size for p in (tmp_path / "run3/token_exports/step_0").glob("*.jsonl"))
    assert many < few * 1.3, (few, many)
    assert many < 20 * step_bytes  # a step's values and the shown step, not the run's 12 steps


def test_wrapped_summary_lines_hang_under_their_text(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "run", steps=2, ranks=1, sequences=1)
    r = CliRunner().invoke(app, ["inspect", "--run", str(tmp_path / "run"), "-o", str(tmp_path / "out")],
                           env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("step "))  # the table's header
    assert lines[0].startswith("inspect --run:") and str(tmp_path / "run") in "".join(lines[:head])
    rest = lines[1:head] + lines[head + 1:]
    assert all(line.startswith(" ") for line in rest), lines  # once at column 0
    assert all(len(line) <= 80 or " " not in line.strip() for line in rest)  # a long path runs past
    notes = [i for i, line in enumerate(lines) if line.startswith("  note: ")]
    assert notes and lines[notes[0] + 1].startswith("    ")  # a note's second line, indented


def test_no_teacher_log_probs_is_said_once(tmp_path: Path) -> None:
    gen.write_run(tmp_path / "outputs/run-a", steps=2, ranks=1, sequences=2)
    r = CliRunner().invoke(app, ["inspect", "--run", str(tmp_path / "outputs"), "-o", str(tmp_path / "v")])
    assert r.exit_code == 0, r.output
    assert " ".join(r.output.split()).count("no teacher log-probs") == 1


def test_the_summary_counts_one_step_and_one_sequence_in_the_singular(tmp_path: Path) -> None:
    from io import StringIO

    from rich.console import Console

    from whileai.tokenview.runapp import print_run_summary

    gen.write_run(tmp_path, steps=1, ranks=1, sequences=1)
    out = StringIO()
    print_run_summary(summarise(tmp_path), [], Console(file=out, width=200))
    assert "(1 step, 1 sequence," in out.getvalue(), out.getvalue()
