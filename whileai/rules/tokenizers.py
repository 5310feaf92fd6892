"""Do the teacher and the student share one tokenizer? One answer for every target, and the one
refusal the one-vocabulary targets make.

`judge(run)` says whether they differ and on what basis: "measured" (both tokenizers' files are
on this machine, compared by whileai.vocab.compare: verdict "different") or "guessed" (model-name
families differ; no files). The TRL target reads it to pick GOLD (cross-tokenizer distillation);
prime-rl and verl call `refuse_measured`: their teachers score the student's token ids, so a
measured mismatch is an error naming the TRL target, while a guessed one stays the
`tokenizer-mismatch` warning (an error under --strict).
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from whileai.errors import SpecError
from whileai.spec.run import RunSpec

CROSS = ("compile for TRL (-b trl): its GOLD trainer (trl.experimental.gold, ULD loss) distills "
         "across tokenizers")
CITATION = "Sun 2026, arXiv:2605.07711; Boizard 2024 (ULD), arXiv:2402.12030"

_FAMILIES = [
    ("qwen2.5", r"qwen2\.5"), ("qwen3.5", r"qwen3\.5"), ("qwen3", r"qwen3"), ("qwen2", r"qwen2"),
    ("llama-3", r"llama-?3"), ("llama-2", r"llama-?2"), ("gemma", r"gemma"),
    ("mistral", r"mistral|mixtral"), ("deepseek", r"deepseek"), ("phi", r"phi-?\d"),
    ("gpt-oss", r"gpt-oss"), ("glm", r"glm"), ("olmo", r"olmo"),
]


def family(model: str) -> str | None:
    """The model family a name says (qwen3, llama-3, ...), or None: the guess without files."""
    name = model.split("/")[-1].lower()
    return next((fam for fam, pat in _FAMILIES if re.search(pat, name)), None)


class Judgement(NamedTuple):
    differ: bool
    basis: Literal["measured", "guessed", "none"]  # none: no files and no family to compare
    why: str  # one sentence: what was compared


def judge(run: RunSpec) -> Judgement:
    """Whether the run's separate teacher (OPD, SFT) has another tokenizer than the student."""
    teacher = run.method.frozen_teacher
    if teacher is None:
        return Judgement(False, "none", "no separate teacher")
    return pair(run.model, teacher.model)


def pair(student: str, teacher: str) -> Judgement:
    """Whether two models' tokenizers differ: measured from their files, else guessed."""
    from whileai.vocab import files

    if not files.missing(student, teacher):
        from whileai.vocab.compare import check_names

        check = check_names(student, teacher)
        if check is not None:
            ns, nt = check.vocab_size
            return Judgement(check.verdict == "different", "measured",
                             f"local tokenizer files: vocab {ns} vs {nt}, {check.id_overlap:.1%} of tokens "
                             f"share an id, the probe text encodes "
                             f"{'identically' if check.probe_same else 'differently'}")
    a, b = family(student), family(teacher)
    if a and b:
        return Judgement(a != b, "guessed", f"model-name families: student {a}, teacher {b}")
    return Judgement(False, "none", "no tokenizer files and no known model family")


def refuse_measured(run: RunSpec, target: str) -> None:
    """A SpecError when a teacher's tokenizer was measured to differ from the student's (the
    target needs one vocabulary): the run's own teacher, and each source's in a mixture."""
    from whileai.spec.mixture import teachers

    for field, teacher, _ in teachers(run):
        got = pair(run.model, teacher.model)
        if got.differ and got.basis == "measured":
            raise SpecError(f"{field}.model", teacher.model,
                            f"a teacher with the student's tokenizer for {target}, whose teacher "
                            f"scores the student's token ids (measured from {got.why}); or {CROSS}")


__all__ = ["CITATION", "CROSS", "Judgement", "judge", "pair", "refuse_measured"]
