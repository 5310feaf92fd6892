"""whileai rehearse without the rehearsal environment: the stand-in servers answer the requests
recorded from real rehearsals (tests/fixtures/rehearse/, scripts/gen_rehearse_fixture.py) with
responses of the recorded shapes; the offline copy replaces only what it names; the inputs come
from whileai's run lines; the supervisor stops every process by the deadline; the verdict
quotes the recorded causes; bad input is one line, exit 2."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES, ROOT
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.errors import SpecError
from whileai.rehearse import verdict
from whileai.rehearse.supervise import Supervisor, busy
from whileai.spec.load import load_spec, loads_toml
from whileai.targets.prime_rl.rehearse import inputs, logs, offline, scope
from whileai.targets.prime_rl.rehearse.standins import inference as inf

FIX = Path(__file__).parents[1] / "fixtures" / "rehearse"
CALLS: dict[str, dict[str, Any]] = json.loads((FIX / "calls.json").read_text())
CAUSES: dict[str, dict[str, Any]] = json.loads((FIX / "causes.json").read_text())


def _server(
    tmp_path: Path, admin: bool, model: str, max_len: int | None = None
) -> tuple[ThreadingHTTPServer, Any]:
    state = inf.State(
        model,
        max_len,
        512,
        2,
        lambda ids: "user\nhello there<|im_end|>",
        lambda text: [3 + (ord(c) % 500) for c in text],
        tmp_path,
    )
    handler = type("H", (inf.Handler,), {"state": state, "admin": admin})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, state


GETS = ("/health", "/v1/models", "/metrics")


def _call(port: int, route: str, body: Any) -> tuple[int, Any]:
    """GET for the read routes, POST (with the body, `{}` for none) for the rest."""
    data = None if route in GETS else json.dumps({} if body is None else body).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{route}",
        data=data,
        headers={"Content-Type": "application/json"},
        method="GET" if data is None else "POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read().decode()
            return r.status, json.loads(raw) if r.headers.get("Content-Type") == "application/json" else raw
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def _keys(shape: Any) -> Any:
    """A shape's structure: dict keys all the way down (values' types may vary by call)."""
    if isinstance(shape, dict):
        return {k: _keys(v) for k, v in shape.items()}
    if isinstance(shape, list) and len(shape) > 1:
        return [_keys(shape[1])]
    return None


def test_fixture_covers_every_route_the_orchestrator_called() -> None:
    routes = {c["route"] for c in CALLS.values()}
    assert routes >= {
        "/health",
        "/v1/models",
        "/inference/v1/generate",
        "/v1/chat/completions",
        "/load_lora_adapter",
        "/update_weights",
        "/pause",
        "/resume",
        "/metrics",
    }, routes
    teacher = [c for c in CALLS.values() if c["port"] == 8001 and c["route"] == "/inference/v1/generate"]
    assert teacher and teacher[0]["example"]["sampling_params"]["prompt_logprobs"] == 1


@pytest.mark.parametrize("key", sorted(CALLS))
def test_stand_in_answers_recorded_request_with_recorded_shape(tmp_path: Path, key: str) -> None:
    c = CALLS[key]
    admin = c["port"] in (8100, 8001)
    model = (c["example"] or {}).get("model") if isinstance(c["example"], dict) else None
    srv, state = _server(tmp_path, admin=admin, model=model or "m")
    body = c["example"]
    if c["route"] in ("/update_weights", "/load_lora_adapter") and isinstance(body, dict):
        body = {**body, **{k: str(tmp_path) for k in ("weight_dir", "lora_path") if k in body}}
        written(tmp_path)
    if c["route"] == "/inference/v1/generate" and isinstance(body, dict):
        state.adapters[str(body.get("model"))] = str(tmp_path)
    try:
        status, got = _call(srv.server_address[1], c["route"], body)
    finally:
        srv.shutdown()
    assert status == c["status"], got
    if status < 400 and isinstance(got, dict):
        assert _keys(inf.shape(got)) == _keys(c["response"])


def test_generate_refuses_an_unknown_model_and_out_of_vocabulary_tokens(tmp_path: Path) -> None:
    srv, _ = _server(tmp_path, admin=True, model="teacher/T", max_len=64)
    port = srv.server_address[1]
    try:
        sp = {"max_tokens": 4, "logprobs": 1}
        assert (
            _call(
                port,
                "/inference/v1/generate",
                {"model": "teacher/X", "token_ids": [1], "sampling_params": sp},
            )[0]
            == 404
        )
        status, body = _call(
            port, "/inference/v1/generate", {"model": "teacher/T", "token_ids": [600], "sampling_params": sp}
        )
        assert status == 400 and "out of vocabulary" in body["error"]["message"]
        status, body = _call(
            port,
            "/inference/v1/generate",
            {"model": "teacher/T", "token_ids": [1] * 65, "sampling_params": sp},
        )
        assert status == 400 and "maximum context length of 64" in body["error"]["message"]
        status, body = _call(
            port,
            "/inference/v1/generate",
            {"model": "teacher/T", "token_ids": [1, 2, 3], "sampling_params": {**sp, "stop_token_ids": [7]}},
        )
        choice = body["choices"][0]
        assert len(choice["token_ids"]) == len(choice["logprobs"]["content"]) <= 4
        assert all(
            e["token"] == f"token_id:{t}"
            for e, t in zip(choice["logprobs"]["content"], choice["token_ids"], strict=True)
        )
    finally:
        srv.shutdown()


def written(folder: Path) -> None:
    """A broadcast folder as the trainer stand-in writes it: weights and an adapter."""
    from whileai.targets.prime_rl.rehearse.standins import trainer

    trainer.safetensors(folder / "model.safetensors")
    trainer.safetensors(folder / "adapter_model.safetensors")
    (folder / "adapter_config.json").write_text(json.dumps({"r": 8, "lora_alpha": 16}))


def _gen(port: int, n: int, **sp: Any) -> tuple[int, Any]:
    return _call(port, "/inference/v1/generate", {"model": "T", "token_ids": [1] * n, "sampling_params": sp})


def test_the_prompt_length_rule_is_vllms_with_prime_rls_patch(tmp_path: Path) -> None:
    """patches.py:475-500 refuses only a prompt longer than max_model_len; vLLM's engine refuses
    one of exactly max_model_len (no room for a token); below it, max_tokens is cut to the room
    left, and unset it is the room left."""
    srv, _ = _server(tmp_path, admin=True, model="T", max_len=64)
    port = srv.server_address[1]
    try:
        assert _gen(port, 65, max_tokens=1)[0] == 400
        status, body = _gen(port, 64, max_tokens=1, prompt_logprobs=1)
        assert status == 400
        assert "plus the number of requested output tokens (at least 1)" in body["error"]["message"]
        status, body = _gen(port, 63, max_tokens=1, prompt_logprobs=1)  # prime-rl's scoring call
        assert status == 200 and len(body["prompt_logprobs"]) == 63
        status, body = _gen(port, 60, max_tokens=50)  # not refused: capped at the context
        assert status == 200 and len(body["choices"][0]["token_ids"]) <= 4
        status, body = _gen(port, 10)  # max_tokens unset: the room left, not 16
        assert status == 200 and len(body["choices"][0]["token_ids"]) <= 54
    finally:
        srv.shutdown()


def test_weights_and_adapters_are_opened_as_the_real_loaders_open_them(tmp_path: Path) -> None:
    srv, _ = _server(tmp_path, admin=True, model="T")
    port = srv.server_address[1]
    empty, good = tmp_path / "empty", tmp_path / "good"
    empty.mkdir()
    good.mkdir()
    written(good)
    try:
        status, body = _call(port, "/update_weights", {"weight_dir": str(empty)})
        assert status == 500 and "Cannot find any model weights" in body["detail"]
        (empty / "model.safetensors").write_text("not safetensors")
        status, body = _call(port, "/update_weights", {"weight_dir": str(empty)})
        assert status == 500 and "is not a safetensors file" in body["detail"]
        assert _call(port, "/update_weights", {"weight_dir": str(good)}) == (200, {"status": "ok"})
        status, body = _call(port, "/load_lora_adapter", {"lora_name": "a", "lora_path": str(empty)})
        assert status == 400 and "No adapter found" in body["error"]["message"]
        lora = {"lora_name": "a", "lora_path": str(good)}
        assert _call(port, "/load_lora_adapter", lora)[0] == 200
        assert _call(port, "/load_lora_adapter", lora)[0] == 200  # prime-rl's route: load_inplace
        status, body = _call(port, "/v1/load_lora_adapter", lora)  # vLLM's own refuses a reload
        assert status == 400 and "already been loaded" in body["error"]["message"]
        assert _call(port, "/v1/load_lora_adapter", {**lora, "load_inplace": True})[0] == 200
        status, text = _call(port, "/metrics", None)
        assert status == 200 and "# TYPE vllm:kv_cache_usage_perc gauge" in text
        assert 'vllm:cache_config_info{block_size="16"' in text
    finally:
        srv.shutdown()


def test_router_port_refuses_admin_routes(tmp_path: Path) -> None:
    srv, _ = _server(tmp_path, admin=False, model="m")
    try:
        assert _call(srv.server_address[1], "/pause", {})[0] == 404
        assert _call(srv.server_address[1], "/health", None)[0] == 200
    finally:
        srv.shutdown()


def _doc(spec: str, *sets: str) -> dict[str, Any]:
    from whileai.spec.load import parse_sets

    return loads_toml(wai.compile(load_spec(EXAMPLES / spec, parse_sets(list(sets))), "prime-rl").text)


def test_offline_copy_replaces_only_what_it_names(tmp_path: Path) -> None:
    doc = _doc("opd.toml")
    plan = offline.offline_copy(
        doc, steps=2, where=tmp_path, model_dir=tmp_path / "tiny", data_dir=tmp_path / "rows", vocab=512
    )
    d = plan.doc
    assert d["model"]["name"] == str(tmp_path / "tiny") and d["max_steps"] == 2
    assert d["orchestrator"]["algo"]["teacher"]["name"] == doc["orchestrator"]["algo"]["teacher"]["name"]
    assert d["orchestrator"]["algo"]["teacher"]["base_url"] == "http://localhost:8001/v1"
    assert (
        d["seq_len"] == doc["seq_len"]
        and d["orchestrator"]["group_size"] == doc["orchestrator"]["group_size"]
    )
    assert d["orchestrator"]["model"]["lora"] == doc["orchestrator"]["model"]["lora"]
    assert d["orchestrator"]["batch_size"] == 2 * doc["orchestrator"]["group_size"]
    opd = ["ref_kl_weights", "ref_logprobs"]  # the ref_kl term's weights and target (loss.py)
    assert plan.expect["needs"] == {"*": opd, "reverse-text": opd}
    changed = {s.key for s in plan.subs}
    assert "orchestrator.algo.teacher.wait_for_ready_timeout" in changed and "model.name" in changed
    assert doc["model"]["name"] == "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"  # the input is untouched


def _spec_doc(tmp_path: Path, text: str) -> dict[str, Any]:
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return loads_toml(wai.compile(load_spec(p), "prime-rl").text)


def _plan(tmp_path: Path, doc: dict[str, Any]) -> offline.OfflineCopy:
    return offline.offline_copy(doc, steps=2, where=tmp_path, model_dir=tmp_path / "tiny",
                                data_dir=tmp_path / "rows", vocab=512)


def _spec(taskset: str = "reverse-text", model: str = "Qwen/Qwen3-0.6B", method: str = "grpo") -> str:
    return (f'taskset = "{taskset}"\nmodel = "{model}"\nsteps = 10\nprompts = 16\n'
            f'[method]\ntype = "{method}"\n')


def test_offline_copy_refuses_a_taskset_that_reads_a_hub_dataset(tmp_path: Path) -> None:
    doc = _doc("grpo.toml")
    doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] = "alphabet-sort"
    with pytest.raises(SpecError, match="kalomaze/alphabetic-arxiv-authors-it1") as e:
        _plan(tmp_path, doc)
    assert e.value.field == "orchestrator.train.source[reverse-text].env.taskset.id"
    assert "\n" not in str(e.value) and "wiki-search" in str(e.value)


def test_a_taskset_that_reads_no_hub_data_runs_as_it_is(tmp_path: Path) -> None:
    """kuhn-poker deals from seeds (no data) and yields two trainable traces per episode: the
    rehearsal's batch is whole groups counted in traces, as whileai's seats count them."""
    doc = _spec_doc(tmp_path, _spec("kuhn-poker"))
    assert doc["orchestrator"]["batch_size"] == 16 * 8 * 2
    plan = _plan(tmp_path, doc)
    assert [(s["taskset"], s["how"]) for s in plan.sources] == [("kuhn-poker", "as-is")] * 2
    assert plan.doc["orchestrator"]["batch_size"] == 2 * 8 * 2 and plan.expect["traces_per_episode"] == [2]
    ts = plan.doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]
    assert ts == doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]  # untouched
    assert not any("taskset" in s.key for s in plan.subs)
    assert scope.how("wordle") == scope.how("owner/some-env@0.1") == "as-is"


def test_the_ok_verdict_states_the_seat_and_batch_arithmetic(tmp_path: Path) -> None:
    """The trainer stand-in counts what arrived against the plan and the verdict says the sum:
    kuhn-poker's two seats per hand, a mixture's groups per source."""
    from whileai.targets.prime_rl.rehearse.standins import trainer

    poker = _plan(tmp_path, _spec_doc(tmp_path, _spec("kuhn-poker")))
    line = trainer.plan_line(poker.expect)
    assert line == "2 prompts x 8 samples x 2 traces per episode = 32 traces"
    (tmp_path / "calls").mkdir()
    (tmp_path / "trainer-steps.jsonl").write_text("".join(
        json.dumps({"step": i, "t": 10.0 * i, "samples": 32, "plan": line}) + "\n" for i in (1, 2)))
    v = logs.read(tmp_path, steps=2, rc=0, seconds=3.0, policy_ports={8000}, teacher_ports=set())
    assert v.ok and v.summary == f"ok: 2 steps in 3 s; samples per step 32, 32 for {line}"
    assert trainer.check_step(1, 31, True, poker.expect) == (
        f"step 1: 31 samples arrived, fewer than the plan's {line}: the batch is not what compile "
        "promised")
    mix = _plan(tmp_path / "mix", _doc("mixtures/grpo-opd.toml", "orchestrator.group_size=1",
                                       "orchestrator.train.source[1].group_size=1"))
    assert trainer.plan_line(mix.expect) == ("2 prompts x 1 sample per source x (1+1) traces per "
                                             "episode over 2 sources = 4 traces")


def test_gsm8k_reads_local_rows_cached_under_its_hub_id(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _doc("tasksets/gsm8k-opd.toml"))
    assert {s["how"] for s in plan.sources} == {"cached"}
    assert any(s.key.endswith("env.taskset (openai/gsm8k)") for s in plan.subs)
    [spec] = scope.cache_spec(plan.sources)
    assert (spec["dataset"], spec["config"]) == ("openai/gsm8k", "main")
    assert set(spec["splits"]) == {"train", "test"}
    for row in spec["splits"]["train"]:
        assert set(row) == {"question", "answer"}
        steps, final = row["answer"].rsplit("\n", 1)
        assert final.startswith("#### ") and final[5:] == steps.split("=")[-1].split(">>")[-1].split()[0]
    scope.write_rows(plan.sources)  # nothing to write as JSON lines: gsm8k takes no dataset argument
    assert not (tmp_path / "rows").exists()


@pytest.mark.parametrize("model, fam, model_type", [
    ("Qwen/Qwen3-0.6B", "qwen3", "qwen3"),  # the qwen3 renderer
    ("meta-llama/Llama-3.2-1B-Instruct", "llama", "llama"),  # the llama-3 renderer
    ("meta-llama/Llama-3.1-8B-Instruct", "llama", "llama"),  # default: its own chat template
    ("Qwen/Qwen2.5-1.5B-Instruct", "qwen2", "qwen2"),
    ("google/gemma-2-2b-it", "generic", "gemma2"),
    ("someone/unknown-7b", "generic", "llama"),
])
def test_the_stand_in_family_follows_the_renderer_and_the_name(
    tmp_path: Path, model: str, fam: str, model_type: str
) -> None:
    doc = _spec_doc(tmp_path, _spec(model=model))
    got = scope.stand_in(doc)
    assert (got.name, got.model_type) == (fam, model_type)
    line = next(s.line() for s in _plan(tmp_path, doc).subs if s.key == "model.name")
    assert f"a tiny {fam} model" in line


def test_a_typed_renderer_without_a_stand_in_is_refused(tmp_path: Path) -> None:
    doc = _doc("grpo.toml")
    doc["orchestrator"]["renderer"]["name"] = "glm-4.5"  # a typed renderer: GLM's own tokens
    with pytest.raises(SpecError, match="glm-4.5 renderer") as e:
        scope.stand_in(doc)
    assert e.value.field == "orchestrator.renderer.name" and "\n" not in str(e.value)


@pytest.mark.parametrize("fam, model_type, tokens", [
    ("qwen3", "qwen3", ["<|im_start|>", "<|im_end|>", "<think>", "</think>"]),
    ("qwen2", "qwen2", ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]),
    ("llama", "llama", ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                        "<|eom_id|>", "<|end_of_text|>"]),
    ("generic", "gemma2", ["<|user|>", "<|assistant|>", "<|end|>"]),
])
def test_the_tiny_model_has_its_familys_tokens_and_config(
    tmp_path: Path, fam: str, model_type: str, tokens: list[str]
) -> None:
    pytest.importorskip("tokenizers", reason="the trl extra (pip install -e '.[trl]'): tokenizers")
    transformers = pytest.importorskip("transformers",
                                       reason="the trl extra (pip install -e '.[trl]'): transformers")
    from whileai.vocab import tiny

    facts = tiny.stand_in(tmp_path, fam, ["hello world", "reverse the text"] * 20, model_type)
    tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    for t in tokens:  # each one token, as the renderer looks it up
        assert t in tok.get_vocab()
        assert len(tok.encode(t, add_special_tokens=False)) == 1
    chat = [{"role": "user", "content": "hi"}]
    text = tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert tok.eos_token in text and "hi" in text
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["model_type"] == model_type == facts["model_type"]
    assert type(transformers.AutoConfig.from_pretrained(str(tmp_path))).__name__.lower().startswith(
        model_type.split("_")[0])
    assert "<think>" not in tok.get_vocab() or fam == "qwen3"


def test_mixture_batch_covers_every_source(tmp_path: Path) -> None:
    plan = offline.offline_copy(
        _doc("mixtures/grpo-opd.toml"),
        steps=2,
        where=tmp_path,
        model_dir=tmp_path,
        data_dir=tmp_path / "rows",
        vocab=512,
    )
    assert plan.expect["train_sources"] == 2 and plan.expect["batch_size"] == 16 * 2
    assert [s["name"] for s in plan.sources if s["split"] == "train"] == [
        "reverse-text-grpo",
        "reverse-text-opd",
    ]


def test_inputs_take_teachers_from_the_run_lines() -> None:
    c = wai.compile(load_spec(EXAMPLES / "sft.toml"), "prime-rl")
    (stage,) = inputs.from_compiled(c)
    assert stage.serve == [
        [
            "--vllm.model",
            "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL",
            "--server.port",
            "8001",
            "--vllm.gpu-memory-utilization",
            "0.4",
            "--vllm.max-model-len",
            "6144",
        ]
    ]
    assert stage.lines == [c.teachers[0].serve] and stage.lines[0].startswith("CUDA_VISIBLE_DEVICES=0 uv run")
    (bare,) = inputs.from_toml(c.text, "sft")
    assert bare.serve == [
        ["--vllm.model", "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL", "--server.port", "8001"]
    ]
    assert bare.notes and "--serve" in bare.notes[0]


def test_two_stage_inputs_carry_the_hand_off(tmp_path: Path) -> None:
    from rehearse_cases import TWO_STAGE

    p = tmp_path / "twostage.toml"
    p.write_text(TWO_STAGE)
    one, two = inputs.from_compiled(wai.compile(load_spec(p), "prime-rl"))
    assert one.handoff is None and two.handoff is not None and two.code and "STABLE" in two.code
    assert two.handoff[1].endswith("broadcasts/step_10")


def test_supervisor_stops_a_tree_that_ignores_sigterm(tmp_path: Path) -> None:
    code = (
        "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "c = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)']); "
        "open(sys.argv[1], 'w').write(str(c.pid)); time.sleep(600)"
    )
    t0 = time.monotonic()
    with Supervisor(time.monotonic() + 2, grace=1) as sup:
        rc = sup.run(
            "tree",
            [sys.executable, "-c", code, str(tmp_path / "child")],
            env=dict(os.environ),
            log=tmp_path / "tree.log",
        )
    assert rc is None and time.monotonic() - t0 < 15
    child = int((tmp_path / "child").read_text())
    time.sleep(0.3)
    try:  # gone, or a zombie its new parent has yet to reap: either way it runs no more
        state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("gone", "Z", "X"), state


def test_busy_port() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert busy(s.getsockname()[1])


@pytest.mark.parametrize("case", sorted(CAUSES))
def test_verdict_quotes_the_recorded_cause(tmp_path: Path, case: str) -> None:
    c = CAUSES[case]
    path = tmp_path / c["file"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(c["log"]) + "\n")
    (tmp_path / "rl.log").touch()
    v = logs.read(tmp_path, steps=2, rc=1, seconds=1.0, policy_ports={8000}, teacher_ports={8001})
    assert not v.ok and v.cause is not None
    assert (v.cause.file, v.cause.line) == (c["file"], c["line"]) and v.cause.text == c["text"]


def test_verdict_ok_with_step_facts(tmp_path: Path) -> None:
    (tmp_path / "calls").mkdir()
    (tmp_path / "trainer-steps.jsonl").write_text(
        "".join(json.dumps({"step": i, "t": 10.0 * i, "samples": 8}) + "\n" for i in (1, 2))
    )
    (tmp_path / "calls" / "8001.jsonl").write_text(
        json.dumps({"t": 5.0, "port": 8001, "route": "/inference/v1/generate", "status": 200}) + "\n"
    )
    v = logs.read(tmp_path, steps=2, rc=0, seconds=3.0, policy_ports={8000}, teacher_ports={8001})
    assert v.ok and [s["teacher_calls"] for s in v.steps] == [1, 0]


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["rehearse", str(EXAMPLES / "opd.toml"), "--python", str(tmp_path / "none")])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--python" in r.stderr, r.output
    r = CliRunner().invoke(app, ["rehearse"], env={"WHILEAI_REHEARSE_PYTHON": ""})
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    r = CliRunner().invoke(app, ["rehearse", "--setup", str(tmp_path)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--setup" in r.stderr, r.output
    cfg = tmp_path / "run.toml"
    cfg.write_text(wai.compile(load_spec(EXAMPLES / "opd.toml"), "prime-rl").text)
    r = CliRunner().invoke(app, ["rehearse", str(cfg), "--set", "seq_len=9"])
    assert r.exit_code == 2 and "--set" in r.stderr and r.stderr.count("\n") == 1, r.output


def test_rehearse_modules_import_no_torch() -> None:
    import subprocess

    code = (
        "import sys, whileai.cli.rehearse, whileai.targets.prime_rl.rehearse.run, whileai.rehearse.report; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'prime_rl'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_trainer_checks_each_micro_batch() -> None:
    torch = pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch")
    from whileai.targets.prime_rl.rehearse.standins import trainer

    n = 6
    mb = {"input_ids": torch.tensor([[1, 2, 3, 4, 5, 6]]), "position_ids": torch.arange(n)[None],
          "loss_mask": torch.tensor([[0, 0, 1, 1, 1, 1]]).bool(), "advantages": torch.zeros(1, n),
          "inference_logprobs": torch.zeros(1, n), "temperatures": torch.ones(1, n),
          "sequence_lengths": [2, 4], "ref_logprobs": None, "env_names": ["a"] * 2 + ["b"] * 4}
    expect = {"needs": {"*": [], "a": [], "b": ["ref_logprobs"]}}
    assert trainer.needed(expect, ["a"]) == [] and trainer.needed(expect, mb["env_names"]) == ["ref_logprobs"]
    assert trainer.check_micro_batch(mb, seq_len=8, vocab=10, needs=[]) == []
    problems = trainer.check_micro_batch(mb, seq_len=4, vocab=6, needs=["ref_logprobs"])
    assert problems == ["a packed micro batch holds 6 tokens, more than seq_len = 4",
                        "token id 6 is outside the vocabulary (size 6)",
                        "ref_logprobs is missing (the teacher's log-probs, the ref_kl term's target)"]


def test_the_trainer_fails_where_the_real_loss_would_drop_a_term() -> None:
    """loss.py runs no ce / ref_kl term when its weights are absent, and nothing trains when
    every advantage is 0: the stand-in fails there, and on a batch short of the plan's traces."""
    torch = pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch")
    from whileai.targets.prime_rl.rehearse import offline
    from whileai.targets.prime_rl.rehearse.standins import trainer

    assert offline._streams("sft") == ["ce_weights"] and offline._streams("grpo") == ["advantages"]
    assert offline._streams("opd") == ["ref_kl_weights", "ref_logprobs"]
    n = 4
    mb = {"input_ids": torch.tensor([[1, 2, 3, 4]]), "loss_mask": torch.tensor([[0, 1, 1, 1]]).bool(),
          "sequence_lengths": [4], "ce_weights": None, "ref_kl_weights": torch.zeros(1, n)}
    (missing,) = trainer.check_micro_batch(mb, seq_len=8, vocab=10, needs=["ce_weights"])
    assert "ce_weights is missing" in missing and "no ce term" in missing
    (zero,) = trainer.check_micro_batch(mb, seq_len=8, vocab=10, needs=["ref_kl_weights"])
    assert "ref_kl term would train nothing" in zero
    expect = {"batch_size": 32, "group_size": 2, "traces_per_episode": [2]}
    assert trainer.plan_line(expect) == "8 prompts x 2 samples x 2 traces per episode = 32 traces"
    short = trainer.check_step(1, 31, None, expect)
    assert short and "31 samples arrived" in short and "8 prompts x 2 samples x 2" in short
    assert trainer.check_step(1, 32, True, expect) is None
    flat = trainer.check_step(2, 32, False, expect)
    assert flat and "advantage is 0" in flat


