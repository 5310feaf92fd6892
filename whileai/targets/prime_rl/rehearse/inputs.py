"""What a rehearsal runs, from a compiled spec or a prime-rl TOML: the stages (one, or two with
the hand-off between them), each with its TOML and the servers the user runs beside `rl`.

    stages = from_compiled(c)                      # c: a Compiled (the API's compile)
    stages = from_toml(text, "run", serve=["--vllm.model T --server.port 8001"])

A teacher's stand-in comes from the command the user will run: the target's serve line for it
(the Teacher record's `serve`, the run lines' line: `uv run inference --vllm.model ...
--server.port ... --vllm.max-model-len ...`, or `uv run inference @ <stem>.teacher.toml` with that
file beside it), never from what the config expects, so a config whose teacher name, URL or port
differs from its server fails here as on the cluster. For a
prime-rl TOML written by hand there are no run lines: `--serve` gives them, else each teacher
the config names is stood in as it names it (said in the report). Standard library only.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from whileai.errors import SpecError

HANDOFF_MARK = "no STABLE marker"  # in the two-stage hand-off command (targets/stages.py)


@dataclass
class RehearsalStage:
    name: str
    text: str  # the prime-rl TOML
    serve: list[list[str]] = field(default_factory=list)  # each teacher's `inference` arguments
    lines: list[str] = field(default_factory=list)  # each teacher's serve line, as the run lines say it
    files: dict[str, str] = field(default_factory=dict)  # the server configs those lines read (@ file)
    handoff: tuple[str, str] | None = None  # stage 2: (the original student, stage 1's final folder)
    code: str | None = None  # the hand-off's python -c program, run with the stand-in student
    notes: list[str] = field(default_factory=list)


def inference_args(command: str) -> list[str] | None:
    """`CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model X ... &  # note` → the arguments."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    words = [w for w in words if w != "&"]
    if "inference" not in words:
        return None
    return words[words.index("inference") + 1 :]


def _handoff(command: str) -> tuple[str, tuple[str, str]] | None:
    if HANDOFF_MARK not in command:
        return None
    words = shlex.split(command, comments=True)
    i = words.index("-c")
    return words[i + 1], (words[i + 2], words[i + 3])


def from_compiled(c: Any) -> list[RehearsalStage]:
    """A Compiled (one run, a mixture, or a two-stage run) → its stages."""
    parts = list(c.stages) or [c]
    stages = []
    for part in parts:
        lines = [t.serve for t in part.teachers if t.serve and t.mode != "endpoint"]
        serve = [a for line in lines if (a := inference_args(line)) is not None]
        files = {
            t.file: part.files.get(t.file) or c.files[t.file]
            for t in part.teachers
            if t.file and t.mode != "endpoint"
        }
        stages.append(RehearsalStage(part.main.removesuffix(".toml"), part.text, serve, lines, files))
    if len(stages) == 2:
        found = next((h for cmd in c.commands if (h := _handoff(cmd)) is not None), None)
        if found is None:
            raise SpecError(
                "then", None, "a two-stage run with its hand-off command (whileai bug: none found)"
            )
        stages[1].code, stages[1].handoff = found
    return stages


def from_toml(text: str, name: str, serve: list[str] | None = None) -> list[RehearsalStage]:
    """A prime-rl TOML: `serve` holds each teacher's run line (or just its arguments)."""
    from whileai.spec.load import loads_toml

    stage = RehearsalStage(name, text)
    for line in serve or []:
        args = inference_args(line if "inference" in line else f"inference {line}")
        if args is None:
            raise SpecError(
                "--serve", line, "a teacher's run line: [uv run] inference --vllm.model M --server.port P ..."
            )
        stage.serve.append(args)
        stage.lines.append(line)
    if serve is None:
        doc = loads_toml(text, where=name)
        for t in teachers(doc):
            port = urlparse(t["base_url"]).port or 80
            stage.serve.append(["--vllm.model", t["name"], "--server.port", str(port)])
            stage.lines.append(shlex.join(["inference", *stage.serve[-1]]))
            stage.notes.append(
                f"teacher {t['name']} stood in at port {port} as the config names it (no "
                "run line: --serve gives the command you will run)"
            )
    return [stage]


def teachers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frozen model the config names (OPD teachers, SFT sampling sources), once each."""
    o = doc.get("orchestrator", {})
    algos = [o.get("algo") or {}]
    for split in ("train", "eval"):
        srcs = (o.get(split) or {}).get("source") or []
        algos += [s.get("algo") or {} for s in (srcs if isinstance(srcs, list) else [srcs])]
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for a in algos:
        for ref in (a.get("teacher"), (a.get("sampling") or {}).get("source")):
            if isinstance(ref, dict) and ref.get("name") and ref.get("base_url"):
                out.setdefault((ref["name"], ref["base_url"]), ref)
    return list(out.values())
