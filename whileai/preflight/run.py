"""Which checks a spec needs, and running them all within one deadline.

    report = preflight(run, target="prime-rl", timeout=10)   # whileai.preflight.Report
    report.lines(); report.to_dict(); report.exit_code        # 1 when any check FAILs

What is probed comes from the spec, as the target will use it: each distinct teacher of each
stage of a two-stage run and of each source of a mixture (OPD's scores, SFT's samples), with the
sequence length of the compiled file (prime-rl's `seq_len`; TRL: prompt_tokens + max_tokens);
the student's server when given; then this machine. Every endpoint is probed in its own thread
and every request ends by the same deadline, so the whole run ends within `timeout` (plus the
time to compile the spec) whatever a server does.
"""

from __future__ import annotations

import os
import re
import threading
import time
from typing import Any

from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.preflight import machine
from whileai.preflight.endpoint import Target, probe
from whileai.preflight.report import Check, Report, fail, skip
from whileai.preflight.tokens import Student
from whileai.spec import mixture
from whileai.spec.run import RunSpec
from whileai.targets.base import Machine as Needs

LOCAL = ("localhost", "127.0.0.1", "0.0.0.0")
WHERE = ("here", "modal")


def preflight(run: RunSpec, *, target: str = "prime-rl", spec: str = "spec",
              student_endpoint: str | None = None, student_key_env: str = "VLLM_API_KEY",
              timeout: float = 10.0, prime_rl: str | None = None, where: str = "here",
              cpu: bool = False, output_dir: str | None = None) -> Report:
    """Every check of `run` for `target` (whileai.targets.registry). where: "here" (this
    machine runs it) or "modal" (the arms run in Modal containers that serve their own local
    teacher: those and this machine's facts are skipped). Bad input (target, URL, timeout)
    raises SpecError."""
    from whileai.api import compile
    from whileai.targets import registry

    tg = registry.get(target, "--backend")
    if where not in WHERE:
        raise SpecError("where", where, "here or modal")
    if not 0 < timeout <= 3600:
        raise SpecError("--timeout", timeout, "seconds, more than 0 and at most 3600")
    student_ep = _student(run, student_endpoint, student_key_env)
    start = time.monotonic()
    c = compile(run, tg.name, cpu=cpu)
    deadline = time.monotonic() + timeout
    report = Report(spec, tg.name, timeout)
    stages = list(c.stages or (c,))
    targets, skipped = _teachers(stages, tg.teachers_in_process, where)
    if student_ep is not None:
        targets.append(Target("student endpoint", "--student-endpoint", student_ep.url,
                              student_ep.model, student_ep.api_key_env, tg.student_server,
                              *_seq_len(stages[-1])))
    results: list[list[Check]] = [[] for _ in targets]
    student = Student(run.model)
    threads = [threading.Thread(target=_probe_into, args=(results[i], t, deadline, student),
                                daemon=True) for i, t in enumerate(targets)]
    for th in threads:
        th.start()
    local = _machine(run, tg.machine(run, stages), stages, where, cpu, prime_rl, output_dir,
                     deadline)
    for i, (th, t) in enumerate(zip(threads, targets, strict=True)):
        th.join(max(0.0, deadline - time.monotonic()) + 0.5)
        if th.is_alive() or not results[i]:
            results[i] = [fail(f"{t.name}: reachable", f"no result within the {timeout:g} s timeout")]
    report.checks = [*skipped, *(ch for r in results for ch in r), *local]
    report.seconds = time.monotonic() - start
    report.probe_seconds = time.monotonic() - (deadline - timeout)
    return report


def _probe_into(out: list[Check], t: Target, deadline: float, student: Student) -> None:
    try:
        out.extend(probe(t, deadline, student))
    except Exception as e:  # a probe's bug is a FAIL line, never a traceback
        out.append(fail(f"{t.name}: reachable", f"the probe broke ({type(e).__name__}: {e})"))


def _student(run: RunSpec, text: str | None, key_env: str) -> Any:
    """--student-endpoint as an Endpoint: a URL serving the spec's model, or vllm:<model>@<url>."""
    from whileai.spec.endpoint import Endpoint, parse_endpoint
    from whileai.spec.load import build

    if text is None:
        return None
    data: dict[str, Any] = {"url": text, "model": run.model}
    if text.startswith("vllm:"):
        try:
            data = parse_endpoint(text)
        except ValueError as e:
            raise SpecError("--student-endpoint", text, str(e)) from None
    url = data["url"]
    if re.fullmatch(r"https?://[^/]+/?", url):  # TRL's form: the server root (its client adds /v1)
        data["url"] = url.rstrip("/") + "/v1"
    try:
        return build(Endpoint, data | {"api_key_env": key_env})
    except SpecError as e:
        raise SpecError("--student-endpoint", text, e.allowed) from None


