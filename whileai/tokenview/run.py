"""The inspect pipeline: open both sides, sample prompts, generate, score, build the report.

    from whileai.tokenview.run import InspectOptions, ModelSource, open_model, inspect
    student = open_model("student", ModelSource(local="/tmp/tiny/student"))
    report = inspect(run, "spec.toml", student, teacher, InspectOptions(prompts=4))

Pure apart from the models it is handed: the CLI opens them, shows progress and writes files.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from whileai.errors import SpecError
from whileai.spec.run import RunSpec
from whileai.tokenview import data, stats
from whileai.tokenview.adapters import Adapter, adapter
from whileai.tokenview.document import (
    Alternative,
    Completion,
    Definitions,
    InspectReport,
    Method,
    Prompt,
    Settings,
    Side,
    Token,
)
from whileai.tokenview.scoring import Generated, Model, Scored
from whileai.version import __version__

DEFAULT_MAX_TOKENS = 256
GEN_BATCH = 16  # sequences generated together by a local model
Progress = Callable[[str, int, int], None]  # (phase, done, total)


class InspectOptions(NamedTuple):
    prompts: int = 8
    samples: int = 1
    max_tokens: int | None = None  # None: the spec's cap, at most DEFAULT_MAX_TOKENS
    top_k: int = 5
    seed: int | None = None  # None: the spec's seed
    split: str = "train"


class ModelSource(NamedTuple):
    """How to reach one side: a local model, or an endpoint (url, served name, key env)."""

    local: str | None = None
    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    flag: str | None = None  # what errors name (default: the side's CLI flag)


def open_model(role: str, src: ModelSource, *, device: str = "auto", timeout: float = 120.0) -> Model:
    flag = src.flag or (f"--local-{role}" if src.local else f"--{role}-endpoint")
    if src.local:
        from whileai.tokenview.local import LocalModel

        return LocalModel(src.local, flag=flag, device=device)
    if src.url and src.model:
        from whileai.tokenview.remote import EndpointModel

        endpoint = EndpointModel(src.url, src.model, src.api_key_env, flag=flag, timeout=timeout)
        endpoint.check()
        return endpoint
    raise SpecError(f"--{role}", None, f"--local-{role} PATH or --{role}-endpoint URL")


def side(role: str, m: Model, src: ModelSource) -> Side:
    return Side(role=role, kind=m.kind, model=m.name, url=src.url if m.kind == "endpoint" else None,  # type: ignore[arg-type]
                api_key_env=src.api_key_env if m.kind == "endpoint" else None,
                logprobs=m.logprob_source, full_distribution=m.full_distribution)


def _none(phase: str, done: int, total: int) -> None:
    return None


def inspect(run: RunSpec, spec_path: str, student: Model, teacher: Model, opts: InspectOptions, *,
            sources: tuple[ModelSource, ModelSource] = (ModelSource(), ModelSource()),
            progress: Progress = _none,
            load_seconds: float = 0.0) -> InspectReport:
    ad = adapter(run)
    m: Any = run.method
    seed = run.seed if opts.seed is None else opts.seed
    max_tokens = opts.max_tokens or min(m.max_tokens, DEFAULT_MAX_TOKENS)
    notes = []
    if opts.max_tokens is None and m.max_tokens > max_tokens:
        notes.append(f"completions capped at {max_tokens} tokens (the spec allows {m.max_tokens}; "
                     "pass --max-tokens to change)")
    if m.temperature != 1.0:
        notes.append(f"sampled at temperature {m.temperature:g}; log-probs are scored at "
                     "temperature 1 (as vLLM's prompt log-probs)")
    tasks = data.sample(run, opts.prompts, seed=seed, split=opts.split, privileged=ad.privileged(run))
    sampler, other = (student, teacher) if ad.sampler == "student" else (teacher, student)
    t0 = time.perf_counter()
    contexts = [_contexts(ad, t, student, teacher) for t in tasks]
    generated: list[list[Generated]] = []
    chunk = max(1, GEN_BATCH // opts.samples)
    for i in range(0, len(tasks), chunk):
        progress("generate", i * opts.samples, len(tasks) * opts.samples)
        ctxs = [s if ad.sampler == "student" else t for s, t in contexts[i:i + chunk]]
        seeds = [seed + t.row for t in tasks[i:i + chunk]]
        generated += sampler.generate(ctxs, opts.samples, max_tokens, m.temperature, seeds)
    progress("generate", len(tasks) * opts.samples, len(tasks) * opts.samples)
    t1 = time.perf_counter()
    completions: list[Completion] = []
    total = sum(len(g) for g in generated)
    for pi, gens in enumerate(generated):
        s_ctx, t_ctx = contexts[pi]
        for si, gen in enumerate(gens):
            progress("score", len(completions), total)
            s = student.score(s_ctx, gen.ids, opts.top_k)
            t = teacher.score(t_ctx, gen.ids, opts.top_k)
            completions.append(_completion(pi, si, gen.ids, gen.finished, s, t, ad, sampler, opts.top_k))
    progress("score", total, total)
    t2 = time.perf_counter()
    tokens = [tok for c in completions for tok in c.tokens]
    have_full = bool(tokens) and all(tok.full_kl is not None for tok in tokens)
    from whileai.tokenview.tokens import tokenizer_facts

    check, note = tokenizer_facts(run, student, teacher, ad)
    return InspectReport(
        whileai=__version__, spec=spec_path, taskset=run.taskset,
        method=Method(type=run.method.type, sampler=ad.sampler, teacher_context=ad.teacher_context),
        student=side("student", student, sources[0]), teacher=side("teacher", teacher, sources[1]),
        settings=Settings(prompts=len(tasks), samples=opts.samples, max_tokens=max_tokens,
                          temperature=m.temperature, top_k=opts.top_k, seed=seed, split=opts.split,  # type: ignore[arg-type]
                          data=data.source(run)),
        definitions=Definitions(full_kl_available=have_full,
                                full_kl_note=_full_note(student, teacher, have_full)),
        tokenizer_check=check, tokenizer_note=note,
        overall=stats.stats(tokens, opts.top_k), by_position=stats.by_position(completions),
        top_tokens=stats.top_tokens(completions),
        prompts=[Prompt(index=i, row=t.row, prompt=t.prompt, privileged=t.privileged,
                        student_context=student.decode(c[0]), teacher_context=teacher.decode(c[1]),
                        student_context_ids=c[0], teacher_context_ids=c[1])
                 for i, (t, c) in enumerate(zip(tasks, contexts, strict=True))],
        completions=completions,
        timings={"load": round(load_seconds, 3), "generate": round(t1 - t0, 3),
                 "score": round(t2 - t1, 3), "total": round(load_seconds + t2 - t0, 3)},
        notes=notes,
    )


def _contexts(ad: Adapter, task: data.Task, student: Model, teacher: Model) -> tuple[list[int], list[int]]:
    """(student's context ids, teacher's): the sampler renders the prompt; the other side sees
    the same ids unless the adapter gives the teacher a privileged prompt of its own."""
    if ad.sampler == "student":
        s_ctx = student.encode(task.prompt)
        return s_ctx, (teacher.encode(task.teacher_prompt) if task.privileged is not None else s_ctx)
    t_ctx = teacher.encode(task.teacher_prompt)
    return (student.encode(task.prompt) if task.privileged is not None else t_ctx), t_ctx


def _completion(pi: int, si: int, ids: list[int], finished: bool, s: Scored, t: Scored, ad: Adapter,
                sampler: Model, top_k: int) -> Completion:
    first, second = (s, t) if ad.sampler == "student" else (t, s)
    kl: list[float] | None = None
    if first.full is not None and second.full is not None:
        from whileai.tokenview.local import full_kl

        kl = full_kl(first.full, second.full)
    texts = s.texts or t.texts or sampler.token_texts(ids)
    tokens = [
        Token(id=tid, text=texts[i], student_logprob=s.logprobs[i], teacher_logprob=t.logprobs[i],
              signal=first.logprobs[i] - second.logprobs[i], full_kl=kl[i] if kl else None,
              teacher_rank=t.ranks[i],
              teacher_top=[Alternative(id=a.id, text=a.text, logprob=a.logprob) for a in t.top[i]])
        for i, tid in enumerate(ids)
    ]
    return Completion(prompt=pi, sample=si, text=sampler.decode(ids), finished=finished, tokens=tokens,
                      stats=stats.stats(tokens, top_k))


def _full_note(student: Model, teacher: Model, have: bool) -> str:
    if have:
        return "both models ran locally: full distributions at every position"
    ends = [r for r, m in (("student", student), ("teacher", teacher)) if not m.full_distribution]
    if ends:
        return (f"the {' and '.join(ends)} {'is an endpoint' if len(ends) == 1 else 'are endpoints'}: "
                "OpenAI-compatible servers return top-k log-probs only, so only the sampled-token "
                "signal is exact")
    return "the two models' vocabularies differ in size, so ids do not name the same tokens"
