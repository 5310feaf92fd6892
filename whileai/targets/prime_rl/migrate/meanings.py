"""Meanings kept by writing the old behaviour out (`whileai migrate`): where the pin's default
or the meaning of a key differs from what the old release did with the same file, the old
behaviour is written explicitly and named (`defaulted` / `kept`); unknown keys of the old file
are named with a did-you-mean against that release's keys and aliases."""

from __future__ import annotations

import difflib
from typing import Any

from whileai.targets.prime_rl.migrate import chain
from whileai.targets.prime_rl.migrate.edit import show
from whileai.targets.prime_rl.migrate.transforms import Step

Path_ = chain.Path_
# releases whose rl launcher broadcast weights through the filesystem when [weight_broadcast]
# was unset (the class default; v0.7.0 defaulted to NCCL); the pin picks NCCL whenever an
# [inference] server is configured and no LoRA is trained (configs/rl.py:456-460)
FILESYSTEM_BROADCAST = ("v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0", "v0.8.0")


def unknown(paths: list[Path_], release: str, entry: str) -> list[tuple[str, str]]:
    """(key, did-you-mean) for each key of the file that its own release does not know."""
    cat = chain.keys(release, entry)
    out = []
    for path in paths:
        gen = chain.generic(path)
        if chain.known(gen, release, entry):
            continue
        near = difflib.get_close_matches(gen, list(cat), n=1, cutoff=0.6)
        out.append((show(path), f"; did you mean {near[0]}?" if near else ""))
    return out


def rename_aliases(ctx: Step, release: str) -> None:
    """A key spelled with an alias its release accepted gets the field's own name first
    (`orchestrator.rollouts_per_example` at v0.7.0 is `orchestrator.group_size`)."""
    from whileai.targets.prime_rl.migrate.transforms import target

    for path in list(ctx.paths):
        gen = chain.generic(path)
        name = chain.canonical(gen, release, ctx.entry)
        if name != gen and path in ctx.paths:
            new = target(path, gen, name)
            ctx.set(new, ctx.drop(path))
            ctx.note("moved", show(path), show(new), f"an alias of {name} at {release}, renamed "
                     "to the field's own name")


def renderer(ctx: Step) -> None:
    """The pin refuses renderer 'auto' for a model outside the renderers package's map
    (configs/orchestrator.py:597-607): the renderer `compile` would write, with its reason."""
    from whileai.targets.prime_rl import renderer as choice

    where = ctx.at("orchestrator", "renderer")
    if where is None:
        return
    name = ctx.paths.get((*where, "name"), "auto")
    if name != "auto" or any(p[: len(where)] == where and p != (*where, "name") for p in ctx.paths):
        return
    model = next((ctx.paths[p] for p in (ctx.at("orchestrator", "tokenizer", "name"),
                                         ctx.at("orchestrator", "model", "name"), ("model", "name"))
                  if p in ctx.paths), None)
    if not isinstance(model, str) or model in choice.model_map():
        return
    pick = choice.choose(model)
    for key, value in pick.table.items():
        ctx.set((*where, key), value)
    ctx.note("defaulted", "", f"{show((*where, 'name'))} = {pick.name!r}", f"the pin refuses 'auto' "
             f"for a model outside the renderers map; {pick.origin}: {pick.reason}")


def keep(ctx: Step, start: str, plain: dict[str, Any]) -> None:
    """The old behaviour written out where the pin would do otherwise (rl files only)."""
    renderer(ctx)
    if ctx.entry != "rl" or start == chain.pin():
        return
    wb = ("weight_broadcast", "type")
    if start in FILESYSTEM_BROADCAST and "inference" in plain and not any(p[:1] == wb[:1] for p in ctx.paths):
        ctx.set(wb, "filesystem")
        ctx.note("defaulted", "", "weight_broadcast.type = 'filesystem'", f"{start} broadcast "
                 "weights through the filesystem when unset; the pin picks NCCL (configs/rl.py:456)")
    if ("run", "name") not in ctx.paths and ("run", "dir") not in ctx.paths:
        ctx.set(("run", "dir"), ".")
        ctx.note("defaulted", "", "run.dir = '.'", f"{start} wrote into output_dir itself; the pin "
                 "writes into output_dir/<run.name> (prime-rl #3268), so a resume would read a fresh folder")
    for table in (("ckpt",), ("trainer", "ckpt"), ("orchestrator", "ckpt")):
        had = plain.get(table[0]) if len(table) == 1 else (plain.get(table[0]) or {}).get(table[1])
        if isinstance(had, dict) and not any(p[: len(table)] == table for p in ctx.paths):
            import tomlkit

            ctx.set(table, tomlkit.table())
            ctx.emptied.discard(table)
            ctx.note("defaulted", "", f"[{show(table)}] kept", "a [ckpt] table turns checkpointing "
                     "on: it stays although its keys moved")
