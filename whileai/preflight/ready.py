"""The first two things prime-rl's client does with a frozen model's server, as it does them
(prime-rl 559b447, src/prime_rl/utils/client.py):

- `check_health`: `GET <admin root>/health` on each admin URL (`admin_base_url`, else the base
  URL without /v1) and, when admin URLs are set, on the base URL too; 404 skips the wait; any
  other failure (503 while the model loads, a refused connection) is retried every second for up
  to `wait_for_ready_timeout` seconds (1800), then the run aborts. Here the wait is bounded: the
  probe polls for at most half the time left, then says what the run would do;
- `maybe_check_has_model`: unless `skip_model_check`, `GET <admin root>/v1/models` on each admin
  URL must list the model (`result.json()["data"]`, no status check: a refusal is an error).

The admin calls carry the configured headers (`headers`, `headers_from_env` resolved) and
`Authorization: Bearer $<api_key_var>` only when the variable is set (`setup_admin_clients`).
"""

from __future__ import annotations

import time
from typing import Any

from whileai.preflight.http import Answer, HttpFailure, request
from whileai.preflight.report import Check, fail, ok, skip

WAIT_S = 1800  # prime-rl's ClientConfig.wait_for_ready_timeout default
POLL_S = 0.2


def admin_roots(root: str, client: dict[str, Any]) -> list[str]:
    """The roots the admin client calls (`admin_base_url`, else the base URL's root)."""
    urls = client.get("admin_base_url") or []
    return [u.rstrip("/").removesuffix("/v1") for u in urls] or [root]


def health(p: Any, deadline: float) -> tuple[Check, bool]:
    """The `reachable` check: GET /health on every root prime-rl waits on, polled while it
    answers anything but 200/404 (bounded); returns the check and whether to go on."""
    n = f"{p.t.name}: reachable"
    roots = admin_roots(p.t.root, p.t.client)
    if p.t.client.get("admin_base_url"):
        roots.append(p.t.root)  # the router: it serves once its workers are healthy
    wait = int(p.t.client.get("wait_for_ready_timeout") or WAIT_S)
    start = time.monotonic()
    until = start + max(1.0, (deadline - start) / 2)
    said = []
    for root in roots:
        first: int | None = None
        while True:
            try:
                a = request("GET", root + "/health", deadline=deadline, headers=p.admin_headers())
            except HttpFailure as e:
                hint = f"; serve it: {p.t.serve()}" if e.kind == "refused" or p.t.serve_line else ""
                return fail(n, f"GET {root}/health: {e}{hint}"), False
            if a.status in (200, 404):
                break
            if a.status in (401, 403):
                return fail(n, p.refused(a.status, "GET /health") + f" (prime-rl's client would "
                            f"retry it for {wait} s, then abort)", a.seconds), False
            first = first or a.status
            if time.monotonic() + POLL_S >= until:
                return fail(n, f"GET {root}/health answered HTTP {a.status} for "
                            f"{time.monotonic() - start:.1f} s: not ready; prime-rl's client "
                            f"waits up to {wait} s (wait_for_ready_timeout) for a 200 there, then "
                            "aborts the run", time.monotonic() - start), False
            time.sleep(POLL_S)
        took = time.monotonic() - start
        said.append(f"GET {root}/health: " + ("no such route (prime-rl's client then skips its "
                                              "wait)" if a.status == 404 else "200") +
                    (f" after {took:.1f} s of HTTP {first} (prime-rl's client waits up to {wait} "
                     "s)" if first else ""))
    return ok(n, "; ".join(said), time.monotonic() - start), True


def models(p: Any) -> tuple[Answer | None, Check | None]:
    """GET /v1/models on the first admin root: the answer (for the model and context checks) or
    the FAIL that stops the probe; with skip_model_check a failure is only a skip."""
    root = admin_roots(p.t.root, p.t.client)[0]
    lenient = bool(p.t.client.get("skip_model_check"))
    n = f"{p.t.name}: model"
    try:
        a = request("GET", root + "/v1/models", deadline=p.deadline, headers=p.admin_headers())
    except HttpFailure as e:
        return None, (skip if lenient else fail)(n, f"GET {root}/v1/models: {e}")
    if a.status != 200:
        why = p.refused(a.status, "GET /v1/models")
        if lenient:
            return None, skip(n, f"{why}; skip_model_check is set, so the run does not ask")
        return None, fail(n, why + " (prime-rl's client reads the model list there)", a.seconds)
    return a, None


__all__ = ["WAIT_S", "admin_roots", "health", "models"]
