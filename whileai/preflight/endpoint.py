"""Probes of one served model (a teacher, or the student's inference server), made the way the
target will call it (read from each pinned target's source):

- prime-rl 559b447 (utils/client.py): `GET /health` answers (`check_health`), and `GET
  <root>/v1/models` lists the model unless `skip_model_check` (`maybe_check_has_model`):
  whileai.preflight.ready; OPD's teacher (and OPSD's policy) is prefill-scored with
  `POST <root>/inference/v1/generate`, body `{model, token_ids, sampling_params: {max_tokens 1,
  temperature 1, top_p 1, prompt_logprobs 1}}`, whose answer's `prompt_logprobs` holds one
  `{token_id: {logprob}}` per prompt token (`null` for the first); SFT's teacher samples through
  the same token-in route; the key is `os.environ[api_key_var]`, sent as a bearer token
  ("EMPTY" when unset), with the configured headers;
- TRL 1.16.0 server mode (generation/vllm_client.py, base URL = the server root): `GET /health`,
  `GET /v1/models`, `POST /v1/completions` with token-id prompts and `return_token_ids`, whose
  choices carry `token_ids` and `prompt_token_ids`;
- vLLM's `POST <root>/tokenize` (prompt, or chat messages through the server's template) and
  `max_model_len` in `/v1/models`. The run never calls /tokenize (scoring is token-in, and SFT's
  completions are rendered on the client), so what it finds is a note, never a FAIL.

A scoring server needs `max_model_len > seq_len`: prime-rl scores a whole sequence as a prompt
with max_tokens 1, and vLLM refuses a prompt of max_model_len tokens when it must generate.
Every fix line is the target's own serve line for that server (the run lines' line).
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from whileai.preflight import ready
from whileai.preflight.http import Answer, HttpFailure, request
from whileai.preflight.report import Check, fail, ok, skip
from whileai.preflight.tokenize import tokenizer
from whileai.preflight.tokens import Student

GENERATE = "/inference/v1/generate"


@dataclass(frozen=True)
class Target:
    label: str  # "teacher", "stage 2 teacher", "student endpoint"
    field: str  # the spec field or flag that names it
    url: str
    model: str
    key_env: str | None
    role: str  # "score" (prime-rl prefill scoring), "sample" (prime-rl token-in sampling),
    # "vllm-serve" (TRL's `trl vllm-serve` server)
    seq_len: int
    seq_field: str  # where seq_len comes from
    serve_line: str | None = None  # the target's line that serves it (its run line), if it has one
    client: dict[str, Any] = dataclasses.field(default_factory=dict)  # headers, admin URLs (ready.py)

    @property
    def need(self) -> int:
        """The context the run needs: one more than seq_len for a scoring server."""
        return self.seq_len + (1 if self.role == "score" else 0)

    @property
    def root(self) -> str:
        return re.sub(r"/v1$", "", self.url.rstrip("/"))

    @property
    def route(self) -> str:
        """The name of the check of the call the target makes."""
        return {"score": "scoring route", "sample": "sampling route"}.get(self.role, "generation route")

    @property
    def name(self) -> str:
        return f"{self.label} {self.model} @ {self.url}"

    def serve(self) -> str:
        if self.serve_line:
            return self.serve_line
        port = re.search(r":(\d+)(?:/|$)", self.url)
        where = f" --server.port {port.group(1)}" if port else ""
        if self.role == "vllm-serve":
            return f"trl vllm-serve --model {self.model}{' --port ' + port.group(1) if port else ''}"
        return (f"uv run inference --vllm.model {self.model}{where} --vllm.max-model-len "
                f"{self.need} (prime-rl's own inference server, from a prime-rl checkout)")


class _Probe:
    def __init__(self, t: Target, deadline: float) -> None:
        self.t, self.deadline = t, deadline
        key = os.environ.get(t.key_env) if t.key_env else None
        self.key_set = bool(key)
        env = {k: os.environ[v] for k, v in (t.client.get("headers_from_env") or {}).items()
               if v in os.environ}
        self.extra: dict[str, str] = {**(t.client.get("headers") or {}), **env}
        self.headers: dict[str, str] = dict(self.extra)
        if t.role != "vllm-serve" or key:  # prime-rl's OpenAI client sends "EMPTY" without a key
            self.headers["Authorization"] = f"Bearer {key or 'EMPTY'}"

    def admin_headers(self) -> dict[str, str]:
        """prime-rl's admin client: the headers, and the key only when it is set."""
        key = {"Authorization": f"Bearer {os.environ[self.t.key_env]}"} if self.key_set and \
            self.t.key_env else {}
        return {**self.extra, **key}

    def call(self, method: str, path: str, body: Any = None) -> Answer:
        return request(method, self.t.root + path, deadline=self.deadline, body=body,
                       headers=dict(self.headers))

    def refused(self, code: int, what: str) -> str:
        """The cause of an HTTP error status, one line."""
        if code in (401, 403):
            env = self.t.key_env or "VLLM_API_KEY"
            if self.key_set:
                return (f"HTTP {code} on {what}: the server refused the key in ${env} ({self.t.field}"
                        ".api_key_env): set it to the key the server was started with")
            return (f"HTTP {code} on {what}: the server wants an API key and ${env} is not set "
                    f"here: export {env}=<the server's key> ({self.t.field}.api_key_env names it)")
        return f"HTTP {code} on {what}"


