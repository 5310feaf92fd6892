"""Probes of one served model (a teacher, or the student's inference server), made the way the
target will call it (read from each pinned target's source):

- prime-rl 559b447 (utils/client.py): `GET <root>/v1/models` must list the model
  (`maybe_check_has_model`); OPD's teacher (and OPSD's policy) is prefill-scored with
  `POST <root>/inference/v1/generate`, body `{model, token_ids, sampling_params: {max_tokens 1,
  temperature 1, top_p 1, prompt_logprobs 1}}`, whose answer's `prompt_logprobs` holds one
  `{token_id: {logprob}}` per prompt token (`null` for the first); SFT's teacher samples through
  the same token-in route; the key is `os.environ[api_key_var]`, sent as a bearer token
  ("EMPTY" when unset);
- TRL 1.16.0 server mode (generation/vllm_client.py, base URL = the server root): `GET /health`,
  `GET /v1/models`, `POST /v1/completions` with token-id prompts and `return_token_ids`, whose
  choices carry `token_ids` and `prompt_token_ids`;
- vLLM's `POST <root>/tokenize` (prompt, or chat messages through the server's template) and
  `max_model_len` in `/v1/models`.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from whileai.preflight.http import Answer, HttpFailure, request
from whileai.preflight.report import Check, fail, ok, skip
from whileai.preflight.tokens import Student

T = TypeVar("T")

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
        port = re.search(r":(\d+)(?:/|$)", self.url)
        where = f" --server.port {port.group(1)}" if port else ""
        if self.role == "vllm-serve":
            return f"trl vllm-serve --model {self.model}{' --port ' + port.group(1) if port else ''}"
        return (f"uv run inference --vllm.model {self.model}{where} --vllm.max-model-len "
                f"{self.seq_len} (prime-rl's own inference server, from a prime-rl checkout)")


class _Probe:
    def __init__(self, t: Target, deadline: float) -> None:
        self.t, self.deadline = t, deadline
        key = os.environ.get(t.key_env) if t.key_env else None
        self.key_set = bool(key)
        self.headers: dict[str, str] = {}
        if t.role != "vllm-serve" or key:  # prime-rl's OpenAI client sends "EMPTY" without a key
            self.headers["Authorization"] = f"Bearer {key or 'EMPTY'}"

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
    p = _Probe(t, deadline)
    out: list[Check] = []
    n = t.name
    try:
        models = p.call("GET", "/v1/models")
    except HttpFailure as e:
        hint = f"; serve it: {t.serve()}" if e.kind == "refused" else ""
        return [fail(f"{n}: reachable", f"GET {t.root}/v1/models: {e}{hint}"),
                *_rest(t, "not probed: the server did not answer")]
    if models.status != 200:
        why = p.refused(models.status, "GET /v1/models")
        if models.status not in (401, 403):
            why += " (not an OpenAI-compatible server at this base URL?)"
        return [fail(f"{n}: reachable", why, models.seconds), *_rest(t, f"not probed: HTTP {models.status}")]
    listed = _list_of(models, "data", dict)
    if listed is None:
        return [fail(f"{n}: reachable", f"GET /v1/models answered {_start(models.body)}, not an "
                     "OpenAI model list (JSON with data[].id): not a vLLM server", models.seconds),
                *_rest(t, "not probed: the server's answers are not OpenAI JSON")]
    out.append(ok(f"{n}: reachable", "GET /v1/models answered", models.seconds))
    entry = next((m for m in listed if m.get("id") == t.model), None)
    if entry is None:
        served = ", ".join(repr(str(m.get("id"))) for m in listed[:5]) or "no model"
        out.append(fail(f"{n}: model", f"serves {served}, not {t.model!r} ({t.field}.model): point "
                        "the field at the served name or serve this model there"))
        return out + _rest(t, "not probed: the server does not serve this model", start=2)
    out.append(ok(f"{n}: model", f"serves {t.model!r}"))
    out.append(_context(t, entry))
    ids, tok = _tokenizer(p, student)
    out.append(tok)
    out.append(_route(p, ids))
    return out


def _rest(t: Target, why: str, start: int = 1) -> list[Check]:
    names = ["reachable", "model", "context", "tokenizer", t.route]
    return [skip(f"{t.name}: {x}", why) for x in names[start:]]


def _list_of(a: Answer, key: str, kind: type[T]) -> list[T] | None:
    """The answer's JSON object's `key` when it is a list of `kind` (GET /v1/models' data, of
    dicts; POST /tokenize's tokens, of ints); None for anything else."""
    try:
        data = a.json()
    except ValueError:
        return None
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(x, kind) for x in items):
        return None
    return items


def _start(body: bytes) -> str:
    text = body[:40].decode("utf-8", "replace")
    return f"{text!r}" if text else "an empty body"


