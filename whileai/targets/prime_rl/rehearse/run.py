"""A rehearsal: prime-rl's own `rl` launcher, orchestrator and env servers for N steps on a CPU,
with stand-ins for the policy inference server, every teacher and the trainer.

    result = rehearse(stages, python=find_python(None), steps=2, timeout=900, keep=None, say=print)
    result.ok, result.verdicts      # one Verdict per stage

Per stage, in a folder of its own: the offline copy (`offline`), the tiny model and local rows,
the stand-in commands first on PATH (`inference`, `torchrun`), the teachers from their run
lines, then `rl @ run.toml` under one deadline for the whole rehearsal (whileai.rehearse.session:
the folder, the supervisor, Ctrl-C), then the verdict from the logs (`logs`). A two-stage run
rehearses stage 1, its hand-off (the command whileai's script runs, with the stand-in student),
then stage 2 on the handed-off folder. Every process started is stopped before this returns.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.rehearse.session import checked, held
from whileai.rehearse.supervise import Supervisor, busy, wait_port
from whileai.rehearse.timing import Phases
from whileai.rehearse.verdict import Cause, Result, Verdict
from whileai.targets.prime_rl.rehearse.inputs import RehearsalStage
from whileai.targets.prime_rl.rehearse.logs import after_rl, read
from whileai.targets.prime_rl.rehearse.offline import OfflineCopy, Replacement, offline_copy
from whileai.targets.prime_rl.rehearse.prepare import (
    cache_rows,
    hub_cache,
    model_of,
    policy_ports,
    port_of,
    shims,
    stage_env,
    tiny_model,
)
from whileai.targets.prime_rl.rehearse.scope import cache_spec, stand_in, write_rows


def rehearse_stage(
    stage: RehearsalStage,
    *,
    python: Path,
    steps: int,
    where: Path,
    sup: Supervisor,
    model_dir: Path | None,
    tiny: dict[str, Any],
    say: Callable[[str], None],
    phases: Phases | None = None,
) -> tuple[Verdict, OfflineCopy]:
    import tomli_w

    from whileai.files.atomic import atomic_write
    from whileai.spec.load import loads_toml

    t0 = time.monotonic()
    ph = phases if phases is not None else Phases()
    rows0 = ph.get("rows", 0.0)  # the rows' time so far (earlier stages)
    doc = loads_toml(stage.text, where=stage.name)
    plan = offline_copy(
        doc,
        steps=steps,
        where=where,
        model_dir=model_dir or Path(tiny["dir"]),
        data_dir=where / "rows",
        vocab=int(tiny["vocab_size"]),
    )
    with ph("rows"):
        write_rows(plan.sources)
    atomic_write(where / "run.toml", tomli_w.dumps(plan.doc), durable=False)
    atomic_write(where / "expect.json", json.dumps(plan.expect), durable=False)
    dep = doc.get("deployment") or {}
    gpus = int(dep.get("num_train_gpus") or 1) + int(dep.get("num_infer_gpus") or 1)
    env = stage_env(python, shims(where, python), where, Path(tiny["dir"]), gpus)
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE"):
        env.pop(var, None)  # the rehearsal's own cache, whatever the caller's points at
    env["HF_HOME"] = str(where / "hf")
    ph.add("environment", time.monotonic() - t0 - (ph.get("rows", 0.0) - rows0))
    with ph("rows"):
        cache_rows(python, where / "hf" / "datasets", cache_spec(plan.sources), sup.left())
    for name, text in stage.files.items():  # the server configs the serve lines read (@ file)
        atomic_write(where / name, text, durable=False)
    served = [m for a in stage.serve if (m := model_of(a, stage.files))]
    for model_id in hub_cache(where / "hf", served, Path(tiny["dir"])):
        plan.subs.append(Replacement(f"{model_id} (served)", "the hub's tokenizer", "the tiny model's",
                                      "cached under its id in the rehearsal's own HF_HOME, offline"))
    ports = [port_of(a, files=stage.files) for a in stage.serve]
    pol, teach = policy_ports(doc), set(ports)
    taken = sorted(p for p in pol | teach | {5555, 5556} if busy(p))
    if taken:
        return Verdict(
            False,
            0.0,
            cause=Cause("(ports)", 0, f"port(s) {taken} already in use on 127.0.0.1"),
            summary=f"failed: port(s) {taken} already in use (another server or rehearsal)",
        ), plan
    for args, port, line in zip(stage.serve, ports, stage.lines or stage.serve, strict=True):
        say(f"  teacher stand-in for: {line}")
        sup.start(
            f"{stage.name}-teacher-{port}",
            [str(where / "bin" / "inference"), *args],
            env=env,
            log=where / f"teacher-{port}.log",
            cwd=where,
        )
    for port in ports:
        if not wait_port(port, time.monotonic() + min(60.0, max(1.0, sup.left()))):
            cause = Cause(
                f"teacher-{port}.log", 0, (where / f"teacher-{port}.log").read_text()[-400:].strip()
            )
            return Verdict(
                False,
                time.monotonic() - t0,
                cause=cause,
                summary=f"failed: the teacher stand-in did not start on port {port}",
            ), plan
    say(f"  rl @ {where / 'run.toml'} ({steps} steps, {sup.left():.0f} s left)")
    started = time.time()
    rc = sup.run(
        f"{stage.name}-rl",
        [str(python.parent / "rl"), "@", str(where / "run.toml")],
        env=env,
        log=where / "rl.log",
        cwd=where,
    )
    ended = time.time()
    for port in ports:
        sup.stop(f"{stage.name}-teacher-{port}")
    after_rl(ph, where, started, ended, pol)
    return read(
        where, steps=steps, rc=rc, seconds=time.monotonic() - t0, policy_ports=pol, teacher_ports=teach
    ), plan


def handoff(stage: RehearsalStage, first: OfflineCopy, steps: int, tiny_dir: Path, python: Path,
            where: Path) -> Path:
    """Stage 1's final weights → stage 2's student, as whileai's script does it: the folder
    stage 2 names must be the one stage 1 writes last; the hand-off program then runs on the
    rehearsal's folder with the stand-in student in place of the original."""
    assert stage.handoff is not None and stage.code is not None
    _, named = stage.handoff
    d = first.doc
    run_name = (d.get("run") or {}).get("name")
    orig = first.subs
    out0 = next((s.was for s in orig if s.key == "output_dir"), None)
    max0 = next((s.was for s in orig if s.key == "max_steps"), None)
    expected = os.path.normpath(f"{out0}/{run_name}/broadcasts/step_{max0}")
    if os.path.normpath(named) != expected:
        raise SpecError("model.name (stage 2)", named, f"stage 1's final weights, {expected}")
    folder = Path(d["output_dir"]) / str(run_name) / "broadcasts" / f"step_{steps}"
    r = subprocess.run(
        [str(python), "-c", stage.code, str(tiny_dir), str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    (where / "handoff.log").write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        raise SpecError(
            "then", named, "a hand-off that runs", hint=(r.stderr.strip().splitlines() or ["?"])[-1]
        )
    return folder


def rehearse(
    stages: list[RehearsalStage],
    *,
    python: Path,
    steps: int = 2,
    timeout: float = 900.0,
    keep: Path | None = None,
    say: Callable[[str], None] = print,
) -> Result:
    checked(steps, timeout, keep, kept="tiny")
    fam = stand_in(_doc(stages[0]))
    for stage in stages:  # every refusal (a taskset, a renderer) before a folder or a model is made
        here = Path(".")
        offline_copy(_doc(stage), steps=steps, where=here, model_dir=here, data_dir=here, vocab=1)
    result = Result()

    def body(root: Path, sup: Supervisor) -> None:
        with result.phases("tiny model"):
            tiny = tiny_model(python, fam.name, fam.model_type, root / "tiny", timeout)
        tiny["dir"] = str(root / "tiny")
        prev: OfflineCopy | None = None
        model_dir: Path | None = None
        for stage in stages:
            where = root / stage.name
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir(parents=True)
            result.stages.append(stage.name)
            say(f"stage {stage.name}: {where}")
            if stage.handoff is not None and prev is not None:
                try:
                    model_dir = handoff(stage, prev, steps, Path(tiny["dir"]), python, where)
                except SpecError as e:
                    result.verdicts.append(
                        Verdict(
                            False,
                            0.0,
                            cause=Cause("handoff.log", 0, str(e)),
                            summary=f"failed: the hand-off: {e}",
                        )
                    )
                    result.subs.append([])
                    break
                say(f"  hand-off: stage 1's final folder {model_dir} -> stage 2's student")
            verdict, plan = rehearse_stage(
                stage,
                python=python,
                steps=steps,
                where=where,
                sup=sup,
                model_dir=model_dir,
                tiny=tiny,
                say=say,
                phases=result.phases,
            )
            result.verdicts.append(verdict)
            result.subs.append([*stage.notes, *(s.line() for s in plan.subs)])
            if not verdict.ok:
                break
            prev = plan

    return held(result, keep=keep, timeout=timeout, body=body)


def _doc(stage: RehearsalStage) -> dict[str, Any]:
    from whileai.spec.load import loads_toml

    return loads_toml(stage.text, where=stage.name)
