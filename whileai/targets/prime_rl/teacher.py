"""Where a frozen teacher runs for prime-rl (OPD's scores the student's tokens, SFT's samples the
training completions), sized from the teacher's name (whileai.cost.sizes).

rl never launches the teacher. `plans(...)` (called once per compile, by the run's plan:
whileai.targets.prime_rl.plan) decides, for each teacher, by a rule the report states:
- a run on one node without SLURM and a teacher at localhost: beside the policy on GPU 0 when
  it fits in TEACHER_GPU_MEMORY of it (or its size is unknown, said so), else on GPUs of its own
  on the same node, from `<stem>.teacher.toml`;
- a run on SLURM (several nodes, or a [slurm] table) and a teacher at http://<host>: its own
  SLURM job from `<stem>.teacher.toml` (prime-rl's multi-node inference deployment, one node);
- otherwise (https, a teacher larger than one node, an unknown size off this machine, or a
  one-node run with a teacher elsewhere): it must already be served at its URL.
The teacher TOML is an `uv run inference` config: `check_document(doc, entry="inference")` checks
it against the catalogue's inference root and the inference entry point's rules.

Each plan is the one account of its server that compile's run lines and files, `whileai
preflight`'s probes and fix lines and `whileai rehearse`'s stand-ins all read: model, URL, port,
GPUs (CUDA_VISIBLE_DEVICES), memory share, `max_model_len`, tensor parallel, the key's variable
and `serve`, the one line that starts it. A server that scores (OPD's teacher) gets
`max_model_len = seq_len + 1`: prime-rl scores a whole sequence of up to seq_len tokens as a
prompt with `max_tokens: 1` and `prompt_logprobs` (src/prime_rl/utils/client.py
prefill_logprobs), and vLLM refuses a prompt of max_model_len tokens when it must generate one
(vllm/v1/engine/input_processor.py, `prompt_len == max_prompt_len`). A server that only samples
(SFT's teacher) needs prompt_tokens + max_tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from shlex import quote
from typing import Any, NamedTuple

import tomli_w

from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.files.names import teacher_file, teacher_suffix
from whileai.spec.layout import Layout
from whileai.spec.mixture import Entry
from whileai.spec.run import RunSpec
from whileai.targets.compiled import Teacher
from whileai.targets.prime_rl.nodes import job_name
from whileai.targets.prime_rl.pin import TARGET
from whileai.version import __version__
from whileai.words import plural

TEACHER_GPU_MEMORY = 0.4  # prime-rl's ci opd config: teacher and policy share GPU 0
LOCAL = ("localhost", "127.0.0.1", "0.0.0.0")
POLICY_PORT = 8000  # rl's inference server (its router); the engine behind it: + 100
SCORE_ROOM = 1  # a scoring server's max_model_len beyond seq_len: the one token vLLM must generate


class TeacherServer(NamedTuple):
    """One teacher's server (see the module): what every face reads of it."""

    model: str
    url: str
    size: sizes.Size | None
    gpus: int | None  # GPUs one server needs (tensor parallel), None when the size is unknown
    mode: str  # "share" | "local" | "job" | "endpoint"
    note: str  # the report line
    file: str | None = None
    text: str | None = None
    doc: dict[str, Any] | None = None
    cuda: str | None = None  # GPUs of a local server (CUDA_VISIBLE_DEVICES)
    held: int | None = None  # GPUs held for the teacher besides the run's
    key_env: str = "VLLM_API_KEY"
    samples: bool = False  # SFT: the teacher samples the completions (OPD: it scores them)
    port: int = 80  # where it listens (the URL's)
    max_model_len: int = 0  # the context it is served with (see the module)
    memory: float | None = None  # its share of each GPU's memory; None: vLLM's default
    serve: str = ""  # the one line that starts it (serve_line)

    def record(self) -> Teacher:
        """The report's record of this teacher."""
        return Teacher.sized(model=self.model, url=self.url, mode=self.mode, size=self.size,
                             gpus=self.gpus, held_gpus=self.held, file=self.file, note=self.note,
                             serve=self.serve, max_model_len=self.max_model_len)

    def placed(self, **changes: Any) -> TeacherServer:
        """This plan with `changes` (a file, a longer context), its serve line worked out again."""
        p = self._replace(**changes)
        return p._replace(serve=serve_line(p))


def serve_line(p: TeacherServer) -> str:
    """The command that starts the server of `p`, without `&` or a comment: compile's run line,
    preflight's fix line and the rehearsal's stand-in are this line. An endpoint's is what to
    run on the host that serves it (from a prime-rl checkout)."""
    if p.mode in ("local", "job"):
        env = f"CUDA_VISIBLE_DEVICES={p.cuda} " if p.cuda else ""
        return f"{env}uv run inference @ {quote(p.file or '')}"
    env = "CUDA_VISIBLE_DEVICES=0 " if p.mode == "share" else ""
    mem = f" --vllm.gpu-memory-utilization {p.memory:g}" if p.memory is not None else ""
    tp = f" --vllm.tensor-parallel-size {p.gpus}" if p.gpus and p.gpus > 1 else ""
    return (f"{env}uv run inference --vllm.model {quote(p.model)} --server.port {p.port}{mem}"
            f" --vllm.max-model-len {p.max_model_len}{tp}")