def probe(t: Target, deadline: float, student: Student) -> list[Check]:
    """Every check of one endpoint, in order; after a failure that stops the conversation
    (unreachable, a refused key), the rest are `skip` naming it."""
    if t.role == "vllm-serve":
        return _plain(t, deadline, student)
    p = _Probe(t, deadline)
    n = t.name
    health, go_on = ready.health(p, deadline)
    if not go_on:
        return [health, *_rest(t, "not probed: the server is not ready")]
    out = [health]
    models, stop = ready.models(p)
    if stop is not None:
        return [*out, stop, *_rest(t, "not probed: no model list", start=2)] if stop.status == "FAIL" \
            else [*out, stop, skip(f"{n}: context", "no model list to read max_model_len from"),
                  *_tail(p, student)]
    assert models is not None
    listed = models.list_of("data", dict)
    if listed is None:
        return [*out, fail(f"{n}: model", f"GET /v1/models answered {models.start()}, not an "
                           "OpenAI model list (JSON with data[].id): not a vLLM server", models.seconds),
                *_rest(t, "not probed: the server's answers are not OpenAI JSON", start=2)]
    entry = next((m for m in listed if m.get("id") == t.model), None)
    if entry is None and not t.client.get("skip_model_check"):
        served = ", ".join(repr(str(m.get("id"))) for m in listed[:5]) or "no model"
        out.append(fail(f"{n}: model", f"serves {served}, not {t.model!r} ({t.field}.model): point "
                        "the field at the served name or serve this model there"))
        return out + _rest(t, "not probed: the server does not serve this model", start=2)
    out.append(ok(f"{n}: model", f"serves {t.model!r}") if entry is not None else
               skip(f"{n}: model", f"{t.model!r} is not listed, and skip_model_check is set: the "
                    "run does not look"))
    out.append(_context(t, entry or {}))
    return out + _tail(p, student)


def _tail(p: _Probe, student: Student) -> list[Check]:
    ids, tok = tokenizer(p, student)
    return [tok, _route(p, ids)]


def _plain(t: Target, deadline: float, student: Student) -> list[Check]:
    """A TRL `vllm-serve` student endpoint: reachable at /v1/models, then as prime-rl's."""
    p = _Probe(t, deadline)
    n = t.name
    try:
        models = p.call("GET", "/v1/models")
    except HttpFailure as e:
        hint = f"; serve it: {t.serve()}" if e.kind == "refused" else ""
        return [fail(f"{n}: reachable", f"GET {t.root}/v1/models: {e}{hint}"),
                *_rest(t, "not probed: the server did not answer")]
    if models.status != 200:
        return [fail(f"{n}: reachable", p.refused(models.status, "GET /v1/models"), models.seconds),
                *_rest(t, f"not probed: HTTP {models.status}")]
    listed = models.list_of("data", dict) or []
    entry = next((m for m in listed if m.get("id") == t.model), None)
    if entry is None:
        return [ok(f"{n}: reachable", "GET /v1/models answered", models.seconds),
                fail(f"{n}: model", f"does not serve {t.model!r} ({t.field}.model)"),
                *_rest(t, "not probed: the server does not serve this model", start=2)]
    return [ok(f"{n}: reachable", "GET /v1/models answered", models.seconds),
            ok(f"{n}: model", f"serves {t.model!r}"), _context(t, entry), *_tail(p, student)]


def _rest(t: Target, why: str, start: int = 1) -> list[Check]:
    names = ["reachable", "model", "context", "tokenizer", t.route]
    return [skip(f"{t.name}: {x}", why) for x in names[start:]]


def _context(t: Target, entry: dict[str, Any]) -> Check:
    n = f"{t.name}: context"
    mml = entry.get("max_model_len")
    if not isinstance(mml, int) or isinstance(mml, bool):
        return skip(n, "the server does not report max_model_len (not vLLM?): the run needs "
                    f"{t.need} tokens ({t.seq_field}{' + 1' if t.need > t.seq_len else ''})")
    if mml < t.need:
        why = (f"max_model_len {mml} <= the run's {t.seq_len} tokens ({t.seq_field}): prime-rl "
               f"scores a whole sequence of up to {t.seq_len} tokens as a prompt with max_tokens 1, "
               "and vLLM refuses a prompt of max_model_len tokens" if t.need > t.seq_len else
               f"max_model_len {mml} < the run's {t.seq_len} tokens ({t.seq_field})")
        return fail(n, f"{why}; serve it with max_model_len >= {t.need}: {t.serve()}")
    return ok(n, f"max_model_len {mml} >= {t.need} ({t.seq_field}"
              f"{' + 1, as a scoring server needs' if t.need > t.seq_len else ''})")


