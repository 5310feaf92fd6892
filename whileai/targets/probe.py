"""What `whileai preflight` probes, as data: each target's `probes` hook (its own `probe.py`)
returns these, and whileai.preflight sends the requests, keeps the deadline and words the lines.

- `ServerProbe`: a server the run calls (a teacher, the student's inference server): its URL,
  model and key, the context it must hold, how the run's client waits for it (`Wait`; without
  one the client only lists its models), and the run's own route as `Call`s (what is sent, how
  the answer is judged), with the line that serves it;
- `Unprobed`: a model the run names but does not call over HTTP from here, and why (one skip line);
- `Loads`: models the run loads in its own processes: on this machine, and fitting one device.

`teachers(stages)` lists every teacher of every stage and source once per stage, labelled as the
lines name them, for a target's `probes` to turn into one of the above.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from whileai.spec import mixture

if TYPE_CHECKING:
    from whileai.spec.endpoint import Endpoint
    from whileai.targets.compiled import Compiled


class Call(NamedTuple):
    """One request of the run's route, as preflight replays it: the first that fails ends the check."""

    method: str  # "GET" or "POST"
    path: str  # under the server's root, e.g. "/inference/v1/generate"
    body: Callable[[list[int]], dict[str, Any]] | None = None  # the JSON sent, from probe token ids
    judge: Callable[[Any, list[int]], tuple[bool, str]] | None = None  # the answer's JSON and the
    # ids sent -> (passed, the line); None: any 200 passes
    status: Callable[[int], str | None] | None = None  # what an HTTP status other than 200 means
    # (after "HTTP <code>: "); None or a None answer: the status, with the key's advice on 401/403


class Wait(NamedTuple):
    """How the run's client waits for a server before it calls it: GET /health on each root,
    retried while it answers anything but 200 or 404, then the model list on the first root."""

    client: str  # whose client, as the lines name it: "prime-rl's client"
    seconds: int  # how long it waits for a 200 before the run aborts
    admin: tuple[str, ...] = ()  # the URLs it asks instead of the server's own (then that one too)
    skip_model_check: bool = False  # it does not look for the model in the list


@dataclass(frozen=True)
class ServerProbe:
    """A server the run calls, probed the way the run calls it."""

    label: str  # "teacher", "stage 2 teacher", "student endpoint"
    field: str  # the spec field or flag that names it: "method.teacher", "--student-endpoint"
    url: str
    model: str
    key_env: str | None  # the variable holding its key (the name only)
    seq_len: int  # the longest sequence the run sends it
    seq_field: str  # where seq_len comes from
    route: str  # the route check's name: "scoring route"
    calls: tuple[Call, ...]  # the run's route, in order
    serve: str  # the line that serves it as the run needs it (every fix line)
    wait: Wait | None = None  # how the run's client waits for it; None: it only lists the models
    serves_it: bool = False  # `serve` is one of the run's own lines: every unreachable line names it
    empty_key: str | None = "EMPTY"  # the bearer token sent when the key is unset; None: no header
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)  # sent with every call
    headers_from_env: Mapping[str, str] = dataclasses.field(default_factory=dict)  # header -> the
    # variable holding its value
    prefill_why: str = ""  # why max_model_len must exceed seq_len (whole sequences scored as
    # prompts with max_tokens 1); "": seq_len tokens are enough
    template_why: str = ""  # why the server's own chat template is no matter to the run, in the
    # target's words (it sends token ids); "": the run may render prompts with it

    @property
    def need(self) -> int:
        """The context the run needs of it."""
        return self.seq_len + (1 if self.prefill_why else 0)

    @property
    def root(self) -> str:
        return re.sub(r"/v1$", "", self.url.rstrip("/"))

    @property
    def name(self) -> str:
        return f"{self.label} {self.model} @ {self.url}"


class Unprobed(NamedTuple):
    """A model the run names that preflight does not call from here."""

    name: str  # "teacher Qwen/Qwen3-8B @ http://localhost:8001/v1": its check is "<name>: endpoint"
    why: str


class Loads(NamedTuple):
    """Models the run loads in its own processes: each must be here when downloads are off."""

    student: str
    teachers: tuple[str, ...]
    beside: str | None  # a teacher held in the student's process (OPD's): the two must fit one device


Probe = ServerProbe | Unprobed | Loads  # what a target's `probes` hook returns


class TeacherUse(NamedTuple):
    """One teacher as one stage (and source) of the run uses it."""

    label: str  # "teacher", "stage 2 teacher", "teacher (source b)"
    field: str  # the spec field that names it: "method.teacher", "then.method.teacher"
    endpoint: Endpoint
    scores: bool  # it scores the student's tokens (OPD); else it samples (SFT)
    seq_len: int
    seq_field: str
    stage: Compiled

    @property
    def name(self) -> str:
        return f"{self.label} {self.endpoint.model} @ {self.endpoint.url}"


def seq_len(c: Compiled) -> tuple[int, str]:
    """The longest sequence of a compiled stage: its file's seq_len, else prompt + completion."""
    if isinstance(c.facts.seq_len, int):
        return c.facts.seq_len, "seq_len of the compiled file"
    return c.run.prompt_tokens + mixture.max_tokens(c.run), "prompt_tokens + max_tokens"


def teachers(stages: list[Compiled]) -> list[TeacherUse]:
    """Each distinct teacher (URL, model) of each stage, with the sources that use it."""
    out = []
    for i, c in enumerate(stages, 1):
        seq, seq_field = seq_len(c)
        for name, ep, entries in mixture.teachers(c.run):
            spec_field = f"then.{name}" if len(stages) > 1 and i == 2 else name
            label = "teacher" if len(stages) == 1 else f"stage {i} teacher"
            if c.run.sources:
                label += f" (source {', '.join(e.name for e in entries)})"
            scores = any(e.method.SCORER == "teacher" for e in entries)
            out.append(TeacherUse(label, spec_field, ep, scores, seq, seq_field, c))
    return out


def unprobed(stages: list[Compiled], why: str) -> list[Probe]:
    """Every teacher as a model the run does not call over HTTP (loaded in-process, or served by
    the run itself), each with `why`."""
    return [Unprobed(t.name, why) for t in teachers(stages)]


__all__ = ["Call", "Loads", "Probe", "ServerProbe", "TeacherUse", "Unprobed", "Wait", "seq_len",
           "teachers", "unprobed"]