CLIENT = ("headers", "headers_from_env", "admin_base_url", "skip_model_check", "wait_for_ready_timeout")


def client(doc: dict[str, Any], p: TeacherServer) -> dict[str, Any]:
    """How the compiled file (overrides included) has the run call the server of `p`: the
    client keys of the frozen-model table that names it (prime-rl's ClientConfig), set ones only."""
    o = doc.get("orchestrator") or {}
    tables = [o.get("algo") or {}] + [s.get("algo") or {} for s in (o.get("train") or {}).get("source")
                                      or [] if isinstance(s, dict)]
    for algo in tables:
        for ref in (algo.get("teacher"), (algo.get("sampling") or {}).get("source")):
            if isinstance(ref, dict) and (ref.get("name"), ref.get("base_url")) == (p.model, p.url):
                return {k: ref[k] for k in CLIENT if k in ref}
    return {}


def context(prompt_tokens: int, max_tokens: int, scores: bool) -> int:
    """The max_model_len a teacher is served with (see the module)."""
    return prompt_tokens + max_tokens + (SCORE_ROOM if scores else 0)


def context_why(mml: int, prompt_tokens: int, scores: bool) -> str:
    """The report's words for a teacher's max_model_len `mml`."""
    if not scores:
        return f"max_model_len {mml} (prompt_tokens {prompt_tokens} + max_tokens)"
    return (f"max_model_len {mml} (seq_len {mml - SCORE_ROOM} + {SCORE_ROOM}: it scores whole "
            "sequences as prompts with max_tokens 1, and vLLM refuses a prompt of max_model_len "
            "tokens)")


def host_port(url: str) -> tuple[str, int]:
    rest = url.split("://", 1)[1].split("/", 1)[0]
    host, _, port = rest.partition(":")
    return host, int(port) if port else (443 if url.startswith("https") else 80)


def _size_text(size: sizes.Size | None, need: int | None) -> str:
    if size is None or need is None:
        return "size unknown from its name (no 'NB' in it, not in whileai.cost.sizes.TABLE)"
    return (f"{size.text()}: {sizes.weights_gb(size.total_b):g} GB of bf16 weights plus KV "
            f"headroom need {need} GPU{'s' if need > 1 else ''}")


def plans(run: RunSpec, stem: str, teachers: Sequence[tuple[str, Any, list[Entry]]], lay: Layout,
          slurm: bool, known: Mapping[str, sizes.Size | None]) -> list[TeacherServer]:
    """One plan per distinct teacher of the run (`teachers`: whileai.spec.mixture.teachers; a
    mixture may have several, each source's OPD or SFT teacher), for its layout, on SLURM or not,
    with the models' sizes `known`. Only the first local teacher may share GPU 0; the others get
    GPUs of their own after the run's (and after earlier teachers'), files `<stem>.teacher.toml`,
    `<stem>.teacher-2.toml`, ..."""
    out: list[TeacherServer] = []
    where: dict[tuple[str, int], str] = {}
    for k, (field, t, users) in enumerate(teachers):
        at = host_port(t.url)
        if at in where:
            raise SpecError(f"{field}.url", t.url, f"a server of its own: {where[at]} is served "
                            "there already (one vLLM server serves one model)")
        where[at] = t.model
        taken = sum(p.held or 0 for p in out if p.mode == "local")
        shared = any(p.mode == "share" for p in out)
        role = "/".join(sorted({e.method.type for e in users})).upper()
        out.append(_plan(run, field, t, stem, k + 1, max(e.method.max_tokens for e in users),
                         role=role, offset=taken, share=not shared, lay=lay, slurm=slurm,
                         size=known[t.model]))
    return out


