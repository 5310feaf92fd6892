"""The reshaping renames of the chain (`converted` rules): environments became sources
(v0.7.0 -> v0.8.0), and the v0 `legacy` bridge became a v1 taskset (v0.8.0 -> the pin), with
the behaviour the old release had written out where the pin's default differs."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tomlkit

from whileai.catalogs import tasksets as taskset_catalog
from whileai.catalogs.targets import plugin_key
from whileai.targets.prime_rl.migrate import chain
from whileai.targets.prime_rl.migrate.edit import delete, get, leaves, put, show

Path_ = chain.Path_


@dataclass(frozen=True)
class Change:
    kind: str  # moved | converted | dropped | defaulted | decision
    old: str
    new: str
    release: str  # the release that made the change ("v0.8.0 -> 559b447")
    why: str

    def line(self) -> str:
        if self.kind in ("moved", "converted"):
            return f"{self.kind}: {self.old} -> {self.new} ({self.release}: {self.why})"
        if self.kind == "defaulted":
            return f"defaulted: {self.new} ({self.release}: {self.why})"
        if self.kind == "decision":
            return f"needs a decision: {self.old} ({self.release}: {self.why})"
        return f"dropped: {self.old} ({self.release}: {self.why})"



@dataclass
class Step:
    doc: Any
    label: str
    to: str
    emptied: set[Path_]
    changes: list[Any]
    legacy_sources: list[Path_] = field(default_factory=list)
    created: list[Any] = field(default_factory=list)
    # the document's leaves and their values, kept current: reads come from here, since
    # tomlkit's lookups are slow (a value may be tomlkit's item or a plain one)
    paths: dict[Path_, Any] = field(default_factory=dict)
    entry: str = "rl"  # the entry point the file is for: its paths start below the rl file's table

    def at(self, table: str, *rest: str | int) -> Path_ | None:
        """A path under the rl file's [table] as this entry point's file spells it (None: the
        entry point has no such table)."""
        if self.entry == "rl":
            return (table, *rest)
        return tuple(rest) if table == self.entry else None

    def drop(self, path: Path_) -> Any:
        value = delete(self.doc, path, self.emptied)
        n = len(path)
        for p in [p for p in self.paths if p[:n] == path]:
            del self.paths[p]
        return value

    def set(self, path: Path_, value: Any) -> None:
        put(self.doc, path, value, self.created)
        if isinstance(value, dict):
            n = len(path)
            self.paths.update({p: get(value, p[n:]) for p in leaves(value, path)})
        else:
            self.paths[path] = value

    def note(self, kind: str, old: str, new: str, why: str) -> None:
        self.changes.append(Change(kind, old, new, self.label, why))

    def finish(self) -> None:
        if self.to == chain.pin():
            pin_values(self)
            for src in dict.fromkeys(self.legacy_sources):
                _local_roles(self, src)



def _tokens(generic: str) -> list[str | None]:
    return [None if t == "[]" else t.lstrip(".") for t in re.findall(r"\[\]|\.?[^.\[\]]+", generic)]


def target(path: Path_, old: str, new: str) -> Path_:
    """The concrete path `path` (under the generic `old`) takes under the generic `new`."""
    n = len(_tokens(old))
    indices = [seg for seg in path[:n] if isinstance(seg, int)]
    out: list[str | int] = []
    for tok in _tokens(new):
        out.append(tok if tok is not None else (indices.pop(0) if indices else 0))
    return (*out, *path[n:])


def _move(ctx: Step, path: Path_, new: Path_, why: str, kind: str = "moved") -> None:
    value = ctx.drop(path)
    ctx.set(new, value)
    ctx.note(kind, show(path), show(new), why)


# v0.7.0 env[] field -> where it lives in v0.8.0's source[]
ENV_FIELDS = {"id": ("legacy", "id"), "args": ("legacy", "args"),
              "extra_env_kwargs": ("legacy", "extra_env_kwargs"), "taskset": ("env", "taskset"),
              "address": ("serve", "address")}


def env_to_source(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    base = target(path, rule["old"], rule["new"])
    n = len(_tokens(rule["new"]))
    head, rest = base[:n], base[n:]
    mapped = ENV_FIELDS.get(str(rest[0])) if rest else None
    cat = chain.keys(ctx.to, ctx.entry)
    gen = chain.generic(head)
    if mapped is not None:
        new = (*head, *mapped, *rest[1:])
    elif f"{gen}.{rest[0]}" in cat:
        new = base
    elif rest[:2] == ("timeout", "rollout"):  # rollouts are counted as episodes (v0.8.0)
        new = (*head, "env", "timeout", "episode", *rest[2:])
    elif f"{gen}.env.{rest[0]}" in cat and _fits(cat, chain.generic((*head, "env", *rest))):
        new = (*head, "env", *rest)
    elif rest[0] == "harness":
        harness_to_roles(ctx, head, path[: len(head)], rest, "a v0.7.0 env's harness (and its "
                         "runtime) became each agent role's harness and runtime tables")
        return
    else:
        ctx.drop(path)
        ctx.note("dropped", show(path), "", f"{show(rest)} has no place in a source: {rule['why']}")
        return
    _move(ctx, path, new, rule["why"], "converted" if mapped or rest[0] == "harness" else "moved")
    if rest and rest[0] == "id" and (*head, "name") not in ctx.paths \
            and (*path[: len(head)], "name") not in ctx.paths:
        ctx.set((*head, "name"), ctx.paths[new])
        ctx.note("defaulted", "", f"{show((*head, 'name'))} = {ctx.paths[new]!r}",
                 "a source is named; the env id named it before")


def _fits(cat: dict[str, Any], path: str) -> bool:
    """A key inside a typed table of the catalogue must be one of its fields (a v0.7.0 env's
    timeout.scoring has no place in v0.8.0's timeout table)."""
    table = path.rsplit(".", 1)[0]
    return path in cat or cat.get(table, {}).get("kind") != "table"


def _roles(tid: Any) -> tuple[str, ...]:
    if not isinstance(tid, str):
        return ("agent",)
    bare = tid.split("/", 1)[-1].split("@", 1)[0]
    for name in (tid, bare, bare[:-3] if bare.endswith(("-v1", "_v1")) else bare):
        got = taskset_catalog.roles(name)
        if got:
            return got
    return ("agent",)


def harness_to_roles(ctx: Step, head: Path_, old_head: Path_, rest: tuple[Any, ...], why: str) -> None:
    """v0.7.0 env[].harness {id, ..., runtime} -> each agent role's harness and runtime tables
    of the source's env (`agent`, or the roles the taskset names)."""
    path = (*old_head, *rest)
    tid = next((ctx.paths[p] for p in ((*head, "env", "taskset", "id"), (*old_head, "taskset", "id"))
                if p in ctx.paths), None)
    value = ctx.drop(path)
    roles = _roles(tid)
    for i, role in enumerate(roles):
        where = (*head, "env", role)
        new = (*where, "runtime", *rest[2:]) if rest[1:2] == ("runtime",) else (*where, "harness", *rest[1:])
        ctx.set(new, value if i == 0 else copy.deepcopy(value))
    ctx.note("converted", show(path), show((*head, "env", roles[0], *(
        ("runtime", *rest[2:]) if rest[1:2] == ("runtime",) else ("harness", *rest[1:])))), why)


def legacy_to_taskset(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    n = len(_tokens(rule["old"]))
    src, rest = path[: n - 1], path[n:]
    taskset = (*src, "env", "taskset")
    if rest[:1] == ("id",):
        _move(ctx, path, (*taskset, "id"), rule["why"], "converted")
        ctx.legacy_sources.append(src)
    elif rest[:1] == ("args",) and len(rest) > 1:
        _move(ctx, path, _arg_path(ctx, src, taskset, rest[1:]),
              "a v0 env's arguments are the taskset's own fields", "converted")
    elif rest[:1] == ("args",):
        args = ctx.drop(path)
        for key, value in args.items():
            new = _arg_path(ctx, src, taskset, (key,))
            ctx.set(new, value)
            ctx.note("converted", show((*path, key)), show(new),
                     "a v0 env's arguments are the taskset's own fields (or its task's)")
    else:
        ctx.drop(path)
        ctx.note("dropped", show(path), "", rule["why"])


def _arg_path(ctx: Step, src: Path_, taskset: Path_, rest: tuple[Any, ...]) -> Path_:
    """Where a v0 env argument goes: the taskset's field, or its task's (alphabet-sort's
    power_per_turn is a task field at the pin)."""
    tid = next((ctx.paths[p] for p in ((*src, "legacy", "id"), (*taskset, "id")) if p in ctx.paths), None)
    entry = taskset_catalog.entry(str(tid)) if tid else None
    if entry and rest[0] not in entry["args"] and rest[0] in entry.get("task_args", []):
        return (*taskset, "task", *rest)
    return (*taskset, *rest)


def pin_values(ctx: Step) -> None:
    """Values the pin spells differently (run on every file, whatever release it is for)."""
    for src in _sources(ctx):
        _taskset_id(ctx, src)
    for table in (("resume",), ("trainer", "resume"), ("orchestrator", "resume")):
        step = (*table, "step")
        if ctx.paths.get(step) == -1:
            ctx.drop(step)
            ctx.emptied.discard(table)  # an empty [resume] resumes from the latest checkpoint
            ctx.note("converted", f"{show(step)} = -1", f"[{show(table)}] without step",
                     "-1 meant the latest checkpoint; at the pin that is [resume] with no step, and "
                     "where no checkpoint is found it logs 'No checkpoints found' and starts from scratch")


def at_pin(taskset: str) -> bool:
    """A taskset the pin knows: in the catalogue, or a member of its workspace that the
    catalogue could not load offline (prime-envs)."""
    return taskset_catalog.entry(taskset) is not None \
        or plugin_key(taskset) in taskset_catalog.data().get("not_loadable", {})


def _sources(ctx: Step) -> list[Path_]:
    heads = {h for h in (ctx.at("orchestrator", "train", "source"), ctx.at("orchestrator", "eval", "source"))
             if h is not None}
    n = len(next(iter(heads))) if heads else 0
    return list(dict.fromkeys(p[:n + 1] for p in ctx.paths
                              if p[:n] in heads and len(p) > n and isinstance(p[n], int)))


def _taskset_id(ctx: Step, src: Path_) -> None:
    """v0.8.0's v1 tasksets were `<name>-v1`; the pin names them `<name>`. Prime's own hub ids
    (`primeintellect/<name>`) of a taskset the pin ships load that same plugin: the pin's files
    write the bare name."""
    where = (*src, "env", "taskset", "id")
    if where not in ctx.paths:
        return
    tid = ctx.paths[where]
    own_hub = isinstance(tid, str) and tid.lower().startswith("primeintellect/")
    if not isinstance(tid, str) or (at_pin(tid) and not own_hub):
        return
    bare = tid.split("/", 1)[-1].split("@", 1)[0]
    bare = bare[:-3] if bare.endswith(("-v1", "_v1")) else bare
    if bare != tid and at_pin(bare):
        ctx.set(where, bare)
        ctx.note("converted", f"{show(where)} = {tid!r}", f"{bare!r}", "the pin's taskset of that "
                 "name (v1 tasksets dropped their -v1 suffix; hub env ids are built in)")
        name = (*src, "name")
        if name in ctx.paths and ctx.paths[name] == tid:
            ctx.set(name, bare)


def _local_roles(ctx: Step, src: Path_) -> None:
    """A v0 env ran in the orchestrator's process with no harness; the pin's default runtime
    is a remote sandbox VM, so the old behaviour is written out per agent role."""
    at = (*src, "env", "taskset", "id")
    tid = ctx.paths.get(at)
    roles = taskset_catalog.roles(str(tid)) if tid else None
    for role in roles or ("agent",):
        for key, value in (("harness", "null"), ("runtime", "subprocess")):
            where = (*src, "env", role, key)
            if any(p[: len(where)] == where for p in ctx.paths):
                continue
            table = tomlkit.table()
            table["id" if key == "harness" else "type"] = value
            ctx.set(where, table)
            ctx.note("defaulted", "", f"{show(where)} = {value!r}",
                     "a v0 env ran in-process; the pin's default runtime is a remote sandbox VM")


MODES = {"rl": "grpo", "opd": "opd", "sft": "sft"}  # v0.6.0's training_mode -> the algorithm


def training_mode(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    mode = ctx.drop(path)
    algo = MODES.get(str(mode))
    if algo is None:
        ctx.note("decision", f"{show(path)} = {str(mode)!r}", "",
                 f"{rule['why']}; choose orchestrator.algo.type")
        return
    new = target(path, rule["old"], rule["new"])
    ctx.set(new, algo)
    ctx.note("converted", f"{show(path)} = {str(mode)!r}", f"{show(new)} = {algo!r}", rule["why"])


TRANSFORMS: dict[str, Callable[[Step, Path_, dict[str, Any]], None]] = {
    "env-to-source": env_to_source, "legacy-to-taskset": legacy_to_taskset,
    "training-mode": training_mode,
}
