"""What `whileai preflight` calls for a prime-rl run, as prime-rl 559b447 calls it
(src/prime_rl/utils/client.py):

- its client waits for each frozen model's server (`check_health`: `GET /health` on each admin
  URL, retried for `wait_for_ready_timeout` seconds) and, unless `skip_model_check`, finds the
  model in `GET <admin root>/v1/models` (`maybe_check_has_model`);
- OPD's teacher (and OPSD's policy, the student's own server) is prefill-scored with
  `POST <root>/inference/v1/generate`, body `{model, token_ids, sampling_params: {max_tokens 1,
  temperature 1, top_p 1, prompt_logprobs 1}}`, whose answer's `prompt_logprobs` holds one
  `{token_id: {logprob}}` per prompt token (`null` for the first); SFT's teacher samples through the
  same token-in route (`choices[0].token_ids`); the key is `os.environ[api_key_var]`, sent as a
  bearer token ("EMPTY" when unset), with the configured headers.

A scoring server needs `max_model_len > seq_len`: prime-rl scores a whole sequence as a prompt
with max_tokens 1, and vLLM refuses a prompt of max_model_len tokens when it must generate.
Every fix line is the teacher plan's serve line (the run lines' line).
"""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING, Any

from whileai.targets.prime_rl.stage_script import WAIT_S
from whileai.targets.probe import Call, Probe, ServerProbe, Wait, seq_len, teachers

if TYPE_CHECKING:
    from whileai.report.records import Teacher
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled

GENERATE = "/inference/v1/generate"
CLIENT = "prime-rl's client"


def probes(run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
    """Every distinct teacher server (URL, model, scoring or sampling) of every stage and source,
    then the student's server when given (OPSD scores on the policy's own server)."""
    found: dict[tuple[str, str, bool], ServerProbe] = {}
    for t in teachers(stages):
        ep = t.endpoint
        key = (ep.url, ep.model, t.scores)
        # the target's plan of this server: its serve line, how the run calls it
        rec = next((r for r in t.stage.teachers if (r.model, r.url) == (ep.model, ep.url)), None)
        old = found.get(key)
        label, field, seq = (f"{old.label} + {t.label}", old.field, max(old.seq_len, t.seq_len)) \
            if old is not None else (t.label, t.field, t.seq_len)
        found[key] = server(label, field, ep, t.scores, seq, t.seq_field, rec)
    out: list[Probe] = list(found.values())
    if student is not None:
        out.append(server("student endpoint", "--student-endpoint", student, True,
                          *seq_len(stages[-1]), None))
    return out


def server(label: str, field: str, ep: Endpoint, scores: bool, seq: int, seq_field: str,
           rec: Teacher | None) -> ServerProbe:
    """One server as the run calls it; rec: the compiled plan of it (its serve line and client
    settings), None for a server the run does not plan."""
    client: dict[str, Any] = dict(rec.client) if rec is not None else {}
    need = seq + (1 if scores else 0)
    serve = rec.serve if rec is not None and rec.serve else fallback(ep.url, ep.model, need)
    wait = Wait(CLIENT, int(client.get("wait_for_ready_timeout") or WAIT_S),
                tuple(client.get("admin_base_url") or ()), bool(client.get("skip_model_check")))
    why = (f"prime-rl scores a whole sequence of up to {seq} tokens as a prompt with max_tokens 1, "
           "and vLLM refuses a prompt of max_model_len tokens") if scores else ""
    return ServerProbe(label, field, ep.url, ep.model, ep.api_key_env, seq, seq_field,
                       "scoring route" if scores else "sampling route",
                       (generate(ep.model, scores, serve),), serve, wait=wait,
                       serves_it=rec is not None and bool(rec.serve),
                       headers=dict(client.get("headers") or {}),
                       headers_from_env=dict(client.get("headers_from_env") or {}), prefill_why=why,
                       template_why=TEMPLATE_WHY)


TEMPLATE_WHY = ("prime-rl's scoring is token-in and the student's renderer writes the completions "
                "(orchestrator/algo/base.py)")


def fallback(url: str, model: str, need: int) -> str:
    """prime-rl's own inference server for a server the run does not plan."""
    port = re.search(r":(\d+)(?:/|$)", url)
    where = f" --server.port {port.group(1)}" if port else ""
    return (f"uv run inference --vllm.model {model}{where} --vllm.max-model-len {need} "
            "(prime-rl's own inference server, from a prime-rl checkout)")


def generate(model: str, scores: bool, serve: str) -> Call:
    """The token-in route: prefill scoring (prompt_logprobs 1) or sampling."""
    what = "prefill-scores the student's tokens there" if scores else "samples there"
    missing = (f"nothing serves the token-in route there (prime-rl's orchestrator {what}, with "
               f"sampling_params{'.prompt_logprobs' if scores else ''}): prime-rl's `inference` "
               f"serves it, and so does vLLM from 0.26 on (its api_server mounts {GENERATE}); "
               f"serve it with {serve}")

    def body(ids: list[int]) -> dict[str, Any]:
        params: dict[str, Any] = {"max_tokens": 1, "temperature": 1.0, "top_p": 1.0}
        if scores:
            params["prompt_logprobs"] = 1
        return {"model": model, "token_ids": ids, "sampling_params": params}

    return Call("POST", GENERATE, body, partial(_scored, serve) if scores else _sampled,
                lambda status: missing if status in (404, 405) else None)


def _sampled(data: Any, ids: list[int]) -> tuple[bool, str]:
    choice = ((data.get("choices") or [{}]) if isinstance(data, dict) else [{}])[0]
    got = choice.get("token_ids") if isinstance(choice, dict) else None
    if not isinstance(got, list) or not got:
        return False, f"POST {GENERATE} answered without choices[0].token_ids"
    return True, f"POST {GENERATE} sampled {len(got)} token id(s) from {len(ids)} prompt ids"


def _scored(serve: str, data: Any, ids: list[int]) -> tuple[bool, str]:
    rows = data.get("prompt_logprobs") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != len(ids) or not all(_logprob(r) for r in rows[1:]):
        have = len(rows) if isinstance(rows, list) else 0
        return False, (f"POST {GENERATE} with prompt_logprobs 1 answered {have} usable prompt "
                       f"log-probs for {len(ids)} prompt tokens (prime-rl needs one per token): not "
                       f"prime-rl's inference server; serve it with {serve}")
    return True, (f"POST {GENERATE} with token_ids and prompt_logprobs 1 returned one log-prob per "
                  f"prompt token ({len(ids)})")


def _logprob(row: Any) -> bool:
    if not isinstance(row, dict) or not row:
        return False
    first = next(iter(row.values()))
    return isinstance(first, dict) and isinstance(first.get("logprob"), (int, float))


__all__ = ["GENERATE", "probes"]