def test_served_teachers_tokenizer_is_cached_under_its_id(tmp_path: Path) -> None:
    from whileai.targets.prime_rl.rehearse.prepare import hub_cache

    tiny = tmp_path / "tiny"
    tiny.mkdir()
    (tiny / "tokenizer.json").write_text("{}")
    assert hub_cache(tmp_path / "hf", ["Org/Teacher", "local-name"], tiny) == ["Org/Teacher"]
    repo = tmp_path / "hf" / "hub" / "models--Org--Teacher"
    assert (repo / "refs" / "main").read_text() == "rehearsal"
    assert (repo / "snapshots" / "rehearsal" / "tokenizer.json").exists()


def test_box_and_timeout_causes(tmp_path: Path) -> None:
    (tmp_path / "rl.log").write_text(
        "╭─ Config file error ─────╮\n│ Failed to validate config: │\n│ ────────── │\n"
        "│ --orchestrator.x.dataset-splt │\n│ Extra inputs are not permitted │\n╰──────╯\n")
    v = logs.read(tmp_path, steps=2, rc=1, seconds=1.0, policy_ports=set(), teacher_ports=set())
    assert v.cause == verdict.Cause("rl.log", 1, "Failed to validate config: --orchestrator.x.dataset-splt "
                                    "Extra inputs are not permitted")
    log = tmp_path / "o.log"
    log.write_text("10:00:00 WARNING not reached on http://localhost:8002\nTimeoutError: not ready\n")
    cause = verdict.first_exception(log, tmp_path)
    assert cause is not None and cause.text.endswith("(the last warning before it: not reached on "
                                                     "http://localhost:8002)")


