"""What one prime-rl compile derives from the spec, worked out once: the `CompilePlan`.

`make(run, stem)` first refuses what the target cannot plan (a teacher on the policy's port,
a run with no inference and no fake data, an override of a value others derive from), then
works out the layout, the batch, the training sources and their shares, the seats, the model
sizes, the engine width and where each frozen teacher is served. The field map, the facts, the
cost estimate and the run lines read the plan; nothing after it derives these again.

An override of a value the plan derives others from is refused, naming the spec field to change:
`method.max_tokens` sets the train sampling's `max_completion_tokens`, and from it `seq_len`
(prompt_tokens + max_tokens), the teacher server's `vllm.max_model_len` (its own TOML) and the
cost estimate. An override of the sampling cap alone (`--set
orchestrator.train.sampling.max_completion_tokens=4096`) would leave those at the old cap: the
report and the files would disagree with the run. The spec field re-derives everything (a
mixture source's cap: its own method's).

    p = make(run, "opd")   # stem: the main file's name without .toml (teachers' files: <stem>.teacher*.toml)
    p.batch                # orchestrator.batch_size: prompts x samples x seats (traces)
    p.layout.multi         # several nodes (whileai.spec.layout)
    p.served               # the teachers' servers the run starts beside it (teacher.TeacherServer)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from whileai.cost import sizes
from whileai.cost.sizes import Size
from whileai.errors import SpecError
from whileai.spec import mixture
from whileai.spec.layout import Layout
from whileai.spec.mixture import Entry
from whileai.spec.run import RunSpec
from whileai.targets.prime_rl import nodes, teacher
from whileai.targets.prime_rl.algo import TEACHER_TABLE
from whileai.targets.prime_rl.teacher import POLICY_PORT
from whileai.tasksets import seats
from whileai.tasksets.seats import Seats

# compiled on first use (re's cache): only a run with overrides reads it
_CAP = r"^orchestrator\.train(?:\.source\[(\d+)\])?\.sampling\.max_completion_tokens$"
DERIVED = "seq_len, the teacher server's max_model_len, the eval cap and the cost"
# a frozen teacher's client keys the teacher's plan (its serve line, preflight, rehearse) reads
_TEACHER = (r"^orchestrator(?:\.train\.source\[(\d+)\])?\.algo\.(teacher|sampling\.source)"
            r"\.(name|base_url|api_key_var)$")
_SPEC = {"name": "model", "base_url": "url", "api_key_var": "api_key_env"}


@dataclass(frozen=True)
class CompilePlan:
    """One compile's derived values (see the module); frozen: every later step reads it."""

    run: RunSpec
    layout: Layout
    serves: bool  # the run has inference (a multi-node benchmark on fake data has none)
    on_slurm: bool  # several nodes, or a [slurm] table
    entries: tuple[Entry, ...]  # the training sources, the run's own taskset first
    shares: tuple[float, ...]  # each source's expected share of a step's rollouts
    seats: Seats  # trainable traces per episode (what prime-rl's batch counts)
    prompts: int
    samples: int  # per prompt: orchestrator.group_size
    batch: int  # orchestrator.batch_size: prompts x samples x seats.traces
    max_tokens: int  # the longest source's completion cap (seq_len holds it)
    sizes: dict[str, Size | None]  # the student's and each teacher's, by model name
    engine: tuple[int, str]  # GPUs per inference engine (tensor_parallel_size) and why
    teachers: tuple[teacher.TeacherServer, ...]  # each frozen teacher's server, planned

    @property
    def multi(self) -> bool:
        return self.layout.multi

    @property
    def served(self) -> tuple[teacher.TeacherServer, ...]:
        """The teachers the run's files and commands serve: none without inference."""
        return self.teachers if self.serves else ()

    @property
    def teacher_gpus(self) -> int:
        """GPUs the served teachers hold beside the run's: the header and the cost count them."""
        return sum(t.held or 0 for t in self.served)


