"""What `whileai preflight` calls for a TRL run (TRL 1.16.0):

- the teachers are loaded in-process (`teacher_model_name_or_path`, or `sample.py` for SFT): their
  URLs are never queried, so each is a skip, and the models are checked on this machine (`Loads`):
  present when downloads are off, and the student with an OPD teacher fitting one device;
- a student server is TRL's server mode (trl/generation/vllm_client.py, base URL = the server
  root): the client lists `GET /v1/models`, waits for `GET /health`, then calls `POST
  /v1/completions` with token-id prompts and `return_token_ids`, whose choices carry `token_ids`
  and `prompt_token_ids`; it sends a bearer token only when the key is set.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from whileai.spec import mixture
from whileai.targets.probe import Call, Loads, Probe, ServerProbe, seq_len, unprobed

if TYPE_CHECKING:
    from whileai.spec.endpoint import Endpoint
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled

IN_PROCESS = ("TRL loads the teacher in-process (teacher_model_name_or_path, or sample.py for SFT): "
              "the URL is not queried; see the memory and model checks")


def probes(run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
    out = unprobed(stages, IN_PROCESS)
    if student is not None:
        out.append(vllm_serve(student, *seq_len(stages[-1])))
    found = [(ep.model, any(e.method.SCORER == "teacher" for e in entries))
             for s in stages for _, ep, entries in mixture.teachers(s.run)]
    out.append(Loads(run.model, tuple(dict.fromkeys(m for m, _ in found)),
                     next((m for m, scores in found if scores), None)))
    return out


def vllm_serve(ep: Endpoint, seq: int, seq_field: str) -> ServerProbe:
    """The student's `trl vllm-serve` server, as TRL's VLLMClient calls it."""
    port = re.search(r":(\d+)(?:/|$)", ep.url)
    serve = f"trl vllm-serve --model {ep.model}{' --port ' + port.group(1) if port else ''}"

    def body(ids: list[int]) -> dict[str, Any]:
        return {"model": ep.model, "prompt": ids, "max_tokens": 1, "return_token_ids": True,
                "return_tokens_as_token_ids": True, "logprobs": 0}

    health = Call("GET", "/health",
                  status=lambda _: f"TRL's VLLMClient waits for a 200 there; serve it with {serve}")
    return ServerProbe("student endpoint", "--student-endpoint", ep.url, ep.model, ep.api_key_env,
                       seq, seq_field, "generation route",
                       (health, Call("POST", "/v1/completions", body, _completions)), serve,
                       wait=None, empty_key=None,
                       template_why="TRL's VLLMClient sends token-id prompts (trl/generation/vllm_client.py)")


def _completions(data: Any, ids: list[int]) -> tuple[bool, str]:
    choice = ((data.get("choices") or [{}]) if isinstance(data, dict) else [{}])[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("token_ids"), list) \
            or not isinstance(choice.get("prompt_token_ids"), list):
        return False, ("POST /v1/completions with return_token_ids answered without token_ids and "
                       "prompt_token_ids (TRL's VLLMClient reads both): a vLLM too old for TRL 1.16")
    return True, ("GET /health and POST /v1/completions with return_token_ids answered as TRL's "
                  "VLLMClient reads them")


__all__ = ["probes"]
