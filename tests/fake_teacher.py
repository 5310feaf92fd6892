"""A stand-in teacher: prime-rl's inference server as its orchestrator scores with it, on 127.0.0.1.

It answers `POST /inference/v1/generate` (token ids in, vLLM's `prompt_logprobs` out: the first
row null, then one {id: {logprob, rank, decoded_token}} per id with the k best) with KNOWN
log-probs: `logprob(i, tid)` below, a function of the position and the id only, so a test can
say what the signal must be. `POST /tokenize` encodes with the tokenizer it is given (a
tokenizer.json folder), so the tokenizer check can be made to pass or fail. `slow` seconds of
sleep before every answer make it a slow server; `fail_after=N` answers HTTP 500 after N
samples (a server that dies mid-run). Run as a script it serves in its own process (the
benchmark), printing its URL.
"""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import Loopback  # noqa: E402

MODEL = "stand-in/teacher"


def logprob(i: int, tid: int) -> float:
    """The teacher's log-prob of id `tid` at position i (known to the tests)."""
    return -((tid * 31 + i * 17) % 997) / 131.0 - 0.015625


def rank(i: int, tid: int) -> int:
    return 1 + (tid + i) % 9


def rows(ids: list[int], k: int) -> list[Any]:
    out: list[Any] = [None]
    for i in range(1, len(ids)):
        tid = ids[i]
        row = {str(tid): {"logprob": logprob(i, tid), "rank": rank(i, tid), "decoded_token": f"t{tid}"}}
        for j in range(k):
            alt = (tid + 1 + j) % 50000
            row[str(alt)] = {"logprob": -0.5 - j * 0.25, "rank": j + 1, "decoded_token": f"t{alt}"}
        out.append(row)
    return out


class FakeTeacher(Loopback):
    def __init__(self, tokenizer_dir: Path | None = None, *, model: str = MODEL, slow: float = 0.0,
                 fail_after: int | None = None, deadline: float = 120.0) -> None:
        self.model, self.slow, self.fail_after = model, slow, fail_after
        self.tok = None
        if tokenizer_dir is not None:
            from tokenizers import Tokenizer

            self.tok = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        self.scored = 0
        self.params: list[dict[str, Any]] = []  # every scoring request's sampling_params
        self.serve(deadline)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if self.slow:
            time.sleep(self.slow)
        if body.get("model") != self.model:
            return 404, {"error": f"model {body.get('model')!r} not served"}
        if path == "/tokenize":
            text = str(body.get("prompt", ""))
            return 200, {"tokens": self.tok.encode(text).ids if self.tok else [ord(c) for c in text]}
        if path == "/inference/v1/generate":
            if self.fail_after is not None and self.scored >= self.fail_after:
                return 500, {"error": "CUDA out of memory"}
            ids = body["token_ids"]
            self.scored += 1
            self.params.append(body.get("sampling_params", {}))
            k = int(body.get("sampling_params", {}).get("prompt_logprobs") or 0)
            return 200, {"request_id": "r", "prompt_logprobs": rows(ids, k),
                         "choices": [{"index": 0, "token_ids": [0], "finish_reason": "length"}]}
        return 404, {"detail": "Not Found"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                try:
                    length = int(self.headers.get("Content-Length", 0))
                    body = json.loads(self.rfile.read(length) or b"{}")
                    code, payload = fake.answer(self.path, body)
                    data = json.dumps(payload).encode()
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (its timeout)

            def log_message(self, *args: Any) -> None:
                return None

        return Handler


if __name__ == "__main__":  # the benchmark's server, in a process of its own
    tok = Path(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    with FakeTeacher(tok, deadline=float(sys.argv[2]) if len(sys.argv) > 2 else 600.0) as server:
        print(server.url, flush=True)
        server.thread.join()