def _plan(run: RunSpec, field: str, t: Any, stem: str, k: int, max_tokens: int, *, role: str,
          offset: int, share: bool, lay: Layout, slurm: bool, size: sizes.Size | None) -> TeacherServer:
    name, suffix, samples = teacher_file(stem, k), teacher_suffix(k), "SFT" in role
    need = sizes.serve_gpus(size.total_b) if size else None
    what = _size_text(size, need)
    host, port = host_port(t.url)
    mml = context(run.prompt_tokens, max_tokens, "OPD" in role)
    ctx = context_why(mml, run.prompt_tokens, "OPD" in role)
    base = TeacherServer(t.model, t.url, size, need, "endpoint", "", key_env=t.api_key_env, samples=samples,
                port=port, max_model_len=mml)
    per = lay.gpus_per_node
    if host in LOCAL and slurm:
        raise SpecError(f"{field}.url", t.url, "a host the SLURM job reaches, not "
                        f"{host}: the orchestrator runs on a trainer node whose GPUs train",
                        hint=f"serve the teacher on its own node (whileai writes {name} for it "
                        "when the URL names a host) and put that host in the URL")
    if host in LOCAL and port in (POLICY_PORT - 100, POLICY_PORT + 100):
        raise SpecError(f"{field}.url", t.url, f"a port other than {port}: a local server "
                        f"takes its port and port + 100 (its engine), and the policy's server "
                        f"takes {POLICY_PORT} and {POLICY_PORT + 100}", hint="e.g. port 8001")
    if host in LOCAL:
        if share and (size is None or sizes.fits_share(size.total_b, TEACHER_GPU_MEMORY)):
            return base.placed(mode="share", memory=TEACHER_GPU_MEMORY, cuda="0", note=(
                f"teacher {t.model}: {what}; served beside the policy on GPU 0 "
                f"({TEACHER_GPU_MEMORY:g} of its memory), {ctx}"
                + ("; if it does not fit there, serve it elsewhere" if size is None else "")))
        first = lay.gpus + offset
        free = per - first
        if need is None or need > free:
            raise SpecError(f"{field}.model", t.model, f"a teacher that fits beside the run: "
                            f"{what} and the node has {max(free, 0)} GPUs besides the run's "
                            f"{lay.gpus}" + (f" and other teachers' {offset}" if offset else ""),
                            hint="use fewer gpus, or serve it on another machine and put that "
                            f"host in {field}.url")
        gpus = ",".join(str(i) for i in range(first, first + need))
        doc = _doc(run, t, mml, port, need, 1, suffix, slurm=False)
        p = base.placed(mode="local", note=f"teacher {t.model}: {what}; served on "
                        f"{plural(need, 'GPUs')} {gpus} of this node from {name}, {ctx}",
                        file=name, doc=doc, cuda=gpus, held=need)
        return p._replace(text=_text(run, p, role))
    if not slurm or t.url.startswith("https://") or need is None or need > per:
        why = ("an https endpoint is a hosted service" if t.url.startswith("https://") else
               "the run is not on SLURM" if not slurm else
               "its size is unknown, so whileai cannot size its servers" if need is None else
               f"more than one node of {per}: prime-rl's inference launcher keeps tensor "
               "parallelism within a node")
        return base.placed(note=f"teacher {t.model}: {what}; it must already be served at "
                           f"{t.url} ({why}), {ctx}")
    engines = per // need
    doc = _doc(run, t, mml, port, need, engines, suffix, slurm=True)
    p = base.placed(mode="job", note=f"teacher {t.model}: {what}; its own SLURM job from "
                    f"{name}: one node of {per} GPUs, {engines} engine{'s' if engines > 1 else ''}"
                    f" of {need}, answering at http://<its node>:{port}/v1, the host {field}.url "
                    f"must name ({host}), {ctx}", file=name, doc=doc, held=per)
    return p._replace(text=_text(run, p, role))


def _doc(run: RunSpec, t: Any, mml: int, port: int, tp: int, engines: int, suffix: str, *,
         slurm: bool) -> dict[str, Any]:
    """The `uv run inference` config that serves the teacher."""
    vllm: dict[str, Any] = {"model": t.model, "tensor_parallel_size": tp, "max_model_len": mml}
    if engines > 1:
        vllm["data_parallel_size"] = engines
    doc: dict[str, Any] = {"output_dir": f"{run.output_dir.rstrip('/')}/teacher{suffix}",
                           "server": {"port": port}, "vllm": vllm}
    if slurm:
        doc["deployment"] = {"type": "multi_node", "num_nodes": 1, "gpus_per_node": run.gpus_per_node}
        keep = {k: v for k, v in (run.slurm.model_dump(exclude_none=True) if run.slurm else {}).items()
                if k != "template_path"}  # the run's template is an RL template
        doc["slurm"] = keep | {"job_name": f"{job_name(run)}-teacher{suffix}"}
    return doc


def _text(run: RunSpec, p: TeacherServer, role: str) -> str:
    """The server's `uv run inference` TOML, headed by the serve line that runs it."""
    doc = p.doc or {}
    how = p.serve + ("  (submits a SLURM job; --dry-run writes the sbatch script only)"
                     if "slurm" in doc else "")
    return (f"# written by whileai {__version__} for {TARGET}: the {role} "
            f"teacher's server for {run.method.type} on {run.taskset}\n# run first: {how}\n\n"
            ) + tomli_w.dumps(doc)


def commands(p: TeacherServer | None) -> list[str]:
    """What to run before rl, for the teacher: its serve line (an endpoint's as a comment)."""
    if p is None:
        return []
    if p.mode in ("share", "local"):
        return [f"{p.serve} &  # serve the teacher at {p.url}"]
    if p.mode == "job":
        return [f"{p.serve}  # the teacher's SLURM job: start it first and put its first node in "
                f"method.teacher.url ({p.url})"]
    what = "vLLM: it samples the training completions" if p.samples else "vLLM with prompt logprobs"
    return [f"# first serve {p.model} at {p.url} ({what}; key in ${p.key_env}), on its host: "
            f"{p.serve}"]


__all__ = ["LOCAL", "POLICY_PORT", "SCORE_ROOM", "TEACHER_GPU_MEMORY", "TeacherServer", "commands", "context",
           "host_port", "plans", "serve_line"]
