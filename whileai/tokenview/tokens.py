"""The tokenizer check as inspect reports it: from local files when both are here, else measured
through each side's own tokenizer (local or the server's /tokenize) on the fixed probes."""

from __future__ import annotations

from whileai.spec.run import RunSpec
from whileai.tokenview.adapters import Adapter
from whileai.tokenview.scoring import Model
from whileai.vocab import compare as tokcheck


def tokenizer_facts(run: RunSpec, student: Model, teacher: Model,
                    ad: Adapter) -> tuple[tokcheck.TokenizerCheck | None, str]:
    if ad.self_teacher:
        return None, "one model is both student and teacher: one tokenizer, nothing to compare"
    check = tokcheck.check_names(student.name, teacher.name)
    if check is not None:
        return check, check.verdict_text()
    probe = [m.encode(tokcheck.PROBE_TEXT) for m in (student, teacher)]
    chat = [m.encode(tokcheck.PROBE_CONVERSATION[:2]) for m in (student, teacher)]
    absent = ", ".join(tokcheck.missing(student.name, teacher.name)) or "tokenizers library missing"
    verdict = ("same ids" if probe[0] == probe[1] else
               f"DIFFERENT ids ({len(probe[0])} vs {len(probe[1])} tokens): the teacher scores "
               "other tokens than the student sampled")
    template = "same ids" if chat[0] == chat[1] else "different ids (chat templates differ)"
    return None, (f"tokenizer files not both local ({absent}); through each side's own tokenizer "
                  f"the probe text gives {verdict}, the probe chat prompt {template}")