def _context(t: Target, entry: dict[str, Any]) -> Check:
    n = f"{t.name}: context"
    mml = entry.get("max_model_len")
    if not isinstance(mml, int) or isinstance(mml, bool):
        return skip(n, "the server does not report max_model_len (not vLLM?): the run needs "
                    f"{t.seq_len} tokens ({t.seq_field})")
    if mml < t.seq_len:
        return fail(n, f"max_model_len {mml} < the run's {t.seq_len} tokens ({t.seq_field}): serve "
                    f"with --max-model-len {t.seq_len} (prime-rl: --vllm.max-model-len) or lower "
                    "prompt_tokens / max_tokens")
    return ok(n, f"max_model_len {mml} >= the run's {t.seq_len} tokens ({t.seq_field})")


def _tokenizer(p: _Probe, student: Student) -> tuple[list[int] | None, Check]:
    """The server's /tokenize of the probe text and of a chat-templated conversation against
    the student's tokenizer; also returns ids for the route probe."""
    from whileai.vocab.compare import PROBE_CONVERSATION, PROBE_TEXT

    n = f"{p.t.name}: tokenizer"
    try:
        text = p.call("POST", "/tokenize", {"model": p.t.model, "prompt": PROBE_TEXT,
                                            "add_special_tokens": False})
        if text.status == 404:
            return None, skip(n, "no POST /tokenize (not a vLLM server): ids not compared")
        if text.status != 200:
            return None, fail(n, p.refused(text.status, "POST /tokenize"), text.seconds)
        chat = p.call("POST", "/tokenize", {"model": p.t.model, "messages": PROBE_CONVERSATION,
                                            "add_generation_prompt": False})
    except HttpFailure as e:
        return None, fail(n, f"POST /tokenize: {e}")
    served = _list_of(text, "tokens", int)
    served_chat = _list_of(chat, "tokens", int) if chat.status == 200 else None
    if served is None:
        return None, fail(n, f"POST /tokenize answered {_start(text.body)}, not vLLM's {{tokens: "
                          "[...]}}", text.seconds)
    probe_ids = served[:8] or None
    if student.error:
        return probe_ids, skip(n, student.error)
    mine, mine_chat = student.encode(PROBE_TEXT), student.chat()
    if mine != served:
        at = next((i for i, (a, b) in enumerate(zip(mine, served, strict=False)) if a != b),
                  min(len(mine), len(served)))
        return probe_ids, fail(n, f"the server tokenizes the probe text differently from the "
                               f"student's tokenizer ({student.where}) from token {at} on "
                               f"({len(served)} vs {len(mine)} tokens): the teacher would score "
                               "other tokens than the student samples; use one tokenizer")
    if mine_chat is None or served_chat is None:
        why = "the student has no chat template here" if mine_chat is None else \
            "the server did not tokenize chat messages"
        return probe_ids, ok(n, f"the probe text tokenizes to the same {len(mine)} ids as the "
                             f"student's tokenizer ({student.where}); chat template not compared: {why}")
    if mine_chat != served_chat:
        return probe_ids, fail(n, f"same ids for the probe text, but the server's chat template "
                               f"renders the probe conversation to other ids ({len(served_chat)} vs "
                               f"{len(mine_chat)} tokens) than the student's ({student.where})")
    return probe_ids, ok(n, f"the probe text ({len(mine)} ids) and a chat-templated conversation "
                         f"({len(mine_chat)} ids) tokenize exactly as the student's tokenizer "
                         f"({student.where})")


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
        return fail(n, f"POST {t.root}{GENERATE}: HTTP {a.status}: this is not prime-rl's inference "
                    f"server (prime-rl's orchestrator {what}, with sampling_params"
                    f"{'.prompt_logprobs' if t.role == 'score' else ''}): serve it with {t.serve()}",
                    a.seconds)
    if a.status != 200:
        return fail(n, p.refused(a.status, f"POST {GENERATE}"), a.seconds)
    try:
        data = a.json()
    except ValueError:
        return fail(n, f"POST {GENERATE} answered {_start(a.body)}, not JSON", a.seconds)
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
        return fail(n, f"POST /v1/completions answered {_start(a.body)}, not JSON", a.seconds)
    if not isinstance(choice, dict) or not isinstance(choice.get("token_ids"), list) \
            or not isinstance(choice.get("prompt_token_ids"), list):
        return fail(n, "POST /v1/completions with return_token_ids answered without token_ids and "
                    "prompt_token_ids (TRL's VLLMClient reads both): a vLLM too old for TRL 1.16",
                    a.seconds)
    return ok(n, "GET /health and POST /v1/completions with return_token_ids answered as TRL's "
              "VLLMClient reads them", a.seconds)


__all__ = ["GENERATE", "Target", "probe"]
