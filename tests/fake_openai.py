"""Small vLLM-like HTTP servers on 127.0.0.1 for preflight's tests (no torch, no trl).

`FakeServer` speaks the parts of the API preflight probes: `GET /v1/models` (with
`max_model_len`), `POST /tokenize` (a prompt, or chat messages through the tokenizer's chat
template, rendered with jinja2), prime-rl's `POST /inference/v1/generate` (token ids in,
`prompt_logprobs` out), and TRL's `GET /health` + `POST /v1/completions` (`return_token_ids`;
with `prompt_logprobs`, a served teacher's scores as TRL's VLLMClient reads them).
Each `fault` breaks it one way: "no-generate" (a plain OpenAI server: 404 on the scoring route),
"wrong-model", "short-context", "key" (401 without the right bearer token), "not-json",
"trickle" (headers at once, then the body a byte at a time), "tokenize-500" (/tokenize breaks);
`not_ready=N` answers /health 503 N times first (a model loading), `header=(name, value)`
refuses (400) every request without that header. `Silent` accepts connections and
never answers; `refused_url()` names a port nobody listens on. Every server stops itself after
`deadline` seconds even if a test forgets to.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _render(template: str, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=messages,
                                            add_generation_prompt=add_generation_prompt)


class Background:
    """A server's thread, started on entering the `with` and stopped on leaving it or after
    `deadline` seconds whatever the test does; subclasses give `_close()`."""

    def _start_on_enter(self, target: Any, deadline: float) -> None:
        self.thread = threading.Thread(target=target, daemon=True)
        self.timer = threading.Timer(deadline, self.stop)
        self.timer.daemon = True

    def __enter__(self) -> Any:
        self.thread.start()
        self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.timer.cancel()
        self._close()

    def _close(self) -> None:
        raise NotImplementedError


class Loopback(Background):
    """A real HTTP server on 127.0.0.1 (a free port) in a thread; subclasses give `_handler()`."""

    def serve(self, deadline: float) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self._start_on_enter(self.server.serve_forever, deadline)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeServer(Loopback):
    def __init__(self, model: str, tokenizer_dir: Path, *, fault: str | None = None,
                 max_model_len: int = 32768, key: str | None = None, deadline: float = 60.0,
                 not_ready: int = 0, header: tuple[str, str] | None = None) -> None:
        from tokenizers import Tokenizer

        self.model, self.fault, self.max_model_len, self.key = model, fault, max_model_len, key
        self.tok = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text())
        self.template = config.get("chat_template")
        self.requests: list[tuple[str, str, str | None]] = []
        self.not_ready, self.header = not_ready, header
        self.serve(deadline)

    def answer(self, method: str, path: str, body: dict[str, Any], auth: str | None,
               headers: Any = None) -> tuple[int, Any]:
        self.requests.append((method, path, auth))
        if self.key is not None and auth != f"Bearer {self.key}":
            return 401, {"error": "Unauthorized"}
        if self.header is not None and (headers or {}).get(self.header[0]) != self.header[1]:
            return 400, {"error": f"missing header {self.header[0]}"}
        if path == "/health" and self.not_ready > 0:
            self.not_ready -= 1
            return 503, {"error": "loading"}
        if path == "/tokenize" and self.fault == "tokenize-500":
            return 500, {"error": "boom"}
        served = "someone/else" if self.fault == "wrong-model" else self.model
        if (method, path) == ("GET", "/v1/models"):
            mml = 1024 if self.fault == "short-context" else self.max_model_len
            return 200, {"object": "list", "data": [{"id": served, "object": "model",
                                                     "max_model_len": mml}]}
        if (method, path) == ("GET", "/health"):
            return 200, {}
        if body.get("model") != served:
            return 404, {"error": f"model {body.get('model')!r} not served"}
        if path == "/tokenize":
            if "messages" in body:
                text = _render(self.template, body["messages"], body.get("add_generation_prompt", True))
                return 200, {"tokens": self.tok.encode(text, add_special_tokens=False).ids}
            special = body.get("add_special_tokens", True)
            return 200, {"tokens": self.tok.encode(body["prompt"], add_special_tokens=special).ids}
        if path == "/inference/v1/generate" and self.fault != "no-generate":
            ids = body["token_ids"]
            params = body.get("sampling_params", {})
            rows: list[Any] | None = None if params.get("prompt_logprobs") is None else [None] + [
                {str(t): {"logprob": -1.5, "rank": 1, "decoded_token": self.tok.decode([t])}}
                for t in ids[1:]]
            return 200, {"request_id": "r", "prompt_logprobs": rows,
                         "choices": [{"index": 0, "token_ids": ids[:1], "finish_reason": "length"}]}
        if path == "/v1/completions" and body.get("prompt_logprobs") is not None:
            # TRL's VLLMClient.get_sequence_logprobs: token-id sequences in, one choice each with
            # every prompt position's top logprobs (the actual token at rank 1, logprob -1.5)
            return 200, {"choices": [{"index": i, "text": "x", "prompt_logprobs": [None] + [
                {str(t): {"logprob": -1.5, "rank": 1}} for t in seq[1:]]}
                for i, seq in enumerate(body["prompt"])]}
        if path == "/v1/completions":
            ids = body["prompt"]
            return 200, {"choices": [{"index": 0, "text": "x", "token_ids": ids[:1],
                                      "prompt_token_ids": ids, "logprobs": None}]}
        return 404, {"detail": "Not Found"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self, method: str) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                code, payload = fake.answer(method, self.path, body, self.headers.get("Authorization"),
                                            self.headers)
                data = b"<html>It works!</html>" if fake.fault == "not-json" else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fake.fault == "trickle":
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(0.2)
                else:
                    self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self._safe("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._safe("POST")

            def _safe(self, method: str) -> None:
                try:
                    self._reply(method)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (a deadline): nothing to tell it

            def log_message(self, *args: Any) -> None:
                return None

        return Handler


class Silent(Background):
    """Accepts every connection and never answers a byte."""

    def __init__(self, deadline: float = 60.0) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.stopped = threading.Event()
        self._start_on_enter(self._accept, deadline)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.held.append(conn)

    def _close(self) -> None:
        self.stopped.set()
        for c in self.held:
            c.close()
        self.sock.close()


def refused_url() -> str:
    """A port that was free a moment ago: connecting to it is refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"
