"""`whileai inspect SPEC`: resolve both sides from flags and spec, run, write the page and JSON.

Sides: the student is `--local-student` (a folder or a cached model id) or `--student-endpoint`
(a URL serving the spec's model, or `vllm:<model>@<url>`). The teacher is `--local-teacher`,
`--teacher-endpoint`, or else the spec's own teacher endpoint (OPD, SFT); OPSD's teacher is the
student's model itself, so it takes no teacher flag. API keys come from environment variables
(the spec's `api_key_env` for its teacher; `--student-api-key-env` for the student).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console

from whileai.errors import SpecError
from whileai.spec.run import Endpoint, RunSpec, parse_endpoint
from whileai.tokenview.adapters import Adapter, adapter, teacher_endpoint
from whileai.tokenview.local import findable
from whileai.tokenview.run import InspectOptions, ModelSource, inspect, open_model

FILES = ("inspect.html", "inspect.json")


def endpoint_source(flag: str, text: str, model: str, key_env: str) -> ModelSource:
    """`URL` (serving `model`) or `vllm:<model>@<url>`, validated like a spec's Endpoint."""
    fields = parse_endpoint(text) if text.startswith("vllm:") else {"url": text, "model": model}
    try:
        ep = Endpoint(**fields, api_key_env=key_env)
    except SpecError as e:
        if e.field == "api_key_env":
            raise SpecError("--student-api-key-env", key_env, e.allowed) from None
        raise SpecError(flag, text, e.allowed) from None
    return ModelSource(url=ep.url, model=ep.model, api_key_env=ep.api_key_env)


def sources(run: RunSpec, ad: Adapter, *, local_student: str | None, student_endpoint: str | None,
            student_key_env: str, local_teacher: str | None,
            teacher_endpoint_text: str | None) -> tuple[ModelSource, ModelSource | None]:
    """(student, teacher); teacher None means the student's own model (OPSD). The flags'
    combination first, then each local model's folder or cache entry (cheap: nothing loads), so
    a wrong path is blamed on its own flag before any endpoint is called."""
    student, teacher = _sources(run, ad, local_student=local_student, student_endpoint=student_endpoint,
                                student_key_env=student_key_env, local_teacher=local_teacher,
                                teacher_endpoint_text=teacher_endpoint_text)
    for flag, src in (("--local-student", student), ("--local-teacher", teacher)):
        if src is not None and src.local:
            findable(src.local, flag)
    return student, teacher


def _sources(run: RunSpec, ad: Adapter, *, local_student: str | None, student_endpoint: str | None,
             student_key_env: str, local_teacher: str | None,
             teacher_endpoint_text: str | None) -> tuple[ModelSource, ModelSource | None]:
    if local_student and student_endpoint:
        raise SpecError("--local-student", local_student, "either --local-student or --student-endpoint")
    if local_student:
        student = ModelSource(local=local_student)
    elif student_endpoint:
        student = endpoint_source("--student-endpoint", student_endpoint, run.model, student_key_env)
    else:
        raise SpecError("--local-student", None, "a local model (--local-student PATH) or the "
                        "student's server (--student-endpoint URL, e.g. prime-rl's inference server "
                        "http://localhost:8000/v1)")
    if ad.self_teacher:
        if local_teacher or teacher_endpoint_text:
            raise SpecError("--local-teacher" if local_teacher else "--teacher-endpoint",
                            local_teacher or teacher_endpoint_text,
                            f"no teacher flag for {run.method.type}: its teacher is the student's own "
                            "model shown the privileged context")
        return student, None
    if local_teacher and teacher_endpoint_text:
        raise SpecError("--local-teacher", local_teacher, "either --local-teacher or --teacher-endpoint")
    if local_teacher:
        return student, ModelSource(local=local_teacher)
    spec_teacher: Any = teacher_endpoint(run)
    if teacher_endpoint_text:
        model = spec_teacher.model if spec_teacher else run.model
        env = spec_teacher.api_key_env if spec_teacher else "VLLM_API_KEY"
        return student, endpoint_source("--teacher-endpoint", teacher_endpoint_text, model, env)
    if spec_teacher is None:
        raise SpecError("--local-teacher", None, "a teacher: --local-teacher PATH or --teacher-endpoint URL")
    return student, ModelSource(url=spec_teacher.url, model=spec_teacher.model,
                           api_key_env=spec_teacher.api_key_env, flag="method.teacher")


def precheck(spec: Path, *, split: str, out: Path | None) -> None:
    """Every refusal that needs no model, before any is built or loaded (`--tiny` builds its
    models after this): the spec, its method (one with a teacher signal), its data, the output
    folder."""
    from whileai.spec.load import load_spec

    run = load_spec(spec)
    _ready(run, _inspectable(run), spec, split=split, out=out)


def _inspectable(run: RunSpec) -> Adapter:
    if run.sources:
        raise SpecError("sources", run.sources[0].taskset, "none: inspect shows one method's signal "
                        "on one taskset; write the source you want to see (its taskset and method) "
                        "as a spec of its own")
    return adapter(run)


def _ready(run: RunSpec, ad: Adapter, spec: Path, *, split: str, out: Path | None) -> Path:
    """The spec's data readable and the output folder writable: the folder."""
    from whileai.files.names import inspect_folder, spec_name
    from whileai.files.writable import probe
    from whileai.files.write import check_folder
    from whileai.tokenview import data

    data.sample(run, 1, seed=0, split=split, privileged=ad.privileged(run))  # data errors first
    target = check_folder(out if out is not None else Path(inspect_folder(spec_name(spec))),
                          "--out", "inspect writes inspect.html and inspect.json into it")
    probe(target, "--out")  # writable before any model loads or any token is generated
    return target


def run_inspect(spec: Path, *, opts: InspectOptions, out: Path | None, force: bool, device: str,
                timeout: float, console: Console, progress: bool = True, **flags: Any) -> list[str]:
    """The whole command; returns the paths written. Bad input raises SpecError before any
    model is loaded, and nothing is written unless the report is complete."""
    from whileai.files.write import Output, write
    from whileai.spec.load import load_spec
    from whileai.tokenview.page import render
    from whileai.tokenview.summary import print_summary, progress_bar

    run = load_spec(spec)
    ad = _inspectable(run)
    student_src, teacher_src = sources(run, ad, **flags)
    target = _ready(run, ad, spec, split=opts.split, out=out)
    err = Console(stderr=True, width=console.width)
    start = time.perf_counter()
    with err.status("loading models"):
        # endpoints first: a wrong URL, model name or key fails before a local model loads
        order = sorted([("student", student_src), ("teacher", teacher_src)],
                       key=lambda side: side[1] is None or bool(side[1].local))
        opened = {role: open_model(role, src, device=device, timeout=timeout)
                  for role, src in order if src is not None}
        student = opened["student"]
        teacher = opened.get("teacher", student)
    loaded = time.perf_counter() - start
    both = (student_src, teacher_src or student_src)
    if progress:
        with progress_bar(err) as update:
            report = inspect(run, str(spec), student, teacher, opts, sources=both, progress=update,
                             load_seconds=loaded)
    else:
        report = inspect(run, str(spec), student, teacher, opts, sources=both, load_seconds=loaded)
    text = report.model_dump_json(indent=1) + "\n"
    files = {FILES[0]: render(report), FILES[1]: text}
    write([Output(target, files)], force=force)
    paths = [str(target / name) for name in files]
    print_summary(report, paths, console)
    return paths
