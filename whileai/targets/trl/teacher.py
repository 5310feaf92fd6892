"""Which TRL trainer distills from an OPD spec's teacher, and the field-map rows of the two
experimental ones. Three shapes (`shape(run)`):

- "distillation": the stable `trl distillation` (DistillationTrainer): the teacher is loaded
  in-process and must share the student's vocabulary; full-vocabulary loss.
- "gold": the tokenizers differ (measured from local files, else guessed from model-name families:
  whileai.rules.tokenizers) -> trl.experimental.gold.GOLDTrainer: the teacher is loaded in-process
  with its own tokenizer and the ULD loss (Boizard 2024, arXiv:2402.12030) aligns the two
  vocabularies (GOLD's hybrid: generalized JSD on the tokens both vocabularies map, ULD on the rest).
- "server": the teacher URL names a server the user runs (its host is not `localhost`, the
  placeholder whileai's examples and the seed API write) -> ServerDistillationTrainer
  (trl.experimental.server_distillation): no local teacher; per-token logprobs come from the
  server's `/v1/completions` (`prompt_logprobs`), so the loss spans the teacher's top-1 (beta > 0)
  or top-k (beta = 0) only.

No trl import: the choice is made from the spec (and tokenizer files) alone.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from whileai.errors import SpecError
from whileai.rules.tokenizers import judge
from whileai.spec.run import OPD, RunSpec
from whileai.targets.fieldmap import Drop, Fix, Row, To

Shape = Literal["distillation", "gold", "server"]
PLACEHOLDER = "localhost"  # a teacher URL on this host is the examples' placeholder: load in-process


def served(run: RunSpec) -> bool:
    """The OPD teacher's URL names a server to query: any host but `localhost`."""
    m = run.method
    return isinstance(m, OPD) and (urlsplit(m.teacher.url).hostname or "") != PLACEHOLDER


def shape(run: RunSpec) -> Shape | None:
    """The OPD trainer for this run (None: not OPD)."""
    if not isinstance(run.method, OPD):
        return None
    if served(run):
        return "server"
    return "gold" if judge(run).differ else "distillation"


def refuse_served_across(run: RunSpec) -> None:
    """A served teacher with another tokenizer: refused (TRL's target refuse step)."""
    if served(run) and judge(run).differ:
        raise SpecError("method.teacher.url", run.method.teacher.url, "a teacher URL on "  # type: ignore[union-attr]
                        f"{PLACEHOLDER} (loaded in-process) for a teacher with another tokenizer: "
                        "TRL's ServerDistillationTrainer sends the student's token ids to the "
                        "server, and only GOLD (in-process) aligns two vocabularies")


def is_shape(kind: Shape) -> Any:
    """A field-map row's `when`: the run's OPD trainer is `kind`."""
    return lambda r: shape(r) == kind


def server_url(run: RunSpec) -> str:
    """TRL's VLLMClient appends /v1/models and /v1/completions to the base URL itself."""
    url = run.method.teacher.url.rstrip("/")  # type: ignore[union-attr]
    return url.removesuffix("/v1")


def _tokenizers(r: RunSpec) -> str:
    j = judge(r)
    return f"the tokenizers differ ({j.basis}: {j.why})"


def note(run: RunSpec) -> str | None:
    """The report's line on the trainer and its loss (GOLD, a served teacher); None otherwise."""
    kind = shape(run)
    if kind == "gold":
        return ("trainer: trl.experimental.gold.GOLDTrainer (GOLD, TRL's 'Unlocking On-Policy "
                "Distillation for Any Model Family', Patino et al. 2025), because "
                f"{_tokenizers(run)}; loss: GOLD's hybrid, generalized JSD (beta) on the tokens both "
                "vocabularies map and Universal Logit Distillation on the rest (Boizard 2024, "
                "arXiv:2402.12030), the teacher scoring the student's text re-tokenized with its own "
                "tokenizer; what a cross-tokenizer alignment loses: Sun 2026, arXiv:2605.07711")
    if kind == "server":
        m = run.method
        assert isinstance(m, OPD)
        loss = {"reverse_kl": "the sampled token against the rest of the mass (a sampled-token "
                "estimate)", "jsd": "the teacher's top-1 token and the sampled one, plus the rest "
                "of the mass", "forward_kl": f"the teacher's top-{m.top_k or 1} tokens, plus the "
                "rest of the mass"}[m.divergence]
        return ("trainer: trl.experimental.server_distillation.ServerDistillationTrainer, no teacher "
                f"in the training processes; loss: sparse, {loss}; the server at {server_url(run)} must "
                "answer GET /health, GET /v1/models (its first id is the model scored with) and "
                "POST /v1/completions with token-id prompts, max_tokens 1 and prompt_logprobs (a vLLM "
                "server, no API key); TRL's client needs the vllm package installed")
    return None


