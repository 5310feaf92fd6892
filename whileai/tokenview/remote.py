"""OpenAI-compatible endpoints (vLLM), the servers a prime-rl run uses: stdlib HTTP only.

- prompts become token ids through the server's own tokenizer (vLLM's `POST /tokenize`, beside
  `/v1`), so the ids are the ones the server will score;
- generation: `POST /v1/completions` with the prompt as token ids, `n`, `temperature`, `top_p 1`,
  `seed`, and `return_tokens_as_token_ids` (the sampled ids come back as `token_id:N`);
- scoring: the context + completion ids sent back as a prompt with `max_tokens 1` and vLLM's
  `prompt_logprobs: k` (each prompt token's log-prob, rank and the top-k); a server that ignores
  it is asked again with `echo: true, logprobs: k` (OpenAI's legacy form: log-prob and top-k by
  token text, no ranks beyond k);
- a run's own samples (`inspect --run` with a teacher): prime-rl's teacher route at the pin,
  `POST {root}/inference/v1/generate` with the sample's token ids and `sampling_params
  {max_tokens 1, temperature 1, top_p 1, prompt_logprobs k}` (prime-rl 559b447
  src/prime_rl/utils/client.py:479-508, `prefill_logprobs`, which asks k = 1).

An endpoint returns at most the top-k log-probs of each position, so the full-vocabulary KL
cannot be computed from it; the sampled-token signal is exact. The API key is read from the
environment variable the spec names and sent as a bearer token; it is never printed or written.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from typing import Any

from whileai.errors import SpecError, mask, raw
from whileai.tokenview.data import Prompt
from whileai.tokenview.scoring import Alt, Generated, Scored

_ID = re.compile(r"^token_id:(-?\d+)$")


class EndpointModel:
    kind = "endpoint"
    full_distribution = False

    def __init__(self, url: str, model: str, api_key_env: str | None, *, flag: str,
                 timeout: float = 120.0) -> None:
        self.url, self.name, self.api_key_env, self.flag = url.rstrip("/"), model, api_key_env, flag
        self.timeout = timeout
        self.logprob_source = "prompt_logprobs"
        self._key = os.environ.get(api_key_env) if api_key_env else None
        self._texts: dict[int, str] = {}

    @property
    def root(self) -> str:
        """The server root (vLLM serves /tokenize beside /v1, not under it)."""
        return re.sub(r"/v1$", "", self.url)

    def post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
        if self._key:
            req.add_header("Authorization", f"Bearer {self._key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                out = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            allowed = (f"a valid API key in ${self.api_key_env}" if e.code in (401, 403) and self.api_key_env
                       else f"a running OpenAI-compatible server (vLLM) serving {self.name!r}")
            raise SpecError(self.flag, raw(f"{url} answered HTTP {e.code}"), allowed,
                            hint=mask(detail)) from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise SpecError(self.flag, raw(f"{url} answered nothing within {self.timeout:g} s"),
                                "a server that answers within --timeout seconds",
                                hint="timed out") from None
            raise SpecError(self.flag, raw(f"{url} unreachable"),
                            "a running OpenAI-compatible server (vLLM) for this model",
                            hint=mask(str(reason))) from None
        if not isinstance(out, dict):
            raise SpecError(self.flag, raw(f"{url} returned no JSON object"), "an OpenAI-compatible server")
        return out

    def check(self) -> None:
        """One small request, so a wrong URL, model name or key fails before any model loads."""
        self.encode("ok")

    def encode(self, prompt: Prompt) -> list[int]:
        body: dict[str, Any] = {"model": self.name}
        if isinstance(prompt, str):
            body["prompt"] = prompt
        else:
            body |= {"messages": prompt, "add_generation_prompt": True}
        out = self.post(f"{self.root}/tokenize", body)
        tokens = out.get("tokens")
        if not isinstance(tokens, list):
            raise SpecError(self.flag, raw(f"{self.root}/tokenize gave no tokens"),
                            "a vLLM server (its /tokenize turns the prompt into the ids it scores)")
        return [int(t) for t in tokens]

    def decode(self, ids: list[int]) -> str:
        if not ids:
            return ""
        out = self.post(f"{self.root}/detokenize", {"model": self.name, "tokens": ids})
        return str(out.get("prompt", ""))

    def token_texts(self, ids: list[int]) -> list[str]:
        return [self._texts.get(i) or self.decode([i]) for i in ids]

    def generate(self, contexts: list[list[int]], n: int, max_tokens: int, temperature: float,
                 seeds: list[int]) -> list[list[Generated]]:
        return [self._sample(c, n, max_tokens, temperature, s) for c, s in zip(contexts, seeds, strict=True)]

    def _sample(self, context: list[int], n: int, max_tokens: int, temperature: float,
                seed: int) -> list[Generated]:
        out = self.post(f"{self.url}/completions", {
            "model": self.name, "prompt": context, "n": n, "max_tokens": max_tokens,
            "temperature": temperature, "top_p": 1.0, "seed": seed, "logprobs": 0,
            "return_tokens_as_token_ids": True, "skip_special_tokens": False,
        })
        choices = sorted(out.get("choices", []), key=lambda c: c.get("index", 0))
        if len(choices) != n:
            raise SpecError(self.flag, raw(f"{len(choices)} completions for n={n}"),
                            "an OpenAI-compatible /v1/completions")
        return [Generated(self._ids(c), c.get("finish_reason") == "stop") for c in choices]

    def _ids(self, choice: dict[str, Any]) -> list[int]:
        if isinstance(choice.get("token_ids"), list):
            return [int(t) for t in choice["token_ids"]]
        tokens = (choice.get("logprobs") or {}).get("tokens") or []
        ids = [_ID.match(str(t)) for t in tokens]
        if not all(ids):
            raise SpecError(self.flag, raw("completion tokens without ids"),
                            "a vLLM server (return_tokens_as_token_ids)")
        return [int(m.group(1)) for m in ids if m]

    def score(self, context: list[int], completion: list[int], top_k: int) -> Scored:
        if not completion:
            return Scored([], [], [], [], None)
        body = {"model": self.name, "prompt": context + completion, "max_tokens": 1,
                "temperature": 0.0}
        if self.logprob_source == "prompt_logprobs":
            out = self.post(f"{self.url}/completions", body | {"prompt_logprobs": top_k})
            rows = (out.get("choices") or [{}])[0].get("prompt_logprobs")
            if isinstance(rows, list) and len(rows) >= len(context) + len(completion):
                return self._from_prompt_logprobs(rows[len(context):len(context) + len(completion)],
                                                  completion, top_k)
            self.logprob_source = "echo"
        out = self.post(f"{self.url}/completions", body | {"echo": True, "logprobs": top_k})
        lp = (out.get("choices") or [{}])[0].get("logprobs") or {}
        values, tops, tokens = lp.get("token_logprobs"), lp.get("top_logprobs"), lp.get("tokens")
        end = len(context) + len(completion)
        if not (isinstance(values, list) and isinstance(tops, list) and len(values) >= end):
            raise SpecError(self.flag, raw("no prompt log-probs in the answer"),
                            "a server that returns prompt log-probs: vLLM (prompt_logprobs) or "
                            "echo with logprobs")
        return self._from_echo(values[len(context):end], tops[len(context):end],
                               (tokens or [])[len(context):end], top_k)

    def prefill(self, ids: list[int], top_k: int) -> list[Any]:
        """prime-rl's teacher scoring of a sample (its body, with k = top_k instead of 1: vLLM
        returns the prompt token's own log-prob and rank at any k): one row per id, the first
        None (no context), each {id: {logprob, rank, decoded_token}} with the top-k."""
        url = f"{self.root}/inference/v1/generate"
        out = self.post(url, {"model": self.name, "token_ids": ids, "sampling_params": {
            "max_tokens": 1, "temperature": 1.0, "top_p": 1.0, "prompt_logprobs": top_k}})
        rows = out.get("prompt_logprobs")
        if not isinstance(rows, list) or len(rows) != len(ids):
            got = f"{len(rows)} prompt_logprobs rows" if isinstance(rows, list) else "no prompt_logprobs"
            raise SpecError(self.flag, raw(f"{url} answered {got} for {len(ids)} token ids"),
                            "prime-rl's inference server (its /inference/v1/generate returns "
                            "prompt_logprobs, one row per token id)")
        return rows

    def _from_prompt_logprobs(self, rows: list[Any], completion: list[int], top_k: int) -> Scored:
        lps, ranks, tops, texts = [], [], [], []
        for tid, row in zip(completion, rows, strict=True):
            entries = {int(k): v for k, v in (row or {}).items()}
            mine = entries.get(tid)
            if mine is None:
                raise SpecError(self.flag, raw(f"no log-prob for prompt token {tid}"), "vLLM prompt_logprobs")
            lps.append(float(mine["logprob"]))
            ranks.append(int(mine["rank"]) if mine.get("rank") is not None else None)
            text = mine.get("decoded_token")
            texts.append(text if isinstance(text, str) else "")
            if isinstance(text, str):
                self._texts[tid] = text
            best = sorted(entries.items(), key=lambda kv: -float(kv[1]["logprob"]))[:top_k]
            tops.append([Alt(i, str(v.get("decoded_token") or ""), float(v["logprob"])) for i, v in best])
        return Scored(lps, ranks, tops, texts, None)

    def _from_echo(self, values: list[Any], tops: list[Any], tokens: list[Any], top_k: int) -> Scored:
        lps = [float(v) for v in values]
        alts, ranks = [], []
        for lp, top in zip(lps, tops, strict=True):
            best = sorted((top or {}).items(), key=lambda kv: -float(kv[1]))[:top_k]
            alts.append([Alt(None, str(t), float(v)) for t, v in best])
            higher = sum(1 for _, v in best if float(v) > lp)
            ranks.append(higher + 1 if higher < len(best) or len(best) < top_k else None)
        return Scored(lps, ranks, alts, [str(t) for t in tokens] or None, None)
