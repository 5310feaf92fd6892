"""Which checks a spec needs, and running them all within one deadline.

    report = preflight(run, target="prime-rl", timeout=10)   # whileai.preflight.PreflightReport
    report.lines(); report.to_dict(); report.exit_code        # 1 when any check FAILs

What is probed is the target's answer (its `probes` hook, whileai.targets.probe): each server the
run calls (each distinct teacher of each stage and source, the student's server when given), each
model it names but does not call from here (a skip line with the reason), the models it loads
in-process; then this machine (the target's `machine` hook). Every server is probed in its own
thread and every request ends by the same deadline, so the whole run ends within `timeout` (plus
the time to compile the spec) whatever a server does.
"""

from __future__ import annotations

import os
import re
import threading
import time
from typing import Any

from whileai.cost import sizes
from whileai.errors import SpecError
from whileai.files.names import spec_name
from whileai.preflight import machine
from whileai.preflight.report import Check, PreflightReport, fail, skip
from whileai.preflight.servers import probe
from whileai.preflight.tokens import Student
from whileai.spec.run import RunSpec
from whileai.targets.base import Machine as Needs
from whileai.targets.probe import Loads, Probe, ServerProbe, Unprobed

LOCAL = ("localhost", "127.0.0.1", "0.0.0.0")
WHERE = ("here", "elsewhere", "modal")


def preflight(run: RunSpec, *, target: str | None = None, spec: str = "spec",
              student_endpoint: str | None = None, student_key_env: str = "VLLM_API_KEY",
              timeout: float = 10.0, checkout: str | None = None, where: str = "here",
              cpu: bool = False, output_dir: str | None = None,
              name: str | None = None) -> PreflightReport:
    """Every check of `run` for `target` (whileai.targets.registry; None: the first listed).
    where: "here" (this machine runs it), "elsewhere" (this machine only submits it: its GPUs are
    not checked, its disk is, said so) or "modal" (the arms run in Modal containers that serve
    their own local teachers: those and this machine's facts are skipped). A run on several
    nodes is checked as "elsewhere": this machine is the login node it is submitted from.
    checkout: the path of the framework's own checkout, for a target whose runs start from one
    (refused for another: it would be read by nothing). Bad input (target,
    URL, timeout) raises SpecError. name: the spec's name, which the files its fix lines name
    start with (whileai.files.names: the spec file's stem, as `compile -o` writes them; None: the
    method type, as the API names a spec without a file)."""
    from whileai.api import compile_all
    from whileai.targets import registry

    tg = registry.get(registry.names()[0] if target is None else target, "--target")
    if where not in WHERE:
        raise SpecError("where", where, "here or modal")
    if not 0 < timeout <= 3600:
        raise SpecError("--timeout", timeout, "seconds, more than 0 and at most 3600")
    student_ep = _student(run, student_endpoint, student_key_env)
    start = time.monotonic()
    c = compile_all([run], tg.name, names=[name or spec_name(None, run)], cpu=cpu)[0]
    deadline = time.monotonic() + timeout
    report = PreflightReport(spec, tg.name, timeout)
    stages = list(c.stages or (c,))
    need = tg.machine(run, stages)
    if checkout is not None and need.checkout is None:
        raise SpecError("--checkout", checkout, f"no --checkout with target {tg.name}: its runs "
                        "start from its installed package, not from a checkout whileai can check")
    probes = tg.probes(run, stages, student_ep)
    servers, skipped = _servers(probes, where)
    results: list[list[Check]] = [[] for _ in servers]
    student = Student(run.model)
    threads = [threading.Thread(target=_probe_into, args=(results[i], t, deadline, student),
                                daemon=True) for i, t in enumerate(servers)]
    for th in threads:
        th.start()
    loads = next((p for p in probes if isinstance(p, Loads)), None)
    local = _machine(run, need, loads, stages, where, cpu, checkout, output_dir,
                     deadline)
    for i, (th, t) in enumerate(zip(threads, servers, strict=True)):
        th.join(max(0.0, deadline - time.monotonic()) + 0.5)
        if th.is_alive() or not results[i]:
            results[i] = [fail(f"{t.name}: reachable", f"no result within the {timeout:g} s timeout")]
    report.checks = [*skipped, *(ch for r in results for ch in r), *local]
    report.seconds = time.monotonic() - start
    report.probe_seconds = time.monotonic() - (deadline - timeout)
    return report


def _servers(probes: list[Probe], where: str) -> tuple[list[ServerProbe], list[Check]]:
    """The servers to probe from here, and a skip line for each model that is not called: the
    target's reason, or (where="modal") a server on the arm's own container."""
    servers: list[ServerProbe] = []
    skipped: list[Check] = []
    if not any(isinstance(p, (ServerProbe, Unprobed)) for p in probes):
        skipped.append(skip("servers", "nothing to probe: the run calls no server it does not start "
                            "itself"))
    for p in probes:
        if isinstance(p, Unprobed):
            skipped.append(skip(f"{p.name}: endpoint", p.why))
        elif isinstance(p, ServerProbe):
            host = p.url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
            if where == "modal" and host in LOCAL:
                skipped.append(skip(f"{p.name}: endpoint", "served inside each arm's Modal container "
                                    "by the arm's own commands: nothing to probe from here"))
            else:
                servers.append(p)
    return servers, skipped


def _probe_into(out: list[Check], t: ServerProbe, deadline: float, student: Student) -> None:
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
    if re.fullmatch(r"https?://[^/]+/?", url):  # a server root (TRL's form): its client adds /v1
        data["url"] = url.rstrip("/") + "/v1"
    try:
        return build(Endpoint, data | {"api_key_env": key_env})
    except SpecError as e:
        raise SpecError("--student-endpoint", text, e.allowed) from None


def _machine(run: RunSpec, need: Needs, loads: Loads | None, stages: list[Any], where: str,
             cpu: bool, checkout: str | None, output_dir: str | None, deadline: float) -> list[Check]:
    if where == "modal":
        return [skip("machine", "the arms run on Modal's GPUs, not on this machine")]
    away = machine.submitted(need.nodes, where == "elsewhere")
    out: list[Check] = [machine.gpus(need.gpus, need.gpus_why, deadline, cpu=cpu, away=away)]
    out.append(machine.disk(output_dir or run.output_dir, _disk(stages, need), "the student's "
                            f"size is unknown from its name ({run.model!r}) and it is not here", away))
    # models the run loads in-process: offline (HF_HUB_OFFLINE) they must be here already
    offline = loads is not None and os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    out.append(machine.model("student", run.model, required=offline))
    if loads is not None:
        for name in loads.teachers:
            out.append(machine.model("teacher", name, required=offline))
        out.append(machine.memory(loads.student, loads.beside, deadline, cpu=cpu))
    if need.checkout is not None:
        out.append(machine.checkout(checkout, need.checkout, deadline))
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
            params_b, lora=r.lora, checkpoints=n_ckpt, copies=need.copies, copies_are=need.copies_are,
            tokens_per_step=per_step,
            steps_kept=r.max_off_policy_steps + 1 if need.keeps_rollouts else 0)
        if est is None:
            return None
        total += est.bytes
        parts.append(est.parts)
    return machine.Estimate(total, "; ".join(parts))


__all__ = ["preflight"]
