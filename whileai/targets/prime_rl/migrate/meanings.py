"""Meanings kept by writing the old behaviour out (`whileai migrate`): where the pin's default
or the meaning of a key differs from what the old release did with the same file, the old
behaviour is written explicitly and named (`defaulted` / `kept`); unknown keys of the old file
are named with a did-you-mean against that release's keys and aliases."""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

from whileai.targets.prime_rl.migrate import chain
from whileai.targets.prime_rl.migrate.edit import show
from whileai.targets.prime_rl.migrate.transforms import Step

Path_ = chain.Path_
# releases that broadcast weights through the filesystem when [weight_broadcast] was unset
# (v0.6.0 configs/rl.py:220); from v0.7.0 on, as at the pin (configs/rl.py:456-460), NCCL is
# picked whenever an [inference] server runs and no LoRA is trained
FILESYSTEM_BROADCAST = ("v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0")


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
        if name != gen and path in ctx.paths and chain.known(name, release, ctx.entry):
            new = target(path, gen, name)
            ctx.set(new, ctx.drop(path))
            fold = chain.fold_of(gen, release, ctx.entry)
            why = (f"accepted at {release} through a before-validator as {name}: {fold['why']}; "
                   f"{fold['at']}") if fold else \
                f"an alias of {name} at {release}, renamed to the field's own name"
            ctx.note("moved", show(path), show(new), why)


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


