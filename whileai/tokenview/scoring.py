"""What a scoring backend offers (local models and endpoints alike), and the numbers it returns."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from whileai.tokenview.data import Prompt


class Alt(NamedTuple):
    id: int | None
    text: str
    logprob: float


class Scored(NamedTuple):
    """A completion scored under one model given one context."""

    logprobs: list[float]  # log p(x_t) of each completion token
    ranks: list[int | None]  # rank of x_t (1 = most likely); None beyond a returned top-k
    top: list[list[Alt]]  # the model's top-k at each position
    texts: list[str] | None  # each token's text, when the backend reports it
    full: Any = None  # local only: a [T, V] tensor of log-probs (for the full-vocabulary KL)


class Generated(NamedTuple):
    ids: list[int]
    finished: bool  # ended with an end-of-sequence token


class Model(Protocol):
    kind: str  # "local" | "endpoint"
    name: str  # path, id or served model name
    logprob_source: str  # "forward pass" | "prompt_logprobs" | "echo"

    def encode(self, prompt: Prompt) -> list[int]:
        """Context ids: chat messages through the chat template (generation prompt added);
        text as it is, with the tokenizer's special tokens."""
        ...

    def decode(self, ids: list[int]) -> str: ...

    def token_texts(self, ids: list[int]) -> list[str]: ...

    def generate(self, contexts: list[list[int]], n: int, max_tokens: int, temperature: float,
                 seeds: list[int]) -> list[list[Generated]]:
        """`n` samples for each context (a local model runs them as one batch)."""
        ...

    def score(self, context: list[int], completion: list[int], top_k: int) -> Scored: ...

    @property
    def full_distribution(self) -> bool: ...
