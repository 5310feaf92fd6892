"""The tokenizer check of a served model: vLLM's `POST <root>/tokenize` of whileai's probe text and
of a chat-templated conversation, against the student's own tokenizer. The run never calls
/tokenize, so what this finds is a note, never a FAIL; why a different chat template is no matter
to the run is the target's word (`ServerProbe.template_why`).
"""

from __future__ import annotations

from typing import Any

from whileai.preflight.http import HttpFailure
from whileai.preflight.report import Check, note, ok, skip
from whileai.preflight.tokens import Student

NEVER = "the run never calls /tokenize"


def tokenizer(p: Any, student: Student) -> tuple[list[int] | None, Check]:
    """The server's /tokenize of the probe text and of a chat-templated conversation against
    the student's tokenizer; also returns ids for the route probe."""
    from whileai.vocab.compare import PROBE_CONVERSATION, PROBE_TEXT

    n = f"{p.t.name}: tokenizer"
    try:
        text = p.call("POST", "/tokenize", {"model": p.t.model, "prompt": PROBE_TEXT,
                                            "add_special_tokens": False})
        if text.status == 404:
            return None, skip(n, "no POST /tokenize (not a vLLM server): ids not compared")
        if text.status != 200:
            return None, note(n, p.refused(text.status, "POST /tokenize") + f": ids not compared "
                              f"({NEVER})", text.seconds)
        chat = p.call("POST", "/tokenize", {"model": p.t.model, "messages": PROBE_CONVERSATION,
                                            "add_generation_prompt": False})
    except HttpFailure as e:
        return None, note(n, f"POST /tokenize: {e}: ids not compared ({NEVER})")
    served = text.list_of("tokens", int)
    served_chat = chat.list_of("tokens", int) if chat.status == 200 else None
    if served is None:
        return None, note(n, f"POST /tokenize answered {text.start()}, not vLLM's {{tokens: "
                          f"[...]}}: ids not compared ({NEVER})", text.seconds)
    probe_ids = served[:8] or None
    if student.error:
        return probe_ids, skip(n, student.error)
    mine, mine_chat = student.encode(PROBE_TEXT), student.chat()
    if mine != served:
        at = next((i for i, (a, b) in enumerate(zip(mine, served, strict=False)) if a != b),
                  min(len(mine), len(served)))
        return probe_ids, note(n, f"the server tokenizes the probe text differently from the "
                               f"student's tokenizer ({student.where}) from token {at} on "
                               f"({len(served)} vs {len(mine)} tokens): the teacher would score "
                               "other tokens than the student samples; use one tokenizer (the run "
                               "starts all the same: it never calls /tokenize)")
    if mine_chat is None or served_chat is None:
        why = "the student has no chat template here" if mine_chat is None else \
            "the server did not tokenize chat messages"
        return probe_ids, ok(n, f"the probe text tokenizes to the same {len(mine)} ids as the "
                             f"student's tokenizer ({student.where}); chat template not compared: {why}")
    if mine_chat != served_chat:
        return probe_ids, note(n, f"same ids for the probe text; the server's chat template "
                               f"renders the probe conversation to other ids ({len(served_chat)} vs "
                               f"{len(mine_chat)} tokens) than the student's ({student.where})"
                               + (f": no matter to the run: {p.t.template_why}" if p.t.template_why
                                  else ": the run may render prompts with it"))
    return probe_ids, ok(n, f"the probe text ({len(mine)} ids) and a chat-templated conversation "
                         f"({len(mine_chat)} ids) tokenize exactly as the student's tokenizer "
                         f"({student.where})")


__all__ = ["NEVER", "tokenizer"]