def gpu_ids(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    """v0.4.0's `inference_gpu_ids = [0]` became v0.5.0's `deployment.num_infer_gpus = 1`: the
    launcher hands out GPUs by count; ids shared by two roles have no count to become."""
    ids = ctx.drop(path)
    others = [v for p, v in ctx.paths.items() if len(p) == 1 and str(p[0]).endswith("_gpu_ids")]
    shared = isinstance(ids, list) and any(set(ids) & set(o) for o in others if isinstance(o, list))
    if not isinstance(ids, list) or shared:
        ctx.note("decision", f"{show(path)} = {ids!r}", "", "GPUs are counted per role since v0.5.0 "
                 f"and these ids are shared with another role; choose {rule['new']}")
        return
    new = tuple(rule["new"].split("."))
    ctx.set(new, len(ids))
    ctx.note("converted", f"{show(path)} = {ids!r}", f"{rule['new']} = {len(ids)}", rule["why"])


def oversampling(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    """v0.8.0's oversampling_factor set the fixed in-flight cap (batch_size x factor); the pin's
    cap is adaptive: `keep` writes the fixed cap as min_inflight = max_inflight."""
    value = ctx.drop(path)
    ctx.note("converted", f"{show(path)} = {value!r}", "orchestrator.concurrency.min_inflight = "
             "max_inflight (the fixed cap it gave)", rule["why"])


def env_ratios(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    """v0.5.0's buffer.env_ratios list became each environment's own ratio (v0.6.0)."""
    ratios = ctx.drop(path)
    head = tuple(rule["new"].split("[]")[0].split("."))
    for i, ratio in enumerate(ratios if isinstance(ratios, list) else []):
        ctx.set((*head, i, "ratio"), ratio)
    ctx.note("converted", f"{show(path)} = {ratios!r}", f"{rule['new']}.ratio (one per environment)",
             rule["why"])


def into_table(ctx: Step, path: Path_, rule: dict[str, Any]) -> None:
    """A free-form table whose keys became another table's own (inference.vllm_extra.X ->
    inference.vllm.X): each key is moved, so the keys already there stay."""
    from whileai.targets.prime_rl.migrate.transforms import target

    value = ctx.drop(path)
    base = target(path, rule["old"], rule["new"])
    for key, item in (value.items() if isinstance(value, dict) else []):
        ctx.set((*base, key), item)
        ctx.note("moved", show((*path, key)), show((*base, key)), rule["why"])


TRANSFORMS = {"gpu-ids": gpu_ids, "oversampling": oversampling, "env-ratios": env_ratios,
              "into-table": into_table}
PROPORTIONAL = ("v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0")  # no ratio: sampled across all problems


def proportional(ctx: Step, start: str) -> None:
    """Up to v0.6.0 environments without ratios were sampled across all their problems, in
    proportion to their rows (v0.6.0 configs/orchestrator.py:199); the pin weighs each source
    1.0 (:132). The rows are the datasets', unknown offline: the ratios need a decision."""
    if start not in PROPORTIONAL:
        return
    head = ctx.at("orchestrator", "train", "source")
    if head is None:
        return
    n = len(head)
    sources = {p[: n + 1] for p in ctx.paths if p[:n] == head and len(p) > n}
    if len(sources) > 1 and not any(p[:n] == head and p[n + 1:] == ("ratio",) for p in ctx.paths):
        ctx.note("decision", show(head), "", f"{start} sampled its {len(sources)} environments in "
                 "proportion to their rows; the pin weighs each source 1.0: write each source's ratio "
                 "(its row count) to keep that")
FIXED_CAP = ("v0.5.0", "v0.6.0", "v0.7.0", "v0.8.0")  # a fixed in-flight cap, batch_size by default


def fixed_cap(ctx: Step, start: str, plain: dict[str, Any]) -> None:
    """The in-flight cap was fixed (max_inflight_rollouts/episodes, else batch_size x
    oversampling_factor, at least the group size); at the pin it is only an adaptive ceiling
    (configs/orchestrator.py:431-435), so the cap becomes min_inflight = max_inflight."""
    orch = plain.get("orchestrator") if isinstance(plain.get("orchestrator"), dict) else None
    if start not in FIXED_CAP or orch is None:
        return
    lo, hi = ("orchestrator", "concurrency", "min_inflight"), ("orchestrator", "concurrency", "max_inflight")
    if lo in ctx.paths:
        return
    cap = ctx.paths.get(hi)
    if cap is None and "token_batch_size" not in orch:
        batch = orch.get("batch_size", 128)
        group = ctx.paths.get(("orchestrator", "group_size"), 1)
        factor = orch.get("oversampling_factor", 1.0)
        if not all(isinstance(v, (int, float)) for v in (batch, group, factor)):
            return
        cap = max(int(group), int(batch * factor))
        ctx.set(hi, cap)
    if not isinstance(cap, int):
        return
    ctx.set(lo, cap)
    ctx.note("defaulted", "", f"orchestrator.concurrency.min_inflight = max_inflight = {cap}", f"{start} "
             "kept a fixed number of episodes in flight; the pin adapts it below max_inflight")


def tasksets(ctx: Step) -> None:
    """A source's taskset must be one the pin has (its catalogue, or a prime-envs member it
    could not load offline): an old environment id is never guessed into a taskset."""
    from whileai.catalogs import tasksets as catalogue
    from whileai.targets.prime_rl.migrate.transforms import _sources, at_pin

    names = [*catalogue.data()["tasksets"], *catalogue.data().get("not_loadable", {})]
    for src in _sources(ctx):
        where = (*src, "env", "taskset", "id")
        tid = ctx.paths.get(where)
        if isinstance(tid, str) and not at_pin(tid):
            near = difflib.get_close_matches(tid.split("/")[-1].split("@")[0], names, n=3, cutoff=0.4)
            ctx.note("decision", f"{show(where)} = {tid!r}", "", f"{tid!r} is no taskset of the pin's "
                     f"catalogue; nearest: {', '.join(near) or 'none'}")


def _unless(also: tuple[str, ...], rule: tuple[str, ...]) -> str:
    """', not what a v0.7.0 file did: --from v0.7.0 if it is one' where the other releases that
    know every key of the file behaved otherwise."""
    other = [r for r in also if r not in rule and r != chain.pin()]
    return f" (not what a {other[0]} file did: --from {other[0]} if it is one)" if other else ""


def keep(ctx: Step, start: str, plain: dict[str, Any], also: tuple[str, ...] = ()) -> None:
    """The old behaviour written out where the pin would do otherwise (rl files only). `also`:
    the other releases that know every key of the file (their behaviour is named where it differs)."""
    renderer(ctx)
    tasksets(ctx)
    before = len(ctx.changes)
    proportional(ctx, start)
    _mark(ctx, before, _unless(also, PROPORTIONAL))
    if ctx.entry != "rl" or start == chain.pin():
        return
    before = len(ctx.changes)
    fixed_cap(ctx, start, plain)
    _mark(ctx, before, _unless(also, FIXED_CAP))
    wb = ("weight_broadcast", "type")
    if start in FILESYSTEM_BROADCAST and "inference" in plain and not any(p[:1] == wb[:1] for p in ctx.paths):
        ctx.set(wb, "filesystem")
        ctx.note("defaulted", "", "weight_broadcast.type = 'filesystem'", f"{start} broadcast "
                 "weights through the filesystem when unset; the pin picks NCCL (configs/rl.py:456)"
                 + _unless(also, FILESYSTEM_BROADCAST))
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


def _mark(ctx: Step, since: int, extra: str) -> None:
    """Append `extra` to the reason of the changes noted since `since`."""
    if extra:
        ctx.changes[since:] = [dataclasses.replace(c, why=c.why + extra) for c in ctx.changes[since:]]
