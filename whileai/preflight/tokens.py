"""The student's tokenizer from this machine's files (a local folder or the HF cache, nothing
downloaded), to compare a server's `/tokenize` with: the same `tokenizers` library and chat
template rendering as whileai.vocab.compare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whileai.vocab.files import hub_cache, locate


class Student:
    def __init__(self, model: str) -> None:
        self.model = model
        self.where = ""
        self.error = ""
        self._side: Any = None
        folder = locate(model)
        if folder is None:
            self.error = (f"the student's tokenizer ({model}) is not on this machine (no local "
                          f"folder with tokenizer.json, not in the HF cache at {hub_cache()}): ids "
                          "not compared")
            return
        try:
            from whileai.vocab.compare import _Side

            self._side = _Side.load(Path(folder))
        except ImportError:
            self.error = "the tokenizers library is not installed: ids not compared"
        except Exception as e:  # a corrupt tokenizer.json: said, not raised
            self.error = f"the student's tokenizer at {folder} does not load ({type(e).__name__})"
        self.where = str(folder)

    def encode(self, text: str) -> list[int]:
        return list(self._side.tok.encode(text, add_special_tokens=False).ids)

    def chat(self) -> list[int] | None:
        rendered = self._side.render()
        return None if rendered is None else self.encode(rendered)


__all__ = ["Student"]
