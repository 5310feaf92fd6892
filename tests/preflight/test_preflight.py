"""`whileai preflight` against real HTTP servers on 127.0.0.1, each broken one way: every probe
ends in its one-line cause within the timeout; a healthy server passes every probe in < 2 s."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeServer, Silent, refused_url
from helpers import TEMPLATE, save_tokenizer
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.preflight.report import PreflightReport
from whileai.preflight.run import preflight

pytest.importorskip("tokenizers", reason="the trl extra (pip install -e '.[trl]'): tokenizers")
pytest.importorskip("jinja2", reason="jinja2 (with the trl extra): chat templates")

STUDENT, TEACHER = "org/student", "org/teacher"
TIMEOUT = 3.0


@pytest.fixture
def tok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The student's tokenizer in a local HF cache (as the hub lays it out); returns its folder."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    return save_tokenizer(tmp_path / "hub" / "models--org--student" / "snapshots" / "r1")


def opd(url: str, tmp_path: Path, **fields: Any) -> wai.RunSpec:
    return wai.RunSpec(taskset="reverse-text", model=STUDENT, output_dir=str(tmp_path / "out"),
                       method=wai.OPD(wai.Endpoint(url=url, model=TEACHER)), **fields)


def checks(report: PreflightReport, part: str) -> list[Any]:
    return [c for c in report.checks if c.name.endswith(part) and "teacher" in c.name]


def timed(run: wai.RunSpec, **kw: Any) -> tuple[PreflightReport, float]:
    start = time.monotonic()
    report = preflight(run, timeout=TIMEOUT, **kw)
    return report, time.monotonic() - start


def only_failure(report: PreflightReport) -> str:
    fails = [c for c in report.checks if c.status == "FAIL"]
    assert len(fails) == 1, [c.line() for c in fails]
    assert report.exit_code == 1
    line = fails[0].line()
    assert "\n" not in line
    return line


def test_a_healthy_server_passes_every_probe_in_under_two_seconds(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok) as server:
        report, took = timed(opd(server.url, tmp_path))
    assert report.probe_seconds < 2.0 and took < TIMEOUT + 1, (report.probe_seconds, took)
    teacher = {c.name.rsplit(": ", 1)[1]: c for c in report.checks if "teacher" in c.name}
    assert set(teacher) == {"reachable", "model", "context", "tokenizer", "scoring route"}
    assert all(c.status == "ok" for c in teacher.values()), [c.line() for c in teacher.values()]
    assert "one log-prob per prompt token" in teacher["scoring route"].detail
    assert "chat-templated conversation" in teacher["tokenizer"].detail
    assert report.exit_code == 0 and not report.failed
    # prime-rl's calls, as made: /health and the model list by its admin client (no key set: no
    # Authorization), the route at the server root by its OpenAI client ("Bearer EMPTY")
    auth = {(m, p): a for m, p, a in server.requests}
    assert auth[("GET", "/health")] is None and auth[("GET", "/v1/models")] is None
    assert auth[("POST", "/inference/v1/generate")] == "Bearer EMPTY"


def test_connection_refused_names_how_to_serve_the_teacher(tok: Path, tmp_path: Path) -> None:
    report, took = timed(opd(refused_url(), tmp_path))
    line = only_failure(report)
    assert "reachable" in line and "connection refused" in line and "uv run inference" in line
    assert took < TIMEOUT + 1
    assert all(c.status == "skip" for c in checks(report, "scoring route"))


@pytest.mark.parametrize("cols", [60, 80, 120])
def test_the_printed_serve_line_pastes_whole_at_any_width(tok: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          cols: int) -> None:
    """The teacher's serve line, printed by `preflight` at a terminal's width, is the command
    compile plans (one plan per fact), broken only between shell words with ` \\`: the lines a
    person copies are one shell command with the same words, never prose wrapped mid-command."""
    import shlex

    spec = tmp_path / "s.toml"
    spec.write_text(f'taskset = "reverse-text"\nmodel = "{STUDENT}"\noutput_dir = "{tmp_path}/o"\n'
                    f'[method]\ntype = "opd"\nteacher = "vllm:{TEACHER}@{refused_url()}"\n')
    from whileai.spec.load import load_spec

    report = preflight(load_spec(spec), timeout=TIMEOUT)
    cmd = next(c.command for c in report.checks if c.command)
    monkeypatch.setenv("COLUMNS", str(cols))
    shown = runner.invoke(app, ["preflight", str(spec), "--timeout", "2"]).stdout.splitlines()
    start = next(i for i, line in enumerate(shown) if line.endswith("serve it:")) + 1
    block = []
    for line in shown[start:]:
        block.append(line)
        if not line.endswith(" \\"):
            break
    assert all(len(line) <= cols for line in block if len(shlex.split(line.rstrip(" \\"))) > 1)
    pasted = "".join(line[:-1] if line.endswith("\\") else line for line in block)
    assert shlex.split(pasted) == shlex.split(cmd)
    assert "uv run inference" in cmd and "--vllm.max-model-len" in cmd


def test_a_server_that_accepts_and_never_answers_ends_within_the_timeout(tok: Path, tmp_path: Path) -> None:
    with Silent() as silent:
        report, took = timed(opd(silent.url, tmp_path))
    line = only_failure(report)
    assert "accepted the connection but sent no answer" in line
    assert TIMEOUT - 0.5 < took < TIMEOUT + 1, took


def test_a_slow_trickle_ends_within_the_timeout(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="trickle") as server:
        report, took = timed(opd(server.url, tmp_path))
    line = only_failure(report)
    assert "still arriving" in line and "too slow" in line
    assert took < TIMEOUT + 1, took


def test_404_on_the_scoring_route_is_not_prime_rls_inference_server(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="no-generate") as server:
        report, _ = timed(opd(server.url, tmp_path))
    line = only_failure(report)
    assert "scoring route" in line and "HTTP 404" in line
    # what serves the route, and compile's own serve line for this teacher
    assert "prime-rl's `inference` serves it, and so does vLLM from 0.26 on" in line
    assert "CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model org/teacher" in line
    assert "--vllm.gpu-memory-utilization 0.4 --vllm.max-model-len 10241" in line


def test_the_wrong_model_names_what_the_server_serves(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="wrong-model") as server:
        report, _ = timed(opd(server.url, tmp_path))
    line = only_failure(report)
    assert "'someone/else'" in line and "not 'org/teacher'" in line and "method.teacher.model" in line


def test_a_short_context_names_the_runs_sequence_length(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="short-context") as server:
        report, _ = timed(opd(server.url, tmp_path, prompt_tokens=1024))
    line = only_failure(report)
    # the compiled file's seq_len: prompt_tokens + OPD's default max_tokens 8192; the fix is
    # compile's serve line, at seq_len + 1
    assert "max_model_len 1024 <= the run's 9216 tokens" in line and "--vllm.max-model-len 9217" in line


def test_401_names_the_key_variable_and_never_prints_a_key(tok: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-preflight-test-0123456789abcdef"
    with FakeServer(TEACHER, tok, key=secret) as server:
        report, _ = timed(opd(server.url, tmp_path))
        line = only_failure(report)
        assert "HTTP 401" in line and "VLLM_API_KEY is not set" in line
        monkeypatch.setenv("VLLM_API_KEY", "sk-wrong-key-abcdefabcdef0123")
        wrong = only_failure(preflight(opd(server.url, tmp_path), timeout=TIMEOUT))
        assert "refused the key in $VLLM_API_KEY" in wrong and "sk-wrong" not in wrong
        monkeypatch.setenv("VLLM_API_KEY", secret)
        good = preflight(opd(server.url, tmp_path), timeout=TIMEOUT)
    assert good.exit_code == 0, good.lines()
    assert secret not in json.dumps(good.to_dict()) and secret not in "\n".join(good.lines())


def test_malformed_json_is_not_a_vllm_server(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="not-json") as server:
        report, _ = timed(opd(server.url, tmp_path))
    line = only_failure(report)
    assert "'<html>It works!</html>'" in line and "not an OpenAI model list" in line


def test_a_different_tokenizer_is_a_note_not_a_failure(tok: Path, tmp_path: Path) -> None:
    """The run never calls /tokenize: prime-rl would start, so preflight says it and passes."""
    other = save_tokenizer(tmp_path / "other", texts=["completely other words", "zebra 9999 quux"])
    with FakeServer(TEACHER, other) as server:
        report, _ = timed(opd(server.url, tmp_path))
    (check,) = checks(report, "tokenizer")
    assert check.status == "note" and "tokenizes the probe text differently" in check.detail
    assert report.exit_code == 0 and "1 note" in report.summary()


def test_a_different_chat_template_is_a_note(tok: Path, tmp_path: Path) -> None:
    other = save_tokenizer(tmp_path / "other", template=TEMPLATE.replace("<|im_start|>{{", "<|im_start|> {{"))
    with FakeServer(TEACHER, other) as server:
        report = preflight(opd(server.url, tmp_path), timeout=TIMEOUT)
    (check,) = checks(report, "tokenizer")
    assert check.status == "note" and "chat template renders the probe conversation" in check.detail
    assert "prime-rl's scoring is token-in" in check.detail  # the target's words (its probes)
    assert report.exit_code == 0, report.lines()


def test_a_tokenize_500_is_a_note(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="tokenize-500") as server:
        report = preflight(opd(server.url, tmp_path), timeout=TIMEOUT)
    (check,) = checks(report, "tokenizer")
    assert check.status == "note" and "HTTP 500" in check.detail and "never calls /tokenize" in check.detail
    assert report.exit_code == 0, report.lines()


def test_a_context_of_exactly_seq_len_fails_a_scoring_teacher(tok: Path, tmp_path: Path) -> None:
    """vLLM refuses a prompt of max_model_len tokens when it must generate one: prime-rl's
    scoring call (max_tokens 1) on a full sequence would crash the run."""
    seq = 1024 + 8192
    with FakeServer(TEACHER, tok, max_model_len=seq) as server:
        line = only_failure(preflight(opd(server.url, tmp_path, prompt_tokens=1024), timeout=TIMEOUT))
    assert f"max_model_len {seq} <= the run's {seq} tokens" in line and "max_tokens 1" in line
    with FakeServer(TEACHER, tok, max_model_len=seq + 1) as server:
        assert preflight(opd(server.url, tmp_path, prompt_tokens=1024), timeout=TIMEOUT).exit_code == 0


def test_health_503_then_200_is_waited_for_as_prime_rls_client_does(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, not_ready=3) as server:
        report = preflight(opd(server.url, tmp_path), timeout=TIMEOUT)
    (check,) = checks(report, "reachable")
    assert check.status == "ok" and "of HTTP 503" in check.detail and "1800 s" in check.detail
    assert report.exit_code == 0, report.lines()
    with FakeServer(TEACHER, tok, not_ready=10_000) as server:
        line = only_failure(preflight(opd(server.url, tmp_path), timeout=TIMEOUT))
    assert "HTTP 503" in line and "not ready" in line and "wait_for_ready_timeout" in line


def test_a_required_header_is_sent_as_the_run_sends_it(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, header=("X-Route", "r1")) as server:
        line = only_failure(preflight(opd(server.url, tmp_path), timeout=TIMEOUT))
        assert "reachable" in line and "HTTP 400" in line
        run = opd(server.url, tmp_path, overrides={"orchestrator.algo.teacher.headers": {"X-Route": "r1"}})
        report = preflight(run, timeout=TIMEOUT)
    assert report.exit_code == 0, report.lines()


def test_skip_model_check_is_honoured(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok, fault="wrong-model") as server:
        run = opd(server.url, tmp_path, overrides={"orchestrator.algo.teacher.skip_model_check": True})
        report = preflight(run, timeout=TIMEOUT)
    (model,) = checks(report, "model")
    assert model.status == "skip" and "skip_model_check" in model.detail
    # the scoring call still names the model, and this server serves another: that FAILs
    assert "scoring route" in only_failure(report)


def test_no_local_student_tokenizer_is_a_skip_with_the_reason(tok: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    with FakeServer(TEACHER, tok) as server:
        report = preflight(opd(server.url, tmp_path), timeout=TIMEOUT)
    (check,) = checks(report, "tokenizer")
    assert check.status == "skip" and "not on this machine" in check.detail and report.exit_code == 0


def test_sft_teacher_probes_the_sampling_route(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok) as server:
        run = wai.RunSpec(taskset="reverse-text", model=STUDENT, output_dir=str(tmp_path / "o"),
                          method=wai.SFT(wai.Endpoint(url=server.url, model=TEACHER)))
        report = preflight(run, timeout=TIMEOUT)
    (route,) = checks(report, "sampling route")
    assert route.status == "ok" and "sampled" in route.detail, route.line()


def test_each_stage_and_each_source_has_its_teacher_probed(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok) as one, FakeServer("org/other-0.5B", tok, fault="no-generate") as two:
        staged = wai.RunSpec(
            taskset="reverse-text", model=STUDENT, lora=False, output_dir=str(tmp_path / "o"),
            method=wai.SFT(wai.Endpoint(url=one.url, model=TEACHER)),
            then={"method": {"type": "opd", "teacher": f"vllm:org/other-0.5B@{two.url}"}})
        report = preflight(staged, timeout=TIMEOUT)
        assert [c.name for c in report.checks if c.status == "ok" and "route" in c.name] == \
            [f"stage 1 teacher {TEACHER} @ {one.url}: sampling route"]
        assert "stage 2 teacher org/other-0.5B" in only_failure(report)
        mixed = opd(one.url, tmp_path, sources=[{"taskset": "reverse-text", "name": "b", "method": {
            "type": "opd", "teacher": f"vllm:org/other-0.5B@{two.url}"}}])
        report = preflight(mixed, timeout=TIMEOUT)
    line = only_failure(report)
    assert "teacher (source b) org/other-0.5B" in line and "scoring route" in line


def test_trl_server_mode_student_endpoint_and_an_in_process_teacher(tok: Path, tmp_path: Path) -> None:
    with FakeServer(STUDENT, tok) as server, FakeServer(STUDENT, tok, fault="no-generate") as bare, \
            FakeServer(TEACHER, tok) as teacher:
        report = preflight(opd("http://localhost:8001/v1", tmp_path), target="trl",
                           student_endpoint=server.url.removesuffix("/v1"), timeout=TIMEOUT)
        assert any(c.name.endswith(": endpoint") and "in-process" in c.detail for c in report.checks)
        route = next(c for c in report.checks if c.name.startswith("student endpoint") and
                     c.name.endswith("generation route"))
        assert route.status == "ok" and "TRL's VLLMClient" in route.detail
        assert ("GET", "/health") in [(m, p) for m, p, _ in server.requests]
        # prime-rl's student server is asked the prime-rl way
        report = preflight(opd(teacher.url, tmp_path), student_endpoint=bare.url, timeout=TIMEOUT)
    assert "student endpoint org/student" in only_failure(report)


def test_prime_rl_checkout_at_the_pin(tok: Path, tmp_path: Path) -> None:
    from whileai.preflight import machine
    from whileai.targets.prime_rl.compile import COMMIT
    from whileai.targets.registry import get

    pin = get("prime-rl").machine(opd("http://localhost:8001/v1", tmp_path), []).checkout
    assert pin is not None and pin.commit == COMMIT and pin.name == "prime-rl"
    assert machine.checkout(None, pin, time.monotonic() + 5).status == "skip"
    bad = machine.checkout(str(tmp_path), pin, time.monotonic() + 5)
    assert bad.status == "FAIL" and "git clone" in bad.detail
    repo = tmp_path / "prime-rl"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-C", str(repo)]
    repo.mkdir()
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "pyproject.toml").write_text("[project]\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    other = machine.checkout(str(repo), pin, time.monotonic() + 5)
    assert other.status == "FAIL" and f"is at {head[:7]}" in other.detail
    assert f"git -C {repo} checkout {COMMIT}" in other.detail
    assert machine.checkout(str(repo), pin._replace(commit=head), time.monotonic() + 5).status == "ok"
    (repo / "pyproject.toml").write_text("[project]\nname = 'changed'\n")
    dirty = machine.checkout(str(repo), pin._replace(commit=head), time.monotonic() + 5)
    assert dirty.status == "FAIL" and "local changes" in dirty.detail


def test_disk_estimate_counts_checkpoints_copies_and_rollouts() -> None:
    from whileai.preflight.machine import disk_estimate

    est = disk_estimate(8.0, lora=False, checkpoints=2, copies=2, tokens_per_step=1000, steps_kept=9,
                        copies_are="weight broadcast(s)")
    assert est is not None
    assert est.bytes == pytest.approx(2 * (16e9 + 96e9) + 2 * 16e9 + 9 * 1000 * 16)
    assert "2 weight broadcast(s)" in est.parts and "rollouts of 9 step(s)" in est.parts
    bare = disk_estimate(8.0, lora=False, checkpoints=1, copies=0, tokens_per_step=1, steps_kept=0)
    assert bare is not None and bare.parts == "1 checkpoint(s) 112.0 GB"  # no part that is none
    unknown = disk_estimate(None, lora=True, checkpoints=1, copies=1, tokens_per_step=1, steps_kept=1)
    assert unknown is None


runner = CliRunner()


def test_cli_exit_codes_one_line_each_and_json(tok: Path, tmp_path: Path) -> None:
    with FakeServer(TEACHER, tok) as server:
        spec = tmp_path / "s.toml"
        spec.write_text(f'taskset = "reverse-text"\nmodel = "{STUDENT}"\noutput_dir = "{tmp_path}/o"\n'
                        f'[method]\ntype = "opd"\nteacher = "vllm:{TEACHER}@{server.url}"\n')
        good = runner.invoke(app, ["preflight", str(spec), "--timeout", "3"])
        as_json = runner.invoke(app, ["preflight", str(spec), "--json", "--timeout", "3"])
    assert good.exit_code == 0, good.stdout
    assert good.stdout.splitlines()[0].startswith("ok   teacher org/teacher")
    data = json.loads(as_json.stdout)
    assert data["ok"] is True and {c["status"] for c in data["checks"]} <= {"ok", "skip"}
    assert data["target"] == "prime-rl" and "backend" not in data
    down = runner.invoke(app, ["preflight", str(spec), "--timeout", "2"])  # the server is gone
    assert down.exit_code == 1 and "FAIL teacher" in down.stdout
    for args in (["--student-endpoint", "ftp://nowhere"], ["--timeout", "0"], ["--backend", "x"]):
        bad = runner.invoke(app, ["preflight", str(spec), *args])
        assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1, (args, bad.stderr)
        assert "Traceback" not in bad.stderr + bad.stdout
    spec.write_text("taskset = 3\n")
    bad = runner.invoke(app, ["preflight", str(spec)])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: taskset")


def test_the_recipes_gate_each_arm(tok: Path, tmp_path: Path) -> None:
    from whileai.preflight.gate import gate

    said: list[str] = []
    arms = {"opd": wai.compile(opd("http://localhost:8001/v1", tmp_path)),
            "opd@2": wai.compile(opd("http://localhost:8001/v1", tmp_path))}
    # the prime-rl recipe on Modal: each container serves its own local teacher
    assert gate(arms, "prime-rl", where="modal", say=said.append)
    assert sum("served inside each arm's Modal container" in s for s in said) == 1  # repeats: once
    # the TRL recipe: in-process models from local folders, on the CPU
    for name in ("student", "teacher"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.json").write_text("{}")
        (folder / "model.safetensors").write_bytes(b"\0" * 4096)
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model=str(tmp_path / "teacher"))
    run = wai.RunSpec(taskset="reverse-text", model=str(tmp_path / "student"),
                      output_dir=str(tmp_path / "o"), method=wai.OPD(teacher))
    said.clear()
    assert gate({"opd": wai.compile(run, "trl", cpu=True)}, "trl", cpu=True, say=said.append), said
    memory = next(s for s in said if "machine: memory" in s)
    assert memory.startswith("ok") and "this machine's RAM" in memory and "its weight files" in memory
    (tmp_path / "teacher" / "config.json").unlink()
    said.clear()
    assert not gate({"opd": wai.compile(run, "trl", cpu=True)}, "trl", cpu=True, say=said.append)
    assert any(s.startswith("FAIL machine: teacher model") and "no model folder" in s for s in said)
    assert said[-1].startswith("preflight failed") and "--no-preflight" in said[-1]


def test_gpus_and_gpu_memory_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in nvidia-smi on PATH that prints what the real one prints for one 80 GB GPU."""
    from whileai.preflight import machine

    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text('#!/bin/sh\nif [ "$1" = "-L" ]; then echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)"; '
                   'else echo "81559"; fi\n')
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}:/usr/bin:/bin")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    soon = time.monotonic() + 5
    assert machine.gpus(1, "on this node", soon).status == "ok"
    short = machine.gpus(2, "on this node", soon)
    assert short.status == "FAIL" and "1 GPU(s) visible" in short.detail and "needs 2" in short.detail
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    hidden = machine.gpus(1, "on this node", soon)
    assert hidden.status == "FAIL" and "0 GPU(s) visible" in hidden.detail
    assert machine.gpus(8, "x", soon, cpu=True).status == "skip"
    big = machine.memory("org/model-70B", "org/teacher-8B", soon, cpu=False)
    assert big.status == "FAIL" and "85.5 GB on the smallest GPU here" in big.detail
    assert machine.memory("org/model-7B", "org/teacher-8B", soon, cpu=False).status == "ok"
    monkeypatch.setenv("PATH", "/nonexistent")
    assert machine.gpus(1, "on this node", soon).status == "FAIL"  # no GPU where the run trains
    assert machine.gpus(1, "on this node", soon, away="on the login node").status == "skip"


def test_admin_base_url_is_where_health_and_the_model_list_are_asked(tok: Path, tmp_path: Path) -> None:
    """prime-rl's admin client calls admin_base_url (then the router at the base URL) for
    /health and /v1/models; scoring still goes to the base URL."""
    gone = refused_url()
    with FakeServer(TEACHER, tok) as base, FakeServer(TEACHER, tok) as admin:
        run = opd(base.url, tmp_path, overrides={"orchestrator.algo.teacher.admin_base_url": [admin.url]})
        report = preflight(run, timeout=TIMEOUT)
        assert report.exit_code == 0, report.lines()
        assert ("GET", "/v1/models") in [(m, p) for m, p, _ in admin.requests]
        assert ("GET", "/health") in [(m, p) for m, p, _ in base.requests]  # the router, too
        assert ("POST", "/inference/v1/generate") in [(m, p) for m, p, _ in base.requests]
        away = opd(base.url, tmp_path, overrides={"orchestrator.algo.teacher.admin_base_url": [gone]})
        line = only_failure(preflight(away, timeout=TIMEOUT))
    assert "reachable" in line and gone.removesuffix("/v1") + "/health" in line