def test_trainer_says_seq_len_cut_every_completion() -> None:
    from whileai.targets.prime_rl.rehearse.standins import trainer

    line = trainer.no_trainable(1, [{"sequence_lengths": [64]}, {"sequence_lengths": [64]}], 64)
    assert "seq_len = 64" in line and "too small" in line
    assert "seq_len" not in trainer.no_trainable(1, [{"sequence_lengths": [10]}], 64)


def test_cli_steps_and_timeout_are_one_line(tmp_path: Path) -> None:
    for flag, value in (("--steps", "0"), ("--timeout", "-1")):
        argv = ["rehearse", str(EXAMPLES / "opd.toml"), flag, value, "--python", sys.executable]
        r = CliRunner().invoke(app, argv)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and flag in r.stderr, r.output


def test_the_verdict_lines_fit_the_width_and_keep_every_word(monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai.cli.rehearse import _fit

    monkeypatch.setenv("COLUMNS", "80")
    lines = ["ok: opd: 2 steps in 151 s",
             "    step 1: samples 8, tokens 1024, trained tokens 284, micro batches 1, policy "
             "generations 9, teacher calls 8, adapters loaded 1, weight updates 0; sources reverse-text",
             "  replaced: orchestrator.concurrency.max_inflight: None -> 8 (a few rollouts at a time: "
             "each is a harness process on this CPU)"]
    out = _fit(lines)
    assert all(len(line) <= 80 for line in out) and len(out) > len(lines)
    assert " ".join(out).split() == " ".join(lines).split()  # wrapped, nothing lost
    assert out[1].startswith("    step 1: ") and out[2].startswith("        ")  # hanging indent


def test_setup_names_the_commits_and_the_tasksets_a_spec_needs(tmp_path: Path) -> None:
    """--setup says which prime-rl / verifiers commit the environment imports (a checkout not
    at the pin is a warning naming both), and which tasksets a spec trains and evaluates on."""
    import subprocess

    from whileai.targets.prime_rl.rehearse import env

    repo = tmp_path / "prime-rl"
    (repo / "prime_rl").mkdir(parents=True)
    (repo / "prime_rl" / "__init__.py").write_text("")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = env.commits({"prime_rl": str(repo / "prime_rl" / "__init__.py"), "verifiers": None})
    assert lines[0] == (f"warning: prime_rl is at {head[:7]}, not the pin 559b447: a rehearsal checks "
                        "the run against this other release, not the one whileai writes for")
    assert "verifiers: no git checkout" in lines[1] and "a60a606" in lines[1]
    c = wai.compile(load_spec(EXAMPLES / "opd.toml"), "prime-rl")
    assert env.taskset_modules([c.text]) == {"reverse_text": "reverse-text"}


def test_setup_names_the_install_line_of_each_taskset_a_spec_needs(tmp_path: Path) -> None:
    """`--setup DIR SPEC`: a plain `uv sync` installs no example taskset; each the spec trains or
    evaluates on that does not import is named with the line that installs it, and --setup fails."""
    from whileai.targets.prime_rl.rehearse import env

    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"  # answers env.PROBE as a 3.12 environment without gsm8k would
    python.write_text(f"#!{sys.executable}\nimport json, sys\nnames = sys.argv[3:]\n"
                      "print(json.dumps({'version': '3.12.1', 'site': %r, 'files': {}, 'missing': "
                      "{n: f\"ModuleNotFoundError: No module named '{n}'\" for n in names "
                      "if n == 'gsm8k'}}))\n" % str(tmp_path / "site"))
    python.chmod(0o755)
    for cmd in env.COMMANDS:
        (venv / "bin" / cmd).write_text("")
    (tmp_path / "site").mkdir()
    gsm8k = wai.compile(load_spec(EXAMPLES / "tasksets" / "gsm8k-opd.toml"), "prime-rl")
    need = env.taskset_modules([gsm8k.text])
    assert need == {"gsm8k": "gsm8k"}
    lines, ok = env.setup(tmp_path, tasksets=need)
    assert not ok
    (miss,) = [x for x in lines if x.startswith("missing:")]
    assert miss.startswith("missing: taskset gsm8k: ModuleNotFoundError: No module named 'gsm8k'")
    assert "`uv sync --all-packages`" in miss
    assert f"`uv pip install --python {python} -e deps/verifiers/environments/gsm8k`" in miss
    lines, ok = env.setup(tmp_path, tasksets={"reverse_text": "reverse-text"})
    assert ok and lines[-1].startswith("ok: ") and "1 taskset and" in lines[-1]


def test_setup_warns_when_the_harness_scripts_resolve_todays_releases() -> None:
    """verifiers' harness is a uv script with unpinned openai/httpx: without UV_EXCLUDE_NEWER it
    resolves today's releases (openai 3.63 broke every rollout at the pin); --setup says so."""
    from whileai.targets.prime_rl.rehearse import env

    unset = env.harness_line({})
    assert unset.startswith("warning: UV_EXCLUDE_NEWER is unset") and env.EXCLUDE_NEWER in unset
    assert "[orchestrator.env_vars]" in unset and "re-lock" in unset  # not before `uv run rl`
    held = env.harness_line({"UV_EXCLUDE_NEWER": env.EXCLUDE_NEWER})
    assert held.startswith("ok: UV_EXCLUDE_NEWER=2026-08-22")


@pytest.mark.parametrize("spec", ["grpo.toml", "opd.toml", "sft.toml", "mixtures/grpo-opd.toml"])
def test_the_compiled_run_holds_the_harness_to_the_pins_day(spec: str) -> None:
    """A real run meets the same uv script as the rehearsal: the compiled file hands
    UV_EXCLUDE_NEWER to the orchestrator and its env servers (rl.py passes orchestrator.env_vars to
    both, single- and multi-node), so the run line stays `uv run rl @ FILE` (the variable set
    before `uv run` re-locks prime-rl: uv resolves again when exclude-newer differs from the lock's)."""
    from whileai.targets.prime_rl.rehearse import env

    c = wai.compile(load_spec(EXAMPLES / spec), "prime-rl")
    doc = loads_toml(c.text)
    assert doc["orchestrator"]["env_vars"] == {"UV_EXCLUDE_NEWER": env.EXCLUDE_NEWER}
    assert all("UV_EXCLUDE_NEWER" not in line for line in c.commands)
    held = env.held_day([c.text])  # --setup DIR SPEC: the spec's files hold it, whatever the shell says
    assert held == env.EXCLUDE_NEWER and env.harness_line({}, held=held).startswith("ok: the spec's files")
    assert env.held_day([c.text, c.text.replace("UV_EXCLUDE_NEWER", "OTHER")]) is None


def test_ctrl_c_removes_the_temporary_folder_or_names_the_kept_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from whileai.rehearse.supervise import RehearsalInterrupted
    from whileai.targets.prime_rl.rehearse import run as rr

    made: list[str] = []

    def interrupted(python: Any, fam: Any, model_type: Any, folder: Path, timeout: Any) -> Any:
        made.append(str(folder.parent))
        raise KeyboardInterrupt

    monkeypatch.setattr(rr, "tiny_model", interrupted)
    stages = inputs.from_compiled(wai.compile(load_spec(EXAMPLES / "grpo.toml"), "prime-rl"))
    with pytest.raises(RehearsalInterrupted) as e:
        rr.rehearse(stages, python=Path(sys.executable), say=lambda x: None)
    assert e.value.folder is None and not Path(made[0]).exists()
    assert "temporary folder was removed" in e.value.line()
    with pytest.raises(RehearsalInterrupted) as e:
        rr.rehearse(stages, python=Path(sys.executable), keep=tmp_path / "kept", say=lambda x: None)
    assert e.value.folder == str(tmp_path / "kept") and str(tmp_path / "kept") in e.value.line()


@pytest.mark.parametrize("keep", [False, True], ids=["temporary", "kept"])
def test_a_real_ctrl_c_stops_the_rehearsal_and_accounts_for_its_folder(tmp_path: Path, keep: bool) -> None:
    """SIGINT as a terminal's Ctrl-C sends it (to the whole foreground process group: whileai and
    the environment's python it is waiting on) while the tiny model is built: exit 130, one line,
    the temporary folder removed (or the --keep folder named), the child gone."""
    import signal
    import subprocess

    started = tmp_path / "started"
    fake = tmp_path / "env" / "bin" / "python"  # the prime-rl environment's python, slow to build
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!{sys.executable}\nimport json, os, pathlib, sys, time\n"
                    "if sys.argv[-1] == 'sys':  # the environment's check: a Python 3.12\n"
                    "    print(json.dumps({'version': '3.12.0', 'site': '', 'missing': {}, 'files': {}}))\n"
                    "    sys.exit(0)\n"
                    f"pathlib.Path({str(started)!r}).write_text(str(os.getpid()))\ntime.sleep(120)\n")
    fake.chmod(0o755)
    for command in ("rl", "orchestrator", "env-server", "uv"):  # prime-rl's commands, by name
        (fake.parent / command).write_text("#!/bin/sh\nexit 0\n")
    tmp, kept = tmp_path / "tmp", tmp_path / "kept"
    tmp.mkdir()
    cmd = [sys.executable, "-m", "whileai", "rehearse", str(EXAMPLES / "grpo.toml"), "--python", str(fake),
           *(["--keep", str(kept)] if keep else [])]
    p = subprocess.Popen(cmd, env={**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        until = time.monotonic() + 120
        while not started.exists() or not started.read_text():
            assert p.poll() is None and time.monotonic() < until, p.communicate()
            time.sleep(0.1)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130, err
    (line,) = err.strip().splitlines()
    assert line.startswith("interrupted: every process the rehearsal started was stopped")
    if keep:
        assert line.endswith(f"its folder is kept at {kept}") and kept.is_dir()
    else:
        assert line.endswith("its temporary folder was removed")
    assert not list(tmp.glob("whileai-rehearse-*"))
    child = int(started.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_phases_come_from_the_stand_ins_time_stamps(tmp_path: Path) -> None:
    from whileai.rehearse.timing import Phases
    from whileai.targets.prime_rl.rehearse.logs import after_rl

    (tmp_path / "calls").mkdir()
    (tmp_path / "calls" / "8000.jsonl").write_text('{"t": 105.0}\n{"t": 107.0}\n')
    (tmp_path / "trainer-steps.jsonl").write_text('{"t": 120.0}\n{"t": 130.5}\n')
    ph = Phases()
    with ph("rows"):
        pass
    after_rl(ph, tmp_path, started=100.0, ended=142.0)
    assert ph.ordered() == {"rows": 0.0, "launcher": 5.0, "first step": 15.0, "steps": 10.5, "shutdown": 11.5}
    # a teacher's stand-in is asked as soon as rl starts: the launcher ends at the policy's first call
    (tmp_path / "calls" / "8001.jsonl").write_text('{"t": 101.0}\n')
    ph = Phases()
    after_rl(ph, tmp_path, started=100.0, ended=142.0, ports={8000, 8100})
    assert ph.ordered() == {"launcher": 5.0, "first step": 15.0, "steps": 10.5, "shutdown": 11.5}
    # a run that fails before its first step: the rest of its time is the first step's
    (tmp_path / "trainer-steps.jsonl").unlink()
    ph = Phases()
    after_rl(ph, tmp_path, started=100.0, ended=160.0, ports={8000, 8100})
    assert ph.ordered() == {"launcher": 5.0, "first step": 55.0}


def test_a_passing_rehearsal_names_no_folder_it_removed(tmp_path: Path) -> None:
    """held() removes its temporary folder when the rehearsal passes: the verdict's last line then
    names no folder; a failed one keeps the folder and names it."""
    from whileai.rehearse.report import lines
    from whileai.rehearse.session import held
    from whileai.rehearse.verdict import Result, Verdict

    def passes(root: Path, sup: object) -> None:
        (root / "log.txt").write_text("ran\n")
        result.verdicts.append(Verdict(True, 1.0, summary="ok"))

    result = Result(stages=["grpo"])
    held(result, keep=None, timeout=30, body=passes)
    assert result.ok and result.folder == ""
    assert lines(result, lambda s: "")[-1] == "ok"

    def fails(root: Path, sup: object) -> None:
        result.verdicts.append(Verdict(False, 1.0, summary="failed: x"))

    result = Result(stages=["grpo"])
    held(result, keep=None, timeout=30, body=fails)
    assert Path(result.folder).is_dir() and result.folder in lines(result, lambda s: "")[-1]
    import shutil

    shutil.rmtree(result.folder)


def _venv(tmp_path: Path, commands: tuple[str, ...]) -> Path:
    """A venv-shaped folder: bin/python (this interpreter) and the named commands."""
    b = tmp_path / "venv" / "bin"
    b.mkdir(parents=True)
    (b / "python").symlink_to(sys.executable)
    for c in commands:
        (b / c).write_text("#!/bin/sh\nexit 0\n")
        (b / c).chmod(0o755)
    return tmp_path / "venv"


def test_rehearse_refuses_a_python_without_prime_rl_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv without prime-rl (no bin/rl): one line, exit 2, naming what is missing and --setup,
    before a folder or a tiny model is made: no traceback, no whileai-rehearse-* folder left."""
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    venv = _venv(tmp_path, ())
    r = CliRunner().invoke(app, ["rehearse", str(EXAMPLES / "grpo.toml"), "--python", str(venv)])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in r.output
    assert "has no rl" in err and "--setup" in err
    assert list(temp.iterdir()) == []
    # the commands there but a Python that is not 3.12 (this one is not, or the check is skipped)
    if not sys.version.startswith("3.12"):
        venv2 = _venv(tmp_path / "b", ("rl", "orchestrator", "env-server", "uv"))
        r = CliRunner().invoke(app, ["rehearse", str(EXAMPLES / "grpo.toml"), "--python", str(venv2)])
        assert r.exit_code == 2 and "Python 3.12" in r.stderr and list(temp.iterdir()) == []


def test_a_refused_or_crashed_rehearsal_removes_its_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """held(): a refusal (SpecError) or a crash mid-way removes the temporary folder it made (no
    message would name it); Ctrl-C after a verdict does not make the removed folder again."""
    import tempfile

    from whileai.rehearse.session import held
    from whileai.rehearse.supervise import RehearsalInterrupted
    from whileai.rehearse.verdict import Result, Verdict

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made: list[Path] = []

    def refuses(root: Path, sup: object) -> None:
        made.append(root)
        (root / "tiny").mkdir()
        raise SpecError("--python", "p", "an environment that builds the tiny model")

    def crashes(root: Path, sup: object) -> None:
        made.append(root)
        raise FileNotFoundError("bin/rl")

    def interrupted(root: Path, sup: object) -> None:
        made.append(root)
        result.verdicts.append(Verdict(True, 1.0, summary="ok"))
        raise KeyboardInterrupt

    cases = ((refuses, SpecError), (crashes, FileNotFoundError), (interrupted, RehearsalInterrupted))
    for body, error in cases:
        result = Result(stages=["grpo"])
        with pytest.raises(error):
            held(result, keep=None, timeout=30, body=body)
        assert made[-1].name.startswith("whileai-rehearse-") and not made[-1].exists(), body
    assert list(tmp_path.iterdir()) == []