def _route(p: _Probe, ids: list[int] | None) -> Check:
    t = p.t
    n = f"{t.name}: {t.route}"
    ids = ids if ids and len(ids) >= 2 else [1, 2, 3, 4, 5, 6, 7, 8]
    start = time.monotonic()
    try:
        if t.role == "vllm-serve":
            return _trl(p, n, ids)
        params: dict[str, Any] = {"max_tokens": 1, "temperature": 1.0, "top_p": 1.0}
        if t.role == "score":
            params["prompt_logprobs"] = 1
        a = p.call("POST", GENERATE, {"model": t.model, "token_ids": ids, "sampling_params": params})
    except HttpFailure as e:
        return fail(n, f"POST {GENERATE}: {e}", time.monotonic() - start)
    what = "prefill-scores the student's tokens there" if t.role == "score" else "samples there"
    if a.status in (404, 405):
        return fail(n, f"POST {t.root}{GENERATE}: HTTP {a.status}: nothing serves the token-in "
                    f"route there (prime-rl's orchestrator {what}, with sampling_params"
                    f"{'.prompt_logprobs' if t.role == 'score' else ''}): prime-rl's `inference` "
                    f"serves it, and so does vLLM from 0.26 on (its api_server mounts "
                    f"{GENERATE}); serve it with {t.serve()}", a.seconds)
    if a.status != 200:
        return fail(n, p.refused(a.status, f"POST {GENERATE}"), a.seconds)
    try:
        data = a.json()
    except ValueError:
        return fail(n, f"POST {GENERATE} answered {a.start()}, not JSON", a.seconds)
    if t.role == "sample":
        choice = ((data.get("choices") or [{}]) if isinstance(data, dict) else [{}])[0]
        got = choice.get("token_ids") if isinstance(choice, dict) else None
        if not isinstance(got, list) or not got:
            return fail(n, f"POST {GENERATE} answered without choices[0].token_ids", a.seconds)
        return ok(n, f"POST {GENERATE} sampled {len(got)} token id(s) from {len(ids)} prompt ids",
                  a.seconds)
    rows = data.get("prompt_logprobs") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != len(ids) or not all(_logprob(r) for r in rows[1:]):
        have = len(rows) if isinstance(rows, list) else 0
        return fail(n, f"POST {GENERATE} with prompt_logprobs 1 answered {have} usable prompt "
                    f"log-probs for {len(ids)} prompt tokens (prime-rl needs one per token): not "
                    f"prime-rl's inference server; serve it with {t.serve()}", a.seconds)
    return ok(n, f"POST {GENERATE} with token_ids and prompt_logprobs 1 returned one log-prob per "
              f"prompt token ({len(ids)})", a.seconds)


def _logprob(row: Any) -> bool:
    if not isinstance(row, dict) or not row:
        return False
    first = next(iter(row.values()))
    return isinstance(first, dict) and isinstance(first.get("logprob"), (int, float))


def _trl(p: _Probe, n: str, ids: list[int]) -> Check:
    health = p.call("GET", "/health")
    if health.status != 200:
        return fail(n, f"GET {p.t.root}/health: HTTP {health.status}: TRL's VLLMClient waits for a "
                    f"200 there; serve it with {p.t.serve()}", health.seconds)
    a = p.call("POST", "/v1/completions", {"model": p.t.model, "prompt": ids, "max_tokens": 1,
                                           "return_token_ids": True, "return_tokens_as_token_ids": True,
                                           "logprobs": 0})
    if a.status != 200:
        return fail(n, p.refused(a.status, "POST /v1/completions"), a.seconds)
    try:
        choice = (a.json().get("choices") or [{}])[0]
    except (ValueError, AttributeError):
        return fail(n, f"POST /v1/completions answered {a.start()}, not JSON", a.seconds)
    if not isinstance(choice, dict) or not isinstance(choice.get("token_ids"), list) \
            or not isinstance(choice.get("prompt_token_ids"), list):
        return fail(n, "POST /v1/completions with return_token_ids answered without token_ids and "
                    "prompt_token_ids (TRL's VLLMClient reads both): a vLLM too old for TRL 1.16",
                    a.seconds)
    return ok(n, "GET /health and POST /v1/completions with return_token_ids answered as TRL's "
              "VLLMClient reads them", a.seconds)


__all__ = ["GENERATE", "Target", "probe"]
