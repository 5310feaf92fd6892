"""What preflight probes is the target's answer (Target.probes, whileai.targets.probe): a target's
own call and judge reach a real HTTP server on 127.0.0.1, a target that calls nothing gets skip
lines with its reasons, and no module of whileai/preflight names a target's package."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest
from fake_openai import refused_url
from targets.toy import Toy

import whileai as wai
from whileai.preflight.run import preflight
from whileai.spec.endpoint import Endpoint
from whileai.spec.run import RunSpec
from whileai.targets import registry
from whileai.targets.compiled import Compiled
from whileai.targets.probe import Call, Probe, ServerProbe

PREFLIGHT = Path(wai.__file__).parent / "preflight"
SEEN: list[tuple[str, Any]] = []


class _Echo(BaseHTTPRequestHandler):
    """Lists model "m" (max_model_len 64) and answers POST /echo with the body it was sent."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        SEEN.append(("GET " + self.path, None))
        self._send(200, {"data": [{"id": "m", "max_model_len": 64}]} if self.path == "/v1/models" else {})

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        SEEN.append(("POST " + self.path, sent))
        self._send(200, sent) if self.path == "/echo" else self._send(404, {})


@pytest.fixture
def echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    Thread(target=server.serve_forever, daemon=True).start()
    SEEN.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


class Echoing(Toy):
    """The toy target, whose run calls one server: POST /echo with the probe's token ids."""

    def __init__(self, url: str, want: int) -> None:
        self.url, self.want = url, want

    def probes(self, run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
        def judge(data: Any, ids: list[int]) -> tuple[bool, str]:
            got = data.get("ids") if isinstance(data, dict) else None
            return (got == ids and len(ids) == self.want,
                    f"echoed {len(got or [])} ids, the toy run needs {self.want}")

        call = Call("POST", "/echo", lambda ids: {"ids": ids}, judge)
        return [ServerProbe("toy server", "toy.url", self.url, "m", None, 40, "the toy's length",
                            "echo route", (call,), "toy-serve --port 0", empty_key=None)]


def _run(tmp_path: Path) -> RunSpec:
    return wai.RunSpec(taskset="reverse-text", model="org/student", output_dir=str(tmp_path / "o"),
                       method=wai.GRPO())


def _preflight(target: Echoing, run: RunSpec) -> Any:
    undo = registry.register(target)
    try:
        return preflight(run, target="toy", timeout=3)
    finally:
        undo()


def test_the_targets_own_call_and_judge_reach_the_server(echo: str, tmp_path: Path) -> None:
    good = _preflight(Echoing(echo, want=8), _run(tmp_path))
    bad = _preflight(Echoing(echo, want=9), _run(tmp_path))
    route = {c.name: c for c in good.checks}[f"toy server m @ {echo}: echo route"]
    assert route.status == "ok" and route.detail == "echoed 8 ids, the toy run needs 8", good.lines()
    assert ("POST /echo", {"ids": [1, 2, 3, 4, 5, 6, 7, 8]}) in SEEN  # /tokenize 404: the filler ids
    context = {c.name: c for c in good.checks}[f"toy server m @ {echo}: context"]
    assert context.status == "ok" and "max_model_len 64 >= 40 (the toy's length)" in context.detail
    assert not any(c.name == "servers" for c in good.checks)
    (failed,) = bad.failed
    assert failed.name.endswith("echo route") and failed.detail == "echoed 8 ids, the toy run needs 9"


def test_a_target_that_calls_no_server_says_why_for_each_and_sends_nothing(tmp_path: Path) -> None:
    gone = refused_url()
    run = wai.RunSpec(taskset="reverse-text", model="org/student", output_dir=str(tmp_path / "o"),
                      method=wai.OPD(wai.Endpoint(url=gone, model="org/teacher")))
    report = preflight(run, target="verl", student_endpoint=gone, timeout=2)
    lines = {c.name: c for c in report.checks}
    teacher = lines[f"teacher org/teacher @ {gone}: endpoint"]
    student = lines[f"student endpoint org/student @ {gone}: endpoint"]
    assert teacher.status == student.status == "skip" and "verl serves the OPD teacher" in teacher.detail
    assert "calls no student server" in student.detail
    assert not report.failed and not any("checkout" in c.name for c in report.checks)


def test_no_module_of_preflight_names_a_target_package() -> None:
    """What to call for one target lives in whileai/targets/<target>/probe.py, not here."""
    found = []
    for path in sorted(PREFLIGHT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.name}: {n}" for n in names if n.split(".")[:2] == ["whileai", "targets"]
                      and n.split(".")[2:3] in (["prime_rl"], ["trl"], ["verl"])]
    assert PREFLIGHT.is_dir() and not found, found
