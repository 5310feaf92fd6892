"""How a run's client waits for a server before it calls it (whileai.targets.probe.Wait), as
prime-rl's does (its utils/client.py):

- `health`: `GET <admin root>/health` on each admin URL (`Wait.admin`, else the base URL without
  /v1) and, when admin URLs are set, on the base URL too; 404 skips the wait; any other failure
  (503 while the model loads, a refused connection) is retried every second for up to
  `Wait.seconds`, then the run aborts. Here the wait is bounded: the probe polls for at most half
  the time left, then says what the run would do;
- `models`: unless `Wait.skip_model_check`, `GET <admin root>/v1/models` on the first admin URL
  must list the model (no status check in the client: a refusal is an error).

The admin calls carry the configured headers (`headers`, `headers_from_env` resolved) and
`Authorization: Bearer $<key variable>` only when the variable is set.
"""

from __future__ import annotations

import time
from typing import Any

from whileai.preflight.http import Answer, HttpFailure, request
from whileai.preflight.report import Check, fail, ok, skip
from whileai.targets.probe import Wait

POLL_S = 0.2


def admin_roots(root: str, wait: Wait) -> list[str]:
    """The roots the admin client calls (the admin URLs, else the base URL's root)."""
    return [u.rstrip("/").removesuffix("/v1") for u in wait.admin] or [root]


def health(p: Any, deadline: float) -> tuple[Check, bool]:
    """The `reachable` check: GET /health on every root the client waits on, polled while it
    answers anything but 200/404 (bounded); returns the check and whether to go on."""
    n = f"{p.t.name}: reachable"
    w: Wait = p.t.wait
    roots = admin_roots(p.t.root, w)
    if w.admin:
        roots.append(p.t.root)  # the router: it serves once its workers are healthy
    wait, who = w.seconds, w.client
    start = time.monotonic()
    until = start + max(1.0, (deadline - start) / 2)
    said = []
    for root in roots:
        first: int | None = None
        while True:
            try:
                a = request("GET", root + "/health", deadline=deadline, headers=p.admin_headers())
            except HttpFailure as e:
                hint = "; serve it:" if e.kind == "refused" or p.t.serves_it else ""
                return fail(n, f"GET {root}/health: {e}{hint}",
                            command=p.t.serve if hint else None), False
            if a.status in (200, 404):
                break
            if a.status in (401, 403):
                return fail(n, p.refused(a.status, "GET /health") + f" ({who} would "
                            f"retry it for {wait} s, then abort)", a.seconds), False
            first = first or a.status
            if time.monotonic() + POLL_S >= until:
                return fail(n, f"GET {root}/health answered HTTP {a.status} for "
                            f"{time.monotonic() - start:.1f} s: not ready; {who} "
                            f"waits up to {wait} s (wait_for_ready_timeout) for a 200 there, then "
                            "aborts the run", time.monotonic() - start), False
            time.sleep(POLL_S)
        took = time.monotonic() - start
        said.append(f"GET {root}/health: " + (f"no such route ({who} then skips its "
                                              "wait)" if a.status == 404 else "200") +
                    (f" after {took:.1f} s of HTTP {first} ({who} waits up to {wait} "
                     "s)" if first else ""))
    return ok(n, "; ".join(said), time.monotonic() - start), True


def models(p: Any) -> tuple[Answer | None, Check | None]:
    """GET /v1/models on the first admin root: the answer (for the model and context checks) or
    the FAIL that stops the probe; with skip_model_check a failure is only a skip."""
    w: Wait = p.t.wait
    root = admin_roots(p.t.root, w)[0]
    lenient = w.skip_model_check
    n = f"{p.t.name}: model"
    try:
        a = request("GET", root + "/v1/models", deadline=p.deadline, headers=p.admin_headers())
    except HttpFailure as e:
        return None, (skip if lenient else fail)(n, f"GET {root}/v1/models: {e}")
    if a.status != 200:
        why = p.refused(a.status, "GET /v1/models")
        if lenient:
            return None, skip(n, f"{why}; skip_model_check is set, so the run does not ask")
        return None, fail(n, why + f" ({w.client} reads the model list there)", a.seconds)
    return a, None


__all__ = ["admin_roots", "health", "models"]
