"""Per method: who generates the completions, and what context the teacher sees.

An adapter is all `whileai inspect` needs to know about a method; adding one is a few lines.
OPD and OPSD sample from the student. SFT (off-policy distillation) samples from the teacher:
the pipeline then scores the teacher's tokens under both models, and the signal
log p_teacher − log p_student is a sampled-token estimate of the forward KL(p_t‖p_s) that SFT's
cross-entropy on those tokens reduces (the tokens the student is pushed towards most are the
ones it assigns least probability to). Both sides score the same token ids, which assumes one
tokenizer (the tokenizer check says whether that holds); prime-rl's SFT re-tokenizes the
teacher's text with the student's renderer instead, and TRL's with the student's tokenizer. A
method with no teacher (GRPO) has no adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from whileai.errors import SpecError
from whileai.spec.run import OPD, OPSD, SFT, RunSpec


class Adapter(NamedTuple):
    sampler: Literal["student", "teacher"]  # who generates the completions
    teacher_context: str  # what the teacher conditions on, in words (report and page)
    self_teacher: bool  # the teacher is the student's own model (one model to load or serve)
    privileged: Callable[[RunSpec], tuple[str, str] | None]  # (task key, template) or None


def _opsd_hint(run: RunSpec) -> tuple[str, str]:
    m: Any = run.method
    return m.privileged, m.template


ADAPTERS: dict[str, Adapter] = {
    "opd": Adapter(
        sampler=OPD.SAMPLER, self_teacher=OPD.SCORER == "self", privileged=lambda run: None,
        teacher_context="the same prompt token ids as the student (prime-rl and TRL send the "
                        "student's ids to the teacher)",
    ),
    "opsd": Adapter(
        sampler=OPSD.SAMPLER, self_teacher=OPSD.SCORER == "self", privileged=_opsd_hint,
        teacher_context="the student's own model, with the task's privileged field rendered "
                        "through the spec's template and appended to the last user message after "
                        "a blank line (the TRL target's SDFT teacher_prompt_template)",
    ),
    "sft": Adapter(
        sampler=SFT.SAMPLER, self_teacher=SFT.SCORER == "self", privileged=lambda run: None,
        teacher_context="the same prompt, rendered by the teacher, which writes the completion; the "
                        "student scores the teacher's token ids (SFT trains on them by cross-entropy)",
    ),
}


def adapter(run: RunSpec) -> Adapter:
    found = ADAPTERS.get(run.method.type)
    if found is None:
        raise SpecError("method.type", run.method.type,
                        f"a method with a teacher to inspect: {', '.join(sorted(ADAPTERS))} "
                        f"({run.method.type} has no per-token teacher signal)")
    return found


def teacher_endpoint(run: RunSpec) -> Any:
    """The spec's teacher endpoint (OPD's, SFT's), else None."""
    return run.method.frozen_teacher