def make(run: RunSpec, stem: str) -> CompilePlan:
    """The plan of one compile of `run`, after the checks that refuse it (see the module)."""
    found = tuple(mixture.entries(run))
    teachers = mixture.teachers(run, found)
    for field, t, _ in teachers:
        if t.port == POLICY_PORT:
            raise SpecError(f"{field}.url", t.url, f"a port other than {POLICY_PORT}, where rl "
                            "serves the policy itself")
    lay = run.layout
    if not lay.multi and lay.trainer_gpus < 1:
        raise SpecError("gpus", run.gpus, "at least 2 for prime-rl on one node: rl gives inference "
                        "and the trainer GPUs of their own (1 + 1); TRL trains on one (-t trl)")
    serves = not lay.multi or lay.inference_nodes > 0
    nodes.check(serves, run.overrides)
    _derived(run, found)
    shares = tuple(mixture.shares(run, found))
    per = seats.per_episode(run, entries=found, shares=shares)
    known = {m: sizes.params(m) for m in dict.fromkeys([run.model, *(t.model for _, t, _ in teachers)])}
    on_slurm = lay.multi or run.slurm is not None
    planned = tuple(teacher.plans(run, stem, teachers, lay, on_slurm, known))
    _longer(run, found, [t for t in planned if t.mode != "endpoint"] if serves else [])
    return CompilePlan(run=run, layout=lay, serves=serves, on_slurm=on_slurm, entries=found,
                shares=shares, seats=per, prompts=run.prompts, samples=run.method.samples,
                batch=run.rollouts * per.traces, max_tokens=mixture.max_tokens(run, found),
                sizes=known, engine=nodes.engine_tp(run, known[run.model]),
                teachers=planned)


def _derived(run: RunSpec, entries: Sequence[Entry]) -> None:
    """SpecError for the first override of a value others derive from (see the module)."""
    for path, value in run.overrides.items():
        _teacher_key(path, value, entries)
        m = re.match(_CAP, path.replace(" ", ""))
        if m is None:
            continue
        pos = int(m.group(1)) if m.group(1) is not None else 0
        e = entries[pos] if pos < len(entries) else entries[0]
        where = f"{e.field}method.max_tokens" if e.own_method else "method.max_tokens"
        raise SpecError(f"overrides.{path}", value, f"set {where} = {_show(value)} in the spec "
                        f"instead: whileai derives {DERIVED} from it, and an override of this key "
                        "alone would leave them at the old cap")


def _longer(run: RunSpec, entries: Sequence[Entry], teachers: Sequence[Any]) -> None:
    """SpecError for a `seq_len` override past the spec's when whileai serves a teacher (a remote
    endpoint is the user's to size): its server's
    max_model_len is planned from the spec's (teacher.context), and a longer sequence would
    reach it (vLLM refuses a prompt of max_model_len tokens)."""
    planned = run.prompt_tokens + mixture.max_tokens(run, entries)
    for key in ("seq_len", "orchestrator.seq_len", "trainer.model.seq_len"):
        value = run.overrides.get(key)
        if teachers and isinstance(value, int) and not isinstance(value, bool) and value > planned:
            raise SpecError(f"overrides.{key}", value, f"at most {planned} with a served teacher, or set "
                            "prompt_tokens / method.max_tokens in the spec instead: whileai serves the "
                            "teacher at max_model_len from them, and a longer sequence would not fit it")


def _teacher_key(path: str, value: Any, entries: Sequence[Entry]) -> None:
    """SpecError for an override of a teacher's model, URL or key variable: the teacher's server
    plan (its run line, preflight's probe, the rehearsal's stand-in) is made from the spec's."""
    m = re.match(_TEACHER, path.replace(" ", ""))
    if m is None:
        return
    pos = int(m.group(1)) if m.group(1) is not None else 0
    e = entries[pos] if pos < len(entries) else entries[0]
    if TEACHER_TABLE.get(e.method.type) != m.group(2):
        return  # not where this source's teacher is written: the loader rules judge it
    where = f"{e.field if e.own_method else ''}method.teacher.{_SPEC[m.group(3)]}"
    raise SpecError(f"overrides.{path}", value, f"set {where} in the spec instead: whileai plans the "
                    "teacher's server from it (the run line that serves it, its port and context, "
                    "what preflight probes), and an override of this key alone would leave them "
                    "serving the old one")


def _show(value: Any) -> str:
    return str(value) if isinstance(value, int) else repr(value)


__all__ = ["DERIVED", "CompilePlan", "make"]
