"""A JSON Schema document from a pydantic model: the one generator every committed schema goes
through (`whileai.cli.schemas` writes schemas/*.schema.json with it: the run spec, the `--json`
report, results.json and `whileai inspect`'s two JSONs; `python -m whileai.results` prints one).

    document(Results)                                  # {"$schema": DRAFT, "title": "Results", ...}
    document(RunSpec, title="whileai run spec", edit=f)  # f post-processes pydantic's schema first
    text(document(Results))                            # the committed file's text

Pydantic only; nothing here knows one document from another.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

DRAFT = "https://json-schema.org/draft/2020-12/schema"
Node = dict[str, Any]


def document(model: type[BaseModel], *, title: str | None = None,
             edit: Callable[[Node], Node] | None = None) -> Node:
    """`model`'s JSON Schema (by alias), the draft it follows first. `edit` rewrites pydantic's
    schema before that; `title` replaces the model's name as the document's title, placed second."""
    body = model.model_json_schema(by_alias=True)
    if edit is not None:
        body = edit(body)
    if title is None:
        return {"$schema": DRAFT, **body}
    body.pop("title", None)
    return {"$schema": DRAFT, "title": title} | body


def text(schema: Node) -> str:
    """A schema as its file holds it: two-space JSON and a final newline."""
    return json.dumps(schema, indent=2) + "\n"


__all__ = ["DRAFT", "document", "text"]
