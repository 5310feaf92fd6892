"""The report's records of a compiled run: what the target reads, ignores and fixes, and where a
teacher is served. One type each, used at run time and as the `--json` report's schema.

Each record is a frozen dataclass whose fields carry their description once: the targets build
it, the text and rich reports read it, `to_dict()` is its `--json` form (the fields, in order),
and `whileai.report.document.Report` takes it as a field type, so `schemas/report.schema.json` is
generated from these classes. The warnings (`whileai.rules.base.Finding`) and the cost estimate
(`whileai.cost.estimate.Cost`) are records of the same kind, in the rooms below that build them.
Pure: no pydantic model is built here (pydantic reads the annotations only for the schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from whileai.cost.sizes import SERVE_FORMULA, Size


@dataclass(frozen=True)
class _Record:
    """A record's JSON form: its fields, in order, each value as JSON (a value of another type as
    its text: a spec value the target reads may be any object)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # the schema: no other keys

    def to_dict(self) -> dict[str, Any]:
        return {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class Read(_Record):
    """A spec field the target reads: where, and with which value."""

    field: Annotated[str, Field(description="Spec field, method fields without the 'method.' prefix.")]
    path: Annotated[str, Field(description="Dotted key in the target file ('a.b[0].c' for list items).")]
    value: Annotated[Any, Field(description="The value written there (JSON; other types as their text).")]
    note: Annotated[str, Field(description="How the value was derived, or ''.")]


@dataclass(frozen=True, kw_only=True)
class Ignore(_Record):
    """A spec field the target does not read, and why."""

    field: Annotated[str, Field(description="Spec field, method fields without the 'method.' prefix.")]
    value: Annotated[Any, Field(description="The field's value in the spec.")]
    reason: Annotated[str, Field(description="Why the target does not read it.")]


@dataclass(frozen=True, kw_only=True)
class Fixed(_Record):
    """A key whileai sets that no spec field produced (a loader rule, a safe default)."""

    path: Annotated[str, Field(description="Dotted key in the target file.")]
    value: Annotated[Any, Field(description="The value whileai writes there.")]
    reason: Annotated[str, Field(description="Why whileai sets it.")]


@dataclass(frozen=True, kw_only=True)
class Teacher(_Record):
    """Where a frozen teacher (OPD, SFT) is served and on how many GPUs (its size from its name)."""

    model: Annotated[str, Field(description="The teacher model.")]
    url: Annotated[str, Field(description="Where the run reaches it.")]
    mode: Annotated[str, Field(description="share (beside the policy on GPU 0), local (GPUs of its own on "
                               "the run's node), job (its own SLURM job), endpoint (already served), "
                               "in-process (TRL loads it into every training process; SFT: into "
                               "sample.py, before training).")]
    params_b: Annotated[float | None, Field(description="Parameters, billions; null: unknown from the "
                                            "name.")]
    active_params_b: Annotated[float | None, Field(description="Active parameters (MoE).")]
    gpus: Annotated[int | None, Field(description="GPUs one server needs: bf16 weights plus KV headroom.")]
    held_gpus: Annotated[int | None, Field(description="GPUs held for it besides the run's.")]
    file: Annotated[str | None, Field(description="The `uv run inference` config whileai wrote for it.")]
    formula: Annotated[str, Field(description="How `gpus` is computed.")]
    note: Annotated[str, Field(description="The report's line about it.")]
    serve: Annotated[str | None, Field(description="The one command that serves it, as the run lines, "
                                       "`whileai preflight`'s fix line and `whileai rehearse`'s "
                                       "stand-in read it; null: no server (in-process).")] = None
    max_model_len: Annotated[int | None, Field(description="The context it is served with; null: no "
                                               "server.")] = None
    client: Annotated[dict[str, Any], Field(description="How the run calls it beyond its URL and key, "
                                            "as the compiled file sets it (prime-rl: headers, "
                                            "headers_from_env, admin_base_url, skip_model_check, "
                                            "wait_for_ready_timeout); `whileai preflight` calls it so.")] = \
        field(default_factory=dict)

    @classmethod
    def sized(cls, *, model: str, url: str, mode: str, size: Size | None, gpus: int | None,
              held_gpus: int | None, file: str | None, note: str, serve: str | None = None,
              max_model_len: int | None = None) -> Teacher:
        """A teacher sized from its name (whileai.cost.sizes): its parameters, and the formula of
        the GPUs a server needs."""
        return cls(model=model, url=url, mode=mode, params_b=size.total_b if size else None,
                   active_params_b=size.active_b if size else None, gpus=gpus, held_gpus=held_gpus,
                   file=file, formula=SERVE_FORMULA, note=note, serve=serve,
                   max_model_len=max_model_len)


def jsonable(v: Any) -> Any:
    """`v` as JSON: lists for tuples, text keys, and the text of any other type."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return str(v)


__all__ = ["Fixed", "Ignore", "Read", "Teacher", "jsonable"]
