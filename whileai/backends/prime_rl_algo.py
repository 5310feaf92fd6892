"""prime-rl's per-method `algo` table as field-map rows, and how a method's teacher is served.

prime-rl selects the training algorithm with one table: `orchestrator.algo` for the whole run,
or `orchestrator.train.source[i].algo` for one training source (a mixture). `algo_rows(table,
field)` writes the table for the method found at spec field `field` into the TOML path `table`:

    algo_rows("orchestrator.algo")                                   # today: the run's method
    algo_rows("orchestrator.train.source[1].algo", "sources.1.method")  # a mixture's source 1

Every method field that lives in the algo table is read there or ignored with its reason;
fields that are per run in prime-rl (samples → group_size, temperature and max_tokens → the
train sampling, learning_rate → the optimizer) stay in the backend's own field map.
"""

from __future__ import annotations

from shlex import quote
from typing import Any

from whileai.backends.prime_rl_rules import renderer_for
from whileai.catalog import prime_rl
from whileai.fieldmap import Drop, Fix, Row, To, field_value
from whileai.spec import RunSpec

OPSD_REASON = "prime-rl's opd/opsd loss is the sampled-token reverse-KL estimator, not configurable"
TEACHER_GPU_MEMORY = 0.4  # prime-rl's ci opd config: teacher and policy share GPU 0
LOCAL = ("localhost", "127.0.0.1", "0.0.0.0")
# where each method's frozen teacher goes inside its algo table (OPSD's teacher is the policy)
TEACHER_TABLE = {"opd": "teacher", "sft": "sampling.source"}


def renderer(r: RunSpec) -> str:
    return renderer_for(r.model, prime_rl().schema["x-prime-rl"]["model_renderers"])[0]


def renderer_reason(r: RunSpec) -> str:
    return "loader rule: " + renderer_for(r.model, prime_rl().schema["x-prime-rl"]["model_renderers"])[1]


def teacher(method: Any) -> Any:
    """The method's frozen teacher Endpoint (OPD, SFT), else None."""
    return getattr(method, "teacher", None) if getattr(method, "type", None) in TEACHER_TABLE else None


def is_local(endpoint: Any) -> bool:
    return endpoint is not None and endpoint.url.split("/")[2].split(":")[0] in LOCAL


def serve_command(endpoint: Any) -> str:
    """The line that serves a teacher where the spec says it is (or a note for a remote one)."""
    if is_local(endpoint):
        return (f"CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model {quote(endpoint.model)} "
                f"--server.port {endpoint.port or 80} --vllm.gpu-memory-utilization "
                f"{TEACHER_GPU_MEMORY} &  # serve the teacher at {endpoint.url}")
    return (f"# first serve {endpoint.model} at {endpoint.url} (vLLM with prompt logprobs; "
            f"key in ${endpoint.api_key_env})")


def _sampler_note(r: RunSpec) -> str:
    return (f"the frozen teacher samples every training completion; the student's renderer "
            f"({renderer(r)}, orchestrator.renderer) sends it the prompt as token ids and "
            "backfills its reply into the student's tokens: teacher and student must share one "
            "tokenizer")


def algo_rows(table: str = "orchestrator.algo", field: str = "method") -> list[Row]:
    """The rows that write one method's algo table at `table` (see the module docstring)."""

    def m(r: RunSpec) -> Any:
        return field_value(r, field)

    def kind(*kinds: str) -> Any:
        return lambda r: getattr(m(r), "type", None) in kinds

    def reverse_kl(r: RunSpec) -> bool:
        return getattr(m(r), "type", None) in ("opd", "opsd") and m(r).divergence == "reverse_kl"

    def anchor(r: RunSpec) -> str | None:
        return getattr(m(r), "anchor", None) if getattr(m(r), "type", None) == "opsd" else None

    rows: list[Row] = [
        To(f"{field}.type", f"{table}.type"),
        To(f"{field}.divergence", f"{table}.type", lambda r: m(r).type, when=reverse_kl,
           note="its loss is the sampled-token reverse-KL estimator"),
        Drop(f"{field}.divergence", OPSD_REASON + "; a forward-KL or JSD objective is not offered",
             when=lambda r: kind("opd", "opsd")(r) and not reverse_kl(r)),
        Drop(f"{field}.top_k", "prime-rl scores only the sampled token (its reverse-KL "
             "estimator); there is no top-k or full-vocabulary support to restrict"),
        # OPSD
        To(f"{field}.privileged", f"{table}.demo_key",
           note="read from the task's info, then its top-level fields"),
        To(f"{field}.template", f"{table}.template"),
        Fix(f"{table}.renderer.name", renderer, renderer_reason, when=kind("opsd")),
        Drop(f"{field}.anchor", "prime-rl opsd scores against the live policy; an EMA or "
             "initial-weights teacher (SDFT, SDPO) is not offered there",
             when=lambda r: anchor(r) not in (None, "live")),
        To(f"{field}.anchor", f"{table}.type", lambda r: "opsd", when=lambda r: anchor(r) == "live",
           note="prime-rl's opsd teacher is the live policy"),
    ]
    for kind_, where in TEACHER_TABLE.items():
        sub = f"{table}.{where}"
        sampler = kind_ == "sft"
        rows += [
            To(f"{field}.teacher.model", f"{sub}.name", when=kind(kind_),
               note=_sampler_note if sampler else ""),
            To(f"{field}.teacher.url", f"{sub}.base_url", when=kind(kind_),
               note="rl never launches the teacher: serve it there (see run)"),
            To(f"{field}.teacher.api_key_env", f"{sub}.api_key_var", when=kind(kind_)),
        ]
    return rows


def teacher_memory_rows(field: str = "method") -> list[Row]:
    """A local teacher shares GPU 0 with the policy's inference server."""
    return [Fix("inference.vllm.gpu_memory_utilization", TEACHER_GPU_MEMORY,
                "the local teacher shares GPU 0 with the policy server (prime-rl's ci opd config)",
                when=lambda r: is_local(teacher(field_value(r, field))))]


__all__ = ["LOCAL", "OPSD_REASON", "TEACHER_GPU_MEMORY", "TEACHER_TABLE", "algo_rows", "is_local",
           "renderer", "renderer_reason", "serve_command", "teacher", "teacher_memory_rows"]
