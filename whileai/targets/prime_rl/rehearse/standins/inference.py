"""The `inference` stand-in: a real HTTP server on 127.0.0.1 that answers the routes prime-rl's
orchestrator, verifiers and the renderers call on a vLLM server, with made-up tokens.

It is found first on PATH, so `rl` starts it for the policy exactly as it starts the real
server (`inference @ configs/inference.json`), and whileai starts one per teacher from the
teacher's own run line (`inference --vllm.model X --server.port 8001 ...`). Either way the
arguments are parsed by prime-rl's own InferenceConfig, so the stand-in serves what the real
server would: that model name, on that port (and the engine's `backend_port` behind it).

Every call is appended to `$WHILEAI_REHEARSE_DIR/calls/<port>.jsonl` (route, the request's
shape, status). Standard library plus prime-rl's config package; the tokenizer, when
$WHILEAI_REHEARSE_TOKENIZER names one, only decodes prompts to make the completions vary.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

try:  # in the tests, as a package; in the rehearsal, a script beside its rules
    from whileai.targets.prime_rl.rehearse.standins import vllm_rules as rules
    from whileai.targets.prime_rl.rehearse.standins.replies import completion_text, shape, tokenizer, trim
except ImportError:  # pragma: no cover - the prime-rl environment has no whileai
    import vllm_rules as rules  # type: ignore[no-redef]
    from replies import completion_text, shape, tokenizer, trim  # type: ignore[no-redef]

ADMIN_ONLY = (
    "/pause",
    "/resume",
    "/update_weights",
    "/load_lora_adapter",
    "/unload_lora_adapter",
    "/v1/load_lora_adapter",
    "/v1/unload_lora_adapter",
    "/init_broadcaster",
)


class State:
    def __init__(
        self,
        model: str,
        max_model_len: int | None,
        vocab: int,
        eos: int,
        decode: Any,
        encode: Any,
        log_dir: Path | None,
    ) -> None:
        self.model, self.max_model_len, self.vocab, self.eos = model, max_model_len, vocab, eos
        self.decode, self.encode, self.log_dir = decode, encode, log_dir
        self.adapters: dict[str, str] = {}
        self.running = self.in_flight = 0  # requests and their tokens being generated (/metrics)
        self.seen: set[tuple[int, str, int]] = set()  # (port, route, status) whose example is recorded
        self.lock = threading.Lock()
        self.rng = random.Random(0)

    def served(self) -> list[str]:
        return [self.model, *self.adapters]

    def record(self, port: int, entry: dict[str, Any], example: Any = None) -> None:
        """One line per call; the first call of each route and status also keeps its request
        body (long lists cut to 16 items): the recorded shapes the default tests replay."""
        if self.log_dir is None:
            return
        key = (port, entry["route"], entry["status"])
        if key not in self.seen:
            self.seen.add(key)
            entry = {**entry, "example": trim(example)}
        with self.lock, open(self.log_dir / f"{port}.jsonl", "a") as f:
            f.write(json.dumps({"t": round(time.time(), 3), "port": port, **entry}) + "\n")


class Handler(BaseHTTPRequestHandler):
    state: State
    admin: bool
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def port(self) -> int:
        addr: Any = self.server.server_address
        return int(addr[1])

    def _send(self, status: int, body: Any, ctype: str = "application/json") -> None:
        data = (json.dumps(body) if ctype == "application/json" else str(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _reply(self, route: str, req: Any, status: int, body: Any, ctype: str = "application/json") -> None:
        self.state.record(
            self.port(),
            {
                "route": route,
                "request": shape(req),
                "status": status,
                "response": shape(body) if status < 400 else body,
            },
            req,
        )
        self._send(status, body, ctype)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        route = urlparse(self.path).path
        if route == "/health":
            self._reply(route, None, 200, {})
        elif route == "/v1/models":
            data = [
                {
                    "id": m,
                    "object": "model",
                    "owned_by": "whileai-rehearse",
                    "max_model_len": self.state.max_model_len,
                }
                for m in self.state.served()
            ]
            self._reply(route, None, 200, {"object": "list", "data": data})
        elif route == "/metrics":
            s = self.state
            blocks = 4 * (s.max_model_len or 1 << 14) // rules.BLOCK  # room for four full contexts
            self._reply(route, None, 200, rules.metrics(s.running, 0, s.in_flight, blocks), "text/plain")
        else:
            self._reply(route, None, 404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        route = urlparse(self.path).path
        n = int(self.headers.get("Content-Length") or 0)
        try:
            req = json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            self._reply(route, None, 400, {"error": "body is not JSON"})
            return
        if route in ADMIN_ONLY and not self.admin:
            self._reply(
                route,
                req,
                404,
                {"detail": f"Not Found ({route} is served by the engine at backend_port, not by the router)"},
            )
            return
        handler = ROUTES.get(route)
        if handler is None:
            self._reply(route, req, 404, {"detail": "Not Found"})
            return
        status, body = handler(self.state, req or {})
        self._reply(route, req, status, body, "text/plain" if isinstance(body, str) else "application/json")


def _error(status: int, message: str, kind: str = "BadRequestError") -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": kind, "code": status}}


def _model_ok(s: State, model: Any) -> tuple[int, dict[str, Any]] | None:
    if model not in (None, *s.served()):
        return _error(404, f"The model `{model}` does not exist.", "NotFoundError")
    return None


def _update_weights(s: State, req: dict[str, Any]) -> tuple[int, Any]:
    why = rules.weights_refusal(req.get("weight_dir"))
    if why is not None:  # the worker raises: FastAPI's 500 (the client retries 5xx, then fails)
        return 500, {"detail": why}
    return 200, {"status": "ok"}


def _load_lora(s: State, req: dict[str, Any], in_place: bool) -> tuple[int, Any]:
    name, path = req.get("lora_name"), req.get("lora_path")
    why = rules.adapter_refusal(name, path, str(name) in s.adapters, in_place)
    if why is not None:
        return _error(400, why)
    s.adapters[str(name)] = str(path)
    return 200, {"status": "ok"}


def _unload_lora(s: State, req: dict[str, Any]) -> tuple[int, Any]:
    s.adapters.pop(str(req.get("lora_name")), None)
    return 200, "Success"


def _generate(s: State, req: dict[str, Any]) -> tuple[int, Any]:
    if (bad := _model_ok(s, req.get("model"))) is not None:
        return bad
    ids, sp = req.get("token_ids") or [], req.get("sampling_params") or {}
    if not ids:
        return _error(400, "token_ids: List should have at least 1 item")
    if (over := next((t for t in ids if not 0 <= t < s.vocab), None)) is not None:
        return _error(400, f"Token id {over} is out of vocabulary (vocab size {s.vocab})")
    if (why := rules.prompt_refusal(len(ids), s.max_model_len)) is not None:
        return _error(400, why)
    asked = sp.get("max_tokens")
    max_tokens = rules.tokens_to_generate(len(ids), None if asked is None else int(asked), s.max_model_len)
    out: dict[str, Any] = {"model": req.get("model"), "created": int(time.time())}
    if sp.get("prompt_logprobs"):
        out["prompt_logprobs"] = [
            None,
            *({str(t): {"logprob": -1.0 - (t % 7) / 10, "rank": 1, "decoded_token": None}} for t in ids[1:]),
        ]
    with s.lock:
        text = completion_text(s.decode(ids), s.rng)
    stop = [int(t) for t in sp.get("stop_token_ids") or []] or [s.eos]
    enc = [t for t in s.encode(text) if t < s.vocab]
    if len(enc) + 1 <= max_tokens:
        toks, finish = [*enc, stop[0]], "stop"
    else:
        toks, finish = enc[:max_tokens], "length"
    content: list[dict[str, Any]] = [
        {"token": f"token_id:{t}", "logprob": -0.5, "bytes": None, "top_logprobs": []} for t in toks
    ]
    out["choices"] = [
        {"index": 0, "token_ids": toks, "finish_reason": finish, "logprobs": {"content": content}}
    ]
    out["usage"] = {
        "prompt_tokens": len(ids),
        "completion_tokens": len(toks),
        "total_tokens": len(ids) + len(toks),
    }
    return 200, out


def _chat(s: State, req: dict[str, Any]) -> tuple[int, Any]:
    if (bad := _model_ok(s, req.get("model"))) is not None:
        return bad
    msgs = req.get("messages") or []
    last = next((m.get("content") for m in reversed(msgs) if m.get("role") == "user"), "") or ""
    with s.lock:
        text = completion_text(f"user\n{last if isinstance(last, str) else 'rehearsal'}", s.rng)
    n = len(s.encode(text))
    return 200, {
        "id": "chatcmpl-rehearsal",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.get("model"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1},
    }


ROUTES = {
    "/pause": lambda s, r: (200, {"status": "paused"}),
    "/resume": lambda s, r: (200, {"status": "resumed"}),
    "/init_broadcaster": lambda s, r: (200, {"status": "ok"}),  # the real server's route; no transfer here
    "/update_weights": _update_weights,
    "/load_lora_adapter": lambda s, r: _load_lora(s, r, True),  # prime-rl's: load_inplace forced
    "/v1/load_lora_adapter": lambda s, r: _load_lora(s, r, bool(r.get("load_inplace"))),
    "/unload_lora_adapter": _unload_lora,
    "/v1/unload_lora_adapter": _unload_lora,
    "/inference/v1/generate": _generate,
    "/v1/chat/completions": _chat,
}


def serve(argv: list[str]) -> None:
    from prime_rl.configs.inference import InferenceConfig
    from prime_rl.utils.config import cli

    sys.argv = ["inference", *argv]
    config = cli(InferenceConfig)
    port = config.server.port
    backend = getattr(config, "backend_port", None) if getattr(config, "router", None) is not None else None
    decode, encode, vocab, eos, positions = tokenizer(1 << 15)
    where = os.environ.get("WHILEAI_REHEARSE_DIR")
    log_dir = Path(where) / "calls" if where else None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
    mml = config.vllm.max_model_len or positions  # unset: the model's own context, as vLLM does
    state = State(config.vllm.model, mml, vocab, eos, decode, encode, log_dir)
    servers = []
    for p, admin in ((port, backend is None), *(((backend, True),) if backend else ())):
        handler = type("H", (Handler,), {"state": state, "admin": admin})
        servers.append(ThreadingHTTPServer(("127.0.0.1", p), handler))
    for srv in servers[1:]:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    ports = ", ".join(str(s.server_address[1]) for s in servers)
    print(
        f"whileai rehearse: inference stand-in serving {config.vllm.model!r} on 127.0.0.1:{ports}", flush=True
    )
    servers[0].serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1:])
