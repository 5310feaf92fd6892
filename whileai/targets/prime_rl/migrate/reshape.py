"""Reshapes of single tables the classes show only as drops (`converted` rules and pin values):
the v0.6.0 teacher (a model and a client) became a flat client of the algorithm, the v0.7.0
per-env harness became per-role harness and runtime tables, and values the pin spells
differently wherever they sit (renderer thinking, lists of base URLs, a VLM's trainer impl,
taskset arguments the pin's taskset no longer has)."""

from __future__ import annotations

import re
from typing import Any

from whileai.catalogs import tasksets as taskset_catalog
from whileai.targets.prime_rl.migrate import chain
from whileai.targets.prime_rl.migrate.edit import show
from whileai.targets.prime_rl.migrate.transforms import Step, _move, _sources, _tokens, target

Path_ = chain.Path_
ORCH = "orchestrator"


def _mode(ctx: Step) -> str | None:
    """The v0.6.0 training mode, read before or after its own rule ran."""
    for where in (ctx.at(ORCH, "training_mode"), ctx.at(ORCH, "algo", "type")):
        if where in ctx.paths:
            value = ctx.paths[where]
            return {"rl": "grpo"}.get(str(value), str(value))
    return None


def teacher_to_algo(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    """v0.6.0 [orchestrator.teacher] {model, client} -> v0.7.0's flat client: the opd
    algorithm's teacher, or the model sft samples from (algo.sampling.source)."""
    n = len(_tokens(rule["old"]))
    rest, sft = path[n:], _mode(ctx) == "sft"
    base: Path_ = ((*path[:n - 1], "algo", "sampling", "source") if sft
                   else target(path[:n], rule["old"], rule["new"]))
    role = "the model sft samples from is a client of the algorithm" if sft else rule["why"]
    if rest[:2] == ("model", "name"):
        new: Path_ | None = (*base, "name")
    elif rest[:1] == ("client",) and len(rest) > 1:
        new = (*base, *rest[1:])
    else:
        new = (*base, *rest) if rest and rest[0] != "model" else None
    if new is None or not chain.known(chain.generic(new), ctx.to, ctx.entry):
        ctx.drop(path)
        ctx.note("dropped", show(path), "", f"the teacher is a client at {ctx.to} (its name and "
                 "connection only): nothing takes this")
        return
    _move(ctx, path, new, role, "converted")
    renderer = (*path[:n - 1], "renderer")
    if sft and not any(p[:len(renderer)] == renderer for p in ctx.paths):
        ctx.set((*renderer, "name"), "default")
        ctx.note("defaulted", "", "orchestrator.renderer.name = 'default'", "v0.6.0 sampled a "
                 "teacher-backed sft without a renderer (plain chat completions); the pin always "
                 "renders, and 'default' applies the model's own chat template")


BASE_URL = re.compile(r"(^|\.)(algo\.teacher|algo\.sampling\.source|model\.client)\.base_url$")
THINKING = re.compile(r"(^|\.)renderer\.preserve_all_thinking$")


def pin_values(ctx: Step) -> None:
    """Values the pin spells differently, wherever their table sits."""
    for path in list(ctx.paths):
        if path not in ctx.paths:
            continue
        gen = chain.generic(path)
        if BASE_URL.search(gen):
            _one_url(ctx, path)
        elif THINKING.search(gen):
            _thinking(ctx, path)
    _vlm_impl(ctx)
    for src in _sources(ctx):
        _taskset_args(ctx, src)


def _one_url(ctx: Step, where: Path_) -> None:
    value = ctx.paths[where]
    if isinstance(value, list) and len(value) == 1:
        ctx.set(where, value[0])
        ctx.note("converted", f"{show(where)} = {list(value)!r}", repr(value[0]),
                 "a client's base_url is one URL at the pin")


def _thinking(ctx: Step, path: Path_) -> None:
    """renderers' preserve_all_thinking became thinking_retention (prime-rl #2900)."""
    value = ctx.drop(path)
    if value is True:
        new = (*path[:-1], "thinking_retention")
        ctx.set(new, "all")
        ctx.note("converted", f"{show(path)} = true", f"{show(new)} = 'all'",
                 "renderers replaced preserve_all_thinking with thinking_retention (prime-rl #2900)")
    else:
        ctx.note("dropped", f"{show(path)} = {value!r}", "", "renderers replaced "
                 "preserve_all_thinking with thinking_retention, whose default keeps no old thinking")


def _vlm_impl(ctx: Step) -> None:
    """A VLM trained with impl = 'auto' got prime-rl's own (custom) model class where it had
    one; the pin requires impl = 'custom' for any VLM (configs/trainer.py:274)."""
    impl = ctx.at("trainer", "model", "impl")
    if impl is None or (ctx.entry == "rl" and "trainer" not in ctx.doc):
        return
    vlm = any(p[:2] == ("model", "vlm") or p[:3] == ("trainer", "model", "vlm") for p in ctx.paths)
    if not vlm:
        return
    value = ctx.paths.get(impl, "auto")
    if value == "auto":
        ctx.set(impl, "custom")
        ctx.note("defaulted", "", f"{show(impl)} = 'custom'", "VLM training needs impl = 'custom' "
                 "at the pin; 'auto' picked the custom VLM class before")
    elif value != "custom":
        ctx.note("decision", f"{show(impl)} = {value!r}", "", "VLM training needs impl = 'custom' "
                 "at the pin; choose trainer.model.impl = 'custom' or a text-only model")


def _taskset_args(ctx: Step, src: Path_) -> None:
    """A v1 taskset argument the pin's taskset no longer has (e.g. color-codeword's
    num_examples) is dropped, as the pin's own files dropped it."""
    at = (*src, "env", "taskset")
    tid = ctx.paths.get((*at, "id"))
    names = taskset_catalog.argument_names(tid) if isinstance(tid, str) and taskset_catalog.entry(tid) else []
    if not names:
        return
    for path in [p for p in ctx.paths if p[: len(at)] == at and len(p) > len(at)]:
        key = path[len(at)]
        if key != "id" and key not in names and path in ctx.paths:
            ctx.drop(path)
            ctx.note("dropped", show(path), "", f"{tid}'s taskset has no {key} at the pin (its "
                     f"arguments: {', '.join(names)})")


TRANSFORMS = {"teacher-to-algo": teacher_to_algo}
