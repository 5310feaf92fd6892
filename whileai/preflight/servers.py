"""Probes of one served model (a teacher, or the student's inference server), made the way the
run calls it. What to call and how to judge each answer is the target's (its `probes` hook:
whileai.targets.probe.ServerProbe, built in whileai/targets/<target>/probe.py); this module sends
the requests within the deadline and words the lines, in order:

- reachable: the way the run's client waits for the server (`ServerProbe.wait`, whileai.preflight.
  ready), or, for a client that only lists the models, `GET /v1/models` answering;
- model: the model is listed (`skip_model_check`: a skip when it is not);
- context: `max_model_len` in the listing against the run's sequence length (+ 1 where the run
  scores whole sequences as prompts);
- tokenizer: vLLM's `POST <root>/tokenize` against the student's own tokenizer
  (whileai.preflight.tokenize), a note at worst: the run never calls /tokenize;
- the route: each of the target's `Call`s in turn, judged by the target.

After a failure that stops the conversation (unreachable, a refused key) the rest are `skip`
naming it. Every fix line is the target's serve line for that server.
"""

from __future__ import annotations

import os
import time
from typing import Any

from whileai.preflight import ready
from whileai.preflight.http import Answer, HttpFailure, request
from whileai.preflight.report import Check, fail, ok, skip
from whileai.preflight.tokenize import tokenizer
from whileai.preflight.tokens import Student
from whileai.targets.probe import ServerProbe

FILLER = [1, 2, 3, 4, 5, 6, 7, 8]  # token ids sent when the server's /tokenize gave none


class _Client:
    """One server's calls: the run's headers and key on each, within the deadline."""

    def __init__(self, t: ServerProbe, deadline: float) -> None:
        self.t, self.deadline = t, deadline
        key = os.environ.get(t.key_env) if t.key_env else None
        self.key_set = bool(key)
        env = {k: os.environ[v] for k, v in t.headers_from_env.items() if v in os.environ}
        self.extra: dict[str, str] = {**t.headers, **env}
        self.headers: dict[str, str] = dict(self.extra)
        if key or t.empty_key is not None:  # an OpenAI client sends a placeholder without a key
            self.headers["Authorization"] = f"Bearer {key or t.empty_key}"

    def admin_headers(self) -> dict[str, str]:
        """A waiting client's admin calls: the headers, and the key only when it is set."""
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


def probe(t: ServerProbe, deadline: float, student: Student) -> list[Check]:
    """Every check of one server, in order."""
    if t.wait is None:
        return _listed(t, deadline, student)
    p = _Client(t, deadline)
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
    if entry is None and not t.wait.skip_model_check:
        served = ", ".join(repr(str(m.get("id"))) for m in listed[:5]) or "no model"
        out.append(fail(f"{n}: model", f"serves {served}, not {t.model!r} ({t.field}.model): point "
                        "the field at the served name or serve this model there"))
        return out + _rest(t, "not probed: the server does not serve this model", start=2)
    out.append(ok(f"{n}: model", f"serves {t.model!r}") if entry is not None else
               skip(f"{n}: model", f"{t.model!r} is not listed, and skip_model_check is set: the "
                    "run does not look"))
    out.append(_context(t, entry or {}))
    return out + _tail(p, student)


def _tail(p: _Client, student: Student) -> list[Check]:
    ids, tok = tokenizer(p, student)
    return [tok, _route(p, ids)]


def _listed(t: ServerProbe, deadline: float, student: Student) -> list[Check]:
    """A server whose client does not wait for it: reachable at /v1/models, then as above."""
    p = _Client(t, deadline)
    n = t.name
    try:
        models = p.call("GET", "/v1/models")
    except HttpFailure as e:
        hint = "; serve it:" if e.kind == "refused" else ""
        return [fail(f"{n}: reachable", f"GET {t.root}/v1/models: {e}{hint}",
                     command=t.serve if hint else None),
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


def _rest(t: ServerProbe, why: str, start: int = 1) -> list[Check]:
    names = ["reachable", "model", "context", "tokenizer", t.route]
    return [skip(f"{t.name}: {x}", why) for x in names[start:]]


def _context(t: ServerProbe, entry: dict[str, Any]) -> Check:
    n = f"{t.name}: context"
    mml = entry.get("max_model_len")
    plus = t.need > t.seq_len
    if not isinstance(mml, int) or isinstance(mml, bool):
        return skip(n, "the server does not report max_model_len (not vLLM?): the run needs "
                    f"{t.need} tokens ({t.seq_field}{' + 1' if plus else ''})")
    if mml < t.need:
        why = (f"max_model_len {mml} <= the run's {t.seq_len} tokens ({t.seq_field}): {t.prefill_why}"
               if plus else f"max_model_len {mml} < the run's {t.seq_len} tokens ({t.seq_field})")
        return fail(n, f"{why}; serve it with max_model_len >= {t.need}:", command=t.serve)
    return ok(n, f"max_model_len {mml} >= {t.need} ({t.seq_field}"
              f"{' + 1, as a scoring server needs' if plus else ''})")


def _route(p: _Client, ids: list[int] | None) -> Check:
    """The target's calls in turn: the first that fails is the check's line, else the last's."""
    t = p.t
    n = f"{t.name}: {t.route}"
    ids = ids if ids and len(ids) >= 2 else FILLER
    done = ok(n, "nothing to call")
    for call in t.calls:
        start = time.monotonic()
        try:
            a = p.call(call.method, call.path, call.body(ids) if call.body is not None else None)
        except HttpFailure as e:
            return fail(n, f"{call.method} {call.path}: {e}", time.monotonic() - start)
        if a.status != 200:
            said = call.status(a.status) if call.status is not None else None
            if said:
                line = f"{call.method} {t.root}{call.path}: HTTP {a.status}: {said}"
                return fail(n, line, a.seconds, _serve_at_end(t, line))
            return fail(n, p.refused(a.status, f"{call.method} {call.path}"), a.seconds)
        if call.judge is None:
            done = ok(n, f"{call.method} {call.path} answered 200", a.seconds)
            continue
        try:
            data = a.json()
        except ValueError:
            return fail(n, f"{call.method} {call.path} answered {a.start()}, not JSON", a.seconds)
        passed, line = call.judge(data, ids)
        if not passed:
            return fail(n, line, a.seconds, _serve_at_end(t, line))
        done = ok(n, line, a.seconds)
    return done


__all__ = ["probe"]


def _serve_at_end(t: ServerProbe, detail: str) -> str | None:
    """The teacher's serve line where a detail ends with it (the report prints it whole)."""
    return t.serve if t.serve and detail.endswith(" " + t.serve) else None
