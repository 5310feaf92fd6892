"""`whileai migrate`: carry a prime-rl config written for an older release to the pin, key by key.

`migrate(text)` detects the release the file looks written for (or takes `release`), walks the
rename chain (chain.py: data generated from the real classes) one release at a time and edits
the document in place with tomlkit, so comments and key order survive where the key survives.
Every changed key is a `Change`: moved (old -> new, with the release and why), converted (the
value was reshaped), dropped (the feature was removed), defaulted (the pin's default would
change what the file did, so the old behaviour is written out) or decision (no mechanical
equivalent). Pure: no file is read or written here (see cli.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tomlkit

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from whileai.targets.prime_rl.migrate import chain, meanings, reshape, transforms
from whileai.targets.prime_rl.migrate.edit import get, leaves, prune, show, spaced, supers
from whileai.targets.prime_rl.migrate.transforms import Change

TRANSFORMS = transforms.TRANSFORMS | reshape.TRANSFORMS | meanings.TRANSFORMS


@dataclass
class Migration:
    release: str  # the release the file looks written for (or was said to be)
    detected: bool
    text: str
    changes: list[Change] = field(default_factory=list)
    entry: str = "rl"  # the entry point the file is for (said, or detected from its keys)
    also: tuple[str, ...] = ()  # other releases that know every key as well (detected only)
    kept: list[str] = field(default_factory=list)  # the old file's keys that stay as they are

    @property
    def decisions(self) -> list[Change]:
        """What stops the file being written: decisions, drops and unknown keys."""
        return [c for c in self.changes if c.kind in ("decision", "dropped", "unknown")]


def detect(doc: Any, entry: str = "rl") -> tuple[str, int]:
    """The release a parsed document looks written for, and its keys that release lacks."""
    return chain.looks_written_for([chain.generic(p) for p in leaves(doc)], entry)


def window(doc: Any, entry: str = "rl") -> tuple[str, ...]:
    """Every release whose classes know as many of the document's keys as the best one, oldest
    first: a file whose keys v0.6.0 and v0.7.0 both know could be written for either."""
    paths = [chain.generic(p) for p in leaves(doc)]
    counts = {r: sum(not chain.known(p, r, entry, folds=False) for p in paths) for r in chain.releases()
              if chain.keys(r, entry)}
    best = min(counts.values())
    return tuple(r for r, n in counts.items() if n == best)


ENTRIES = ("rl", "sft", "inference", "orchestrator", "trainer")


def entry_of(doc: Any) -> str:
    """The entry point a parsed document is for: the one whose classes, at the release that
    knows most of its keys, know most of them (rl on a tie)."""
    paths = [chain.generic(p) for p in leaves(doc)]
    return min(ENTRIES, key=lambda e: (chain.looks_written_for(paths, e)[1], ENTRIES.index(e)))


def migrate(text: str, release: str | None = None, entry: str | None = "rl") -> Migration:
    """`entry` None: detected from the keys (entry_of)."""
    plain = tomllib.loads(text)  # the keys are listed from this (tomlkit's lookups are slow)
    doc = tomlkit.parse(text)
    detected = release is None
    entry = entry or entry_of(plain)
    tie = window(plain, entry) if release is None else (release,)
    start = tie[0]  # the oldest that fits: its behaviour is the one written out
    result = Migration(start, detected, text, entry=entry, also=tie[1:])
    emptied: set[chain.Path_] = set()
    created: list[Any] = []
    paths = {p: get(plain, p) for p in leaves(plain)}
    for key, hint in meanings.unknown(list(paths), start, entry):
        result.changes.append(Change("unknown", key, "", start, f"not a key of prime-rl {start}{hint}"))
    original = set(paths)
    ctx = transforms.Step(doc, start, start, emptied, result.changes, paths=paths, entry=entry)
    meanings.rename_aliases(ctx, start)
    if start == chain.pin():  # keys all known; values the pin spells differently still change
        ctx = transforms.Step(doc, f"{chain.releases()[-2]} -> {start}", start, emptied, result.changes,
                              paths=paths, entry=entry)
        transforms.pin_values(ctx)
        reshape.pin_values(ctx)
    for step in chain.steps(start, entry):
        label = f"{step['from']} -> {step['to']}"
        ctx = transforms.Step(doc, label, step["to"], emptied, result.changes, paths=paths, entry=entry)
        for path in list(paths):
            if path not in paths:
                continue
            rule = chain.rule_for(chain.generic(path), step)
            if rule is not None:
                apply(ctx, path, rule)
        ctx.finish()
        if step["to"] == chain.pin():
            reshape.pin_values(ctx)
        created += ctx.created
    ctx = transforms.Step(doc, f"{start} -> {chain.pin()}", chain.pin(), emptied, result.changes,
                          paths=paths, entry=entry)
    meanings.keep(ctx, start, plain, result.also)
    created += ctx.created
    prune(doc, emptied)
    supers(created)
    result.text = spaced(tomlkit.dumps(doc), text)  # the file's blank lines between tables kept
    result.changes = one_line_each(result.changes)
    named = {c.old.split(" = ")[0] for c in result.changes}
    result.kept = [show(p) for p in original if show(p) not in named and p in paths]
    return result


def one_line_each(changes: list[Change]) -> list[Change]:
    """A key carried through several releases is one Change: old key -> the keys it ends as (or
    its final outcome, dropped or needing a decision), each step's reason in order. The docs
    promise one line a key; `orchestrator.client.x` at v0.6.0 read as three moves. A drop or a
    decision of one part of a key that also moved elsewhere stays a line of its own (it stops
    the file being written, and must say so)."""
    out: list[Change] = []
    roots: list[list[str]] = []  # per change: every key it has written (a later step may move one)
    finals: list[list[str]] = []  # per change: the keys it ends as, as said
    steps: list[list[str]] = []  # per change: each step's reason
    for c in changes:
        carried = c.kind in ("moved", "converted")
        i = None if c.kind == "defaulted" else next(
            (j for j in range(len(out) - 1, -1, -1) if any(_under(c.old, n) for n in roots[j])), None)
        if i is not None and not carried and finals[i] != [c.old]:
            i = None  # a part of a key dropped or undecided while the rest moved: its own line
        if i is None:
            out.append(c)
            roots.append([c.new] if carried and c.new else [])
            finals.append(list(roots[-1]))
            steps.append([f"[{c.release}] {c.why}"])
            continue
        first = out[i]
        finals[i] = [n for n in finals[i] if not _under(c.old, n)] + ([c.new] if carried and c.new else [])
        roots[i] += [c.new] if carried and c.new else []
        if not any(f"[{c.release}]" in x and x.endswith(f": {c.why}") for x in steps[i]):  # once a reason
            steps[i].append(f"then [{c.release}] as {c.old}: {c.why}")
        kind = c.kind if not carried else "converted" if "converted" in (first.kind, c.kind) else "moved"
        span = f"{first.release.split(' -> ')[0]} -> {c.release.split(' -> ')[-1]}"
        out[i] = Change(kind, first.old, ", ".join(finals[i]), span, "; ".join(steps[i]))
    return out


def _under(key: str, root: str) -> bool:
    return key == root or key.startswith((root + ".", root + "["))


def apply(ctx: transforms.Step, path: chain.Path_, rule: dict[str, Any]) -> None:
    old = show(path)
    kind = rule["kind"]
    if rule.get("at"):  # the source line of the release that declares (or last declared) it
        rule = dict(rule, why=f"{rule['why']}; {rule['at']}")
    if kind == "dropped":
        ctx.drop(path)
        ctx.note("dropped", old, "", rule["why"])
    elif kind == "decision":
        ctx.note("decision", old, "", f"{rule['why']}; choose {rule.get('choices', 'by hand')}")
        ctx.drop(path)
    elif kind == "converted":
        TRANSFORMS[rule["transform"]](ctx, path, rule)
    else:
        new = transforms.target(path, rule["old"], rule["new"])
        value = ctx.drop(path)
        ctx.set(new, value)
        ctx.note("moved", old, show(new), rule["why"])


__all__ = ["ENTRIES", "Change", "Migration", "detect", "entry_of", "migrate"]
