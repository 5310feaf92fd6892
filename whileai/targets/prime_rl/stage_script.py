"""The script of a two-stage prime-rl run (whileai.targets.stages): the teachers' servers, both stages in
order, and nothing left running.

    servers = teacher_servers(run, one, two, stems)   # one server per distinct teacher
    text = script(servers, stage_commands, handoff, how="bash coldstart.sh")

One server per distinct teacher, keyed by (model, host, port):
- a teacher both stages name (same model at the same URL) is one server, started before stage 1
  and kept for stage 2, its `uv run inference` TOML (`<stem>.teacher.toml`) sized for the
  longer stage (`vllm.max_model_len` = prompt_tokens + the longer stage's max_tokens, + 1 where
  it scores: whileai.targets.prime_rl.teacher);
- a teacher one stage names is started before that stage and stopped when it ends (its GPUs
  and port are free for the next stage's);
- two different models at one host:port cannot both be served there: refused (exit 2).

Before each `uv run rl` the script waits until every server that stage needs answers at
`<url without /v1>/health` (the route prime-rl's own client polls, utils/client.py
check_health, with `Authorization: Bearer $<api_key_env>` when that variable is set), for at
most $WHILEAI_TEACHER_WAIT_S seconds (default 1800: prime-rl's client.wait_for_ready_timeout),
and stops with one clear line when none comes. Every server it starts runs in its own process
group (`setsid`), and a trap stops those groups on exit, error and Ctrl-C. A teacher served
elsewhere (an endpoint) is waited on too; a SLURM teacher job is submitted, waited on, and
left to `scancel` (the script did not start its processes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from shlex import quote
from typing import Any

from whileai.errors import SpecError, raw
from whileai.files.names import teacher_file
from whileai.targets.prime_rl import teacher
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog
from whileai.targets.prime_rl.check import check_document
from whileai.targets.prime_rl.plan import CompilePlan

WAIT_S = 1800  # prime-rl's ClientConfig.wait_for_ready_timeout default


@dataclass
class Server:
    """One teacher server of a two-stage run."""

    plan: teacher.TeacherServer
    stages: set[int] = field(default_factory=set)
    file: str | None = None  # its `uv run inference` TOML, when it has one
    text: str | None = None
    doc: dict[str, Any] | None = None
    number: int = 0  # its place among the run's teachers (the script's handle on it)

    @property
    def health(self) -> str:
        return self.plan.url.rstrip("/").removesuffix("/v1") + "/health"

    def start(self) -> str:
        """The line that starts it (a local server: in the background, in its own group): its
        plan's serve line."""
        p = self.plan
        if p.mode in ("share", "local"):
            return f"start_server {self.number} {p.serve}  # serve the teacher at {p.url}"
        if p.mode == "job":
            return (f"{p.serve}  # the teacher's SLURM job (scancel it when done): its first node "
                    f"must answer at {p.url}")
        what = "it samples the training completions" if p.samples else "prompt logprobs"
        return f"# {p.model} must already be served at {p.url} (vLLM: {what}), on its host: {p.serve}"

    def command(self) -> str:
        """The same line as the report lists it (a plain shell command)."""
        return teacher.commands(self.plan)[0]

    def wait(self) -> str:
        return (f"wait_for {quote(self.health)} {quote(self.plan.model)} "
                f"{quote(self.plan.key_env)}")


def teacher_servers(plans: tuple[CompilePlan, CompilePlan], stem: str) -> list[Server]:
    """The distinct teachers of both stages (their plans, as each stage's compile made them), in
    the order they start."""
    out: dict[tuple[str, str, int], Server] = {}
    at: dict[tuple[str, int], tuple[str, int]] = {}
    one, two = (x.run for x in plans)
    for i, stage in enumerate(plans, start=1):
        for p in stage.teachers:
            host, port = teacher.host_port(p.url)
            key = (p.model, host, port)
            seen = at.get((host, port))
            if seen is not None and seen[0] != p.model:
                raise SpecError(f"{'then.' if i == 2 else ''}method.teacher.url", p.url,
                                f"a port of its own: stage {seen[1]}'s teacher {seen[0]} is served "
                                f"at {host}:{port} (one vLLM server serves one model)",
                                hint="give each teacher its own port, e.g. 8001 and 8002")
            at[(host, port)] = (p.model, i)
            server = out.setdefault(key, Server(p))
            server.stages.add(i)
            if p.max_model_len > server.plan.max_model_len:  # sized for the longer stage
                server.plan = server.plan.placed(max_model_len=p.max_model_len, note=p.note)
            if p.doc is not None:
                server.doc = _longer(server.doc, p.doc)
    for server in out.values():
        if server.doc is None:
            continue
        shared = len(server.stages) == 2
        server.file = teacher_file(stem) if shared else server.plan.file
        role = "SFT/OPD" if shared else ("SFT" if server.plan.samples else "OPD")
        run = one if 1 in server.stages else two
        server.plan = server.plan.placed(file=server.file, doc=server.doc)
        server.text = teacher._text(run, server.plan, role)
        server.plan = server.plan._replace(text=server.text)
        problems = check_document(server.doc, prime_rl_catalog(), entry="inference")
        if problems:
            raise SpecError(problems[0].path or "config", raw(server.file or "the teacher TOML"),
                            f"prime-rl's inference would reject it: {problems[0].message}")
    for n, server in enumerate(out.values(), start=1):
        server.number = n
    _no_shared_gpus(list(out.values()))
    return list(out.values())


