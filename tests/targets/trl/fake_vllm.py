"""A small OpenAI-compatible server on 127.0.0.1 backed by local tiny models (tests only).

It speaks the part of vLLM's API that `whileai inspect` uses — `POST /tokenize`,
`POST /detokenize`, `POST /v1/completions` with `n`, `seed`, `logprobs`,
`return_tokens_as_token_ids`, `prompt_logprobs` and `echo` — computed with transformers on the
same weights the tests load, so endpoint numbers can be checked against a forward pass.
Bounded: it shuts itself down after `deadline` seconds even if a test forgets to.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch and transformers")
pytest.importorskip("transformers", reason="the trl extra (pip install -e '.[trl]'): torch and transformers")

import torch  # noqa: E402
from fake_openai import Loopback  # noqa: E402  (tests/: the loopback server both fakes run)
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402


class FakeVLLM(Loopback):
    def __init__(self, models: dict[str, str], *, key: str | None = None, prompt_logprobs: bool = True,
                 deadline: float = 120.0) -> None:
        self.models = {name: (AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval(),
                              AutoTokenizer.from_pretrained(path)) for name, path in models.items()}
        self.key, self.prompt_logprobs = key, prompt_logprobs
        self.requests: list[tuple[str, dict[str, Any], str | None]] = []
        self.lock = threading.Lock()
        self.serve(deadline)

    # -- the API -------------------------------------------------------------------------
    def handle(self, path: str, body: dict[str, Any], auth: str | None) -> tuple[int, dict[str, Any]]:
        self.requests.append((path, body, auth))
        if self.key is not None and auth != f"Bearer {self.key}":
            return 401, {"error": "bad API key"}
        if body.get("model") not in self.models:
            return 404, {"error": f"model {body.get('model')!r} not served"}
        net, tok = self.models[body["model"]]
        with self.lock:
            if path == "/tokenize":
                if "messages" in body:
                    enc = tok.apply_chat_template(body["messages"], add_generation_prompt=True,
                                                  tokenize=True, return_dict=True)
                    return 200, {"tokens": list(enc["input_ids"])}
                return 200, {"tokens": tok(body["prompt"])["input_ids"]}
            if path == "/detokenize":
                return 200, {"prompt": tok.decode(body["tokens"])}
            if path == "/v1/completions":
                return 200, self.completions(net, tok, body)
        return 404, {"error": path}

    def completions(self, net: Any, tok: Any, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["prompt"] if isinstance(body["prompt"], list) else tok(body["prompt"])["input_ids"]
        ids = torch.tensor([prompt])
        with torch.no_grad():
            lp = torch.log_softmax(net(input_ids=ids).logits[0].float(), dim=-1)
        if body.get("prompt_logprobs") is not None and self.prompt_logprobs:
            k = int(body["prompt_logprobs"])
            rows: list[Any] = [None]
            for j in range(1, len(prompt)):
                row = lp[j - 1]
                top = torch.topk(row, k)
                keep = {int(i): float(v) for v, i in zip(top.values, top.indices, strict=True)}
                keep.setdefault(prompt[j], float(row[prompt[j]]))
                rows.append({str(i): {"logprob": v, "rank": int((row > row[i]).sum()) + 1,
                                      "decoded_token": tok.decode([i])} for i, v in keep.items()})
            return {"choices": [{"index": 0, "text": "", "finish_reason": "length", "prompt_logprobs": rows}]}
        if body.get("echo"):
            k = int(body.get("logprobs") or 0)
            tokens = [tok.decode([i]) for i in prompt]
            values: list[Any] = [None] + [float(lp[j - 1, prompt[j]]) for j in range(1, len(prompt))]
            tops: list[Any] = [None]
            for j in range(1, len(prompt)):
                top = torch.topk(lp[j - 1], k)
                pairs = zip(top.values, top.indices, strict=True)
                tops.append({tok.decode([int(i)]): float(v) for v, i in pairs})
            logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops}
            return {"choices": [{"index": 0, "text": "", "finish_reason": "length", "logprobs": logprobs}]}
        torch.manual_seed(int(body.get("seed", 0)))
        temperature = float(body.get("temperature", 1.0))
        sampling = {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0} \
            if temperature > 0 else {"do_sample": False}
        out = net.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **sampling,
                           max_new_tokens=int(body["max_tokens"]), num_return_sequences=int(body.get("n", 1)),
                           eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
        choices = []
        for i, row in enumerate(out[:, len(prompt):].tolist()):
            end = next((j for j, t in enumerate(row) if t == tok.eos_token_id), None)
            row = row if end is None else row[: end + 1]
            choices.append({"index": i, "text": tok.decode(row), "finish_reason": "stop" if end is not None
                            else "length", "logprobs": {"tokens": [f"token_id:{t}" for t in row]}})
        return {"choices": choices}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                try:
                    code, payload = fake.handle(self.path, body, self.headers.get("Authorization"))
                except Exception as e:  # a bug here should fail the test, not hang it
                    code, payload = 500, {"error": repr(e)}
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        return Handler