def _seq_len(c: Any) -> tuple[int, str]:
    run: RunSpec = c.run
    if isinstance(c.facts.seq_len, int):
        return c.facts.seq_len, "seq_len of the compiled file"
    return run.prompt_tokens + mixture.max_tokens(run), "prompt_tokens + max_tokens"


def _teachers(stages: list[Any], in_process: str, where: str) -> tuple[list[Target], list[Check]]:
    """One target per distinct (URL, model, role) over the stages and sources; in_process: why
    the target's teachers are no servers to probe, or ""."""
    found: dict[tuple[str, str, str], Target] = {}
    skipped: list[Check] = []
    for i, c in enumerate(stages, 1):
        seq, seq_field = _seq_len(c)
        for field, ep, entries in mixture.teachers(c.run):
            if len(stages) > 1:
                field = f"then.{field}" if i == 2 else field
            label = "teacher" if len(stages) == 1 else f"stage {i} teacher"
            if c.run.sources:
                label += f" (source {', '.join(e.name for e in entries)})"
            role = "score" if any(e.method.SCORER == "teacher" for e in entries) else "sample"
            name = f"{label} {ep.model} @ {ep.url}"
            if in_process:
                skipped.append(skip(f"{name}: endpoint", in_process))
                continue
            host = ep.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[0]
            if where == "modal" and host in LOCAL:
                skipped.append(skip(f"{name}: endpoint", "served inside each arm's Modal container "
                                    "by the arm's own commands: nothing to probe from here"))
                continue
            key = (ep.url, ep.model, role)
            # the target's plan of this server: its serve line, how the run calls it
            rec = next((t for t in c.teachers if (t.model, t.url) == (ep.model, ep.url)), None)
            how = {"serve_line": rec.serve, "client": rec.client} if rec is not None else {}
            old = found.get(key)
            if old is not None:
                found[key] = Target(f"{old.label} + {label}", old.field, ep.url, ep.model,
                                    ep.api_key_env, role, max(old.seq_len, seq), seq_field, **how)
                continue
            found[key] = Target(label, field, ep.url, ep.model, ep.api_key_env, role, seq, seq_field,
                                **how)
    return list(found.values()), skipped


def _machine(run: RunSpec, need: Needs, stages: list[Any], where: str, cpu: bool,
             prime_rl: str | None, output_dir: str | None, deadline: float) -> list[Check]:
    if where == "modal":
        return [skip("machine", "the arms run on Modal's GPUs, not on this machine")]
    out: list[Check] = [machine.gpus(need.gpus, need.gpus_why, deadline, cpu=cpu)]
    out.append(machine.disk(output_dir or run.output_dir, _disk(stages, need), "the student's "
                            f"size is unknown from its name ({run.model!r}) and it is not here"))
    # a target that loads the models in-process: offline (HF_HUB_OFFLINE) they must be here already
    offline = need.loads_models and os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    out.append(machine.model("student", run.model, required=offline))
    teachers = [ep.model for s in stages for _, ep, _ in mixture.teachers(s.run)]
    if need.loads_models:
        for name in dict.fromkeys(teachers):
            out.append(machine.model("teacher", name, required=offline))
        opd = next((ep.model for s in stages for _, ep, e in mixture.teachers(s.run)
                    if any(x.method.SCORER == "teacher" for x in e)), None)
        out.append(machine.memory(run.model, opd, deadline, cpu=cpu))
    out.append(machine.checkout(prime_rl, need.commit, deadline) if need.commit else
               skip("machine: prime-rl checkout", need.no_checkout))
    return out


def _disk(stages: list[Any], need: Needs) -> machine.Estimate | None:
    total, parts = 0.0, []
    for c in stages:
        r: RunSpec = c.run
        size = sizes.params(r.model)
        params_b = size.total_b if size else None
        if params_b is None and machine.find_model(r.model).bytes:  # here: from its weight files
            params_b = machine.find_model(r.model).bytes / 2e9  # bf16: 2 bytes a parameter
        ck = r.checkpoint
        n_ckpt = (max(1, r.steps // ck.interval) if ck.interval else 1) if ck.enabled else 0
        if ck.keep_last:
            n_ckpt = min(n_ckpt, ck.keep_last)
        per_step = c.cost.to_dict()["tokens_per_step"] if c.cost is not None else 0
        est = machine.disk_estimate(
            params_b, lora=r.lora, checkpoints=n_ckpt, broadcasts=need.broadcasts,
            tokens_per_step=per_step,
            steps_kept=r.max_off_policy_steps + 1 if need.keeps_rollouts else 0)
        if est is None:
            return None
        total += est.bytes
        parts.append(est.parts)
    return machine.Estimate(total, "; ".join(parts))


__all__ = ["preflight"]