def _longer(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    """The server's config sized for the longer of two stages."""
    if a is None:
        return b
    out = {**a, "vllm": {**a["vllm"]}}
    out["vllm"]["max_model_len"] = max(a["vllm"]["max_model_len"], b["vllm"]["max_model_len"])
    return out


def _no_shared_gpus(servers: list[Server]) -> None:
    """A server kept for both stages must not share GPUs with one a single stage starts."""
    kept = [s for s in servers if len(s.stages) == 2 and s.plan.cuda]
    for s in servers:
        for k in kept:
            if s is k or not s.plan.cuda or not k.plan.cuda:
                continue
            both = set(k.plan.cuda.split(",")) & set(s.plan.cuda.split(","))
            if both:
                raise SpecError("then.method.teacher", s.plan.model, f"GPUs other than "
                                f"{','.join(sorted(both))}: {k.plan.model} holds them for both "
                                "stages", hint="serve one of the teachers on another machine")


PRELUDE = r"""WAIT_S="${WHILEAI_TEACHER_WAIT_S:-%(wait)d}"  # how long to wait for each teacher
INTERVAL_S="${WHILEAI_TEACHER_POLL_S:-5}"
declare -A pids=()  # teacher number -> the process group this script started for it
stop_servers() {  # stop_servers [N...]: stop those servers (all when none named), whole groups
  local n ns=("$@")
  [ "$#" -gt 0 ] || ns=("${!pids[@]}")
  for n in ${ns[@]+"${ns[@]}"}; do
    [ -n "${pids[$n]:-}" ] || continue
    kill -TERM -- "-${pids[$n]}" 2>/dev/null || true
    wait "${pids[$n]}" 2>/dev/null || true
    unset "pids[$n]"
  done
}
trap stop_servers EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_server() {  # start_server N [VAR=value...] cmd...: in the background, in a group of its own
  local n="$1"
  shift
  setsid env "$@" &
  pids[$n]="$!"
}
wait_for() {  # wait_for HEALTH_URL MODEL KEY_VAR: until the server answers, or give up
  local url="$1" model="$2" key="${!3:-}" deadline=$((SECONDS + WAIT_S))
  local auth=()
  if [ -n "$key" ]; then auth=(-H "Authorization: Bearer $key"); fi
  until curl -sf -o /dev/null ${auth[@]+"${auth[@]}"} "$url"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "whileai: the teacher $model did not answer at $url within ${WAIT_S}s" \
        "(WHILEAI_TEACHER_WAIT_S): not starting rl; stopping the servers this script started" >&2
      exit 1
    fi
    sleep "$INTERVAL_S"
  done
}
"""


def script(servers: list[Server], stages: list[list[str]], handoff: str, how: str) -> str:
    """The two-stage script: servers, waits, stage 1, the hand-off, stage 2, stops."""
    lines = [PRELUDE % {"wait": WAIT_S}]
    for i, commands in enumerate(stages, start=1):
        mine = [s for s in servers if i in s.stages]
        new = [s for s in mine if min(s.stages) == i]
        lines.append(f"# stage {i}")
        lines += [s.start() for s in new]
        lines += [s.wait() for s in mine]
        lines += commands
        if i == 1:
            done = [str(s.number) for s in mine if s.stages == {1} and s.plan.mode in ("share", "local")]
            if done:
                lines.append(f"stop_servers {' '.join(done)}  # stage 1's own teachers: their GPUs "
                             "and ports are free for stage 2")
            lines.append(handoff)
    body = "\n".join(lines)
    return (f"#!/usr/bin/env bash\n# written by whileai: a two-stage run, in order. Run: {how}\n"
            f"set -euo pipefail\n{body}\n")


__all__ = ["WAIT_S", "Server", "script", "teacher_servers"]