ROWS: list[Row] = [
    # GOLD: cross-tokenizer OPD
    To("method.type", "<command>", lambda r: "python train.py", when=is_shape("gold"),
       note=lambda r: "trl.experimental.gold.GOLDTrainer through the train.py beside the config: "
       + _tokenizers(r)),
    To("method.teacher.model", "teacher_model_name_or_path", when=is_shape("gold"),
       note="loaded in-process with its own tokenizer"),
    To("method.teacher.model", "teacher_tokenizer_name_or_path", when=is_shape("gold"),
       note="the teacher re-tokenizes the student's text; ULD aligns the two by byte offsets"),
    Fix("use_uld_loss", True, "cross-tokenizer: Universal Logit Distillation (Boizard 2024, "
        "arXiv:2402.12030) in place of a one-vocabulary JSD", when=is_shape("gold")),
    Fix("uld_use_hybrid_loss", True, "GOLD's hybrid: generalized JSD (beta) on tokens both "
        "vocabularies map, ULD on the rest, weighted by the vocabularies' overlap", when=is_shape("gold")),
    Fix("lmbda", 1.0, "every batch is the student's own completions: on-policy (GOLD's default 0.5 "
        "mixes in dataset completions, which the tasks do not have)", when=is_shape("gold")),
    Fix("top_p", 1.0, "sample from the full distribution (GOLD's default 0.95 truncates it)",
        when=is_shape("gold")),
    To("prompt_tokens", "max_length", lambda r: r.prompt_tokens + r.method.max_tokens, when=is_shape("gold"),
       note="prompt_tokens + max_tokens: GOLDConfig needs max_completion_length < max_length"),
    Drop("method.teacher.url", "GOLDTrainer loads the teacher in-process (it needs its full "
         "logits over its own vocabulary); the endpoint is not queried", when=is_shape("gold")),
    # a served teacher
    To("method.type", "<command>", lambda r: "python train.py", when=is_shape("server"),
       note="trl.experimental.server_distillation.ServerDistillationTrainer through the train.py "
       "beside the config: the teacher's URL is not localhost, so TRL queries it"),
    To("method.teacher.url", "teacher_model_server_url", server_url, when=is_shape("server"),
       note="TRL's VLLMClient: GET /health, GET /v1/models, then POST /v1/completions with token-id "
       "prompts, max_tokens 1 and prompt_logprobs k (a vLLM server; trl needs vllm installed)"),
    Drop("method.teacher.model", "the server answers with the model it serves (TRL's VLLMClient "
         "takes the first id of /v1/models)", when=is_shape("server")),
    To("method.top_k", "loss_top_k", lambda r: r.method.top_k or 1,  # type: ignore[union-attr]
       when=lambda r: shape(r) == "server" and r.method.divergence == "forward_kl",  # type: ignore
       note="the teacher's top-k logprobs, the loss's support (forward KL: beta 0)"),
    Drop("method.top_k", "with beta > 0 ServerDistillationTrainer's loss takes the sampled token "
         "(reverse KL) or it and the teacher's top-1 (JSD), each against the rest of the mass; "
         "loss_top_k stays 1 (TRL: `loss_top_k must be 1 with beta>0`)",
         when=lambda r: shape(r) == "server" and r.method.divergence != "forward_kl"),  # type: ignore
]


__all__ = ["ROWS", "Shape", "is_shape", "note", "refuse_served_across", "served", "server_url",
           "shape"]
