"""The rename chain and key catalogues of prime-rl's releases (schemas/prime-rl-renames.json,
schemas/prime-rl-<release>.keys.json, both generated from the real classes; see
scripts/gen_prime_rl_history.py and gen_prime_rl_renames.py), and which release a file looks
written for."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from whileai.catalogs.targets import schemas_dir

Path_ = tuple[str | int, ...]


@functools.cache
def renames() -> dict[str, Any]:
    return json.loads((schemas_dir() / "prime-rl-renames.json").read_text())


def releases() -> list[str]:
    return list(renames()["releases"])


def pin() -> str:
    return str(renames()["pin"])


@functools.cache
def keys(release: str, entry: str = "rl") -> dict[str, dict[str, Any]]:
    data = json.loads((schemas_dir() / f"prime-rl-{release}.keys.json").read_text())
    return dict(data["entries"].get(entry, {}))


def generic(path: Path_) -> str:
    """('orchestrator', 'train', 'env', 0, 'id') -> 'orchestrator.train.env[].id'."""
    out = ""
    for seg in path:
        out += "[]" if isinstance(seg, int) else ("." if out else "") + seg
    return out


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + ".") or path.startswith(root + "[]")


# tables whose keys a taskset/harness plugin or the renderers package defines
OPEN = re.compile(r"(\]\.env|\]\.taskset|\]\.harness|\.renderer)$")


@functools.cache
def canonical(path: str, release: str, entry: str = "rl", folds: bool = True) -> str:
    """The field name a release's classes give a key spelled with one of its aliases
    (`orchestrator.rollouts_per_example` -> `orchestrator.group_size` at v0.6.0; a table's
    alias renames its keys: `orchestrator.model.name` -> `orchestrator.student.name`), or with
    a spelling a before-validator of the release re-nests (`folded`: then
    `orchestrator.student.model.name`)."""
    cat, fold = keys(release, entry), folded(release, entry) if folds else {}
    for cut in _prefixes(path):
        target = cat.get(cut, {}).get("alias_of") or fold.get(cut, {}).get("new")
        if target is not None:
            return canonical(target + path[len(cut):], release, entry, folds)
    return path


@functools.cache
def folded(release: str, entry: str = "rl") -> dict[str, dict[str, Any]]:
    """The keys a release accepted through a before-validator rather than a field alias
    (`orchestrator.client` -> `orchestrator.student.client` at v0.6.0), old -> its rule."""
    return {f["old"]: f for f in renames().get("folded", [])
            if f["release"] == release and f["entry"] == entry}


def fold_of(path: str, release: str, entry: str = "rl") -> dict[str, Any] | None:
    """The before-validator rule that spells `path` (or the key its alias names) anew, if any."""
    cat, folds = keys(release, entry), folded(release, entry)
    for cut in _prefixes(path):
        if cut in folds:
            return folds[cut]
        target = cat.get(cut, {}).get("alias_of")
        if target is not None:
            return fold_of(target + path[len(cut):], release, entry)
    return None


@functools.cache
def known(path: str, release: str, entry: str = "rl", folds: bool = True) -> bool:
    """Whether a release's classes accept this key, by its name or an alias (a key inside a
    free-form dict, or inside a source's env, taskset or harness, whose fields the plugin
    defines, counts as known); `folds`: or by a spelling a before-validator re-nests (not for
    telling which release a file is for: the fields and aliases alone say that)."""
    cat = keys(release, entry)
    if path in cat:
        return True
    path = canonical(path, release, entry, folds)
    if path in cat:
        return True
    probe = path
    while True:
        cut = re.sub(r"(\[\])?\.[^.\[\]]+$|\[\]$", "", probe)
        if cut == probe or not cut:
            return False
        probe = cut
        kind = cat.get(probe, {}).get("kind", "")
        if probe in cat and ("dict" in kind or "any" in kind or OPEN.search(probe)):
            return True


def steps(start: str, entry: str = "rl") -> list[dict[str, Any]]:
    order = releases()
    begin = order.index(start)
    return [s for s in renames()["steps"] if s["entry"] == entry and order.index(s["from"]) >= begin]


def looks_written_for(paths: list[str], entry: str = "rl") -> tuple[str, int]:
    """The release whose classes know most of these keys (the newest on a tie), and how many
    keys it does not know."""
    best: tuple[int, int, str] | None = None
    for i, rel in enumerate(releases()):
        if not keys(rel, entry):
            continue
        unknown = sum(not known(p, rel, entry, folds=False) for p in paths)
        score = (unknown, -i, rel)
        best = score if best is None or score < best else best
    assert best is not None
    return best[2], best[0]


def rule_for(path: str, step: dict[str, Any]) -> dict[str, Any] | None:
    """The rule of the step for the longest prefix of `path` it names."""
    index = step.get("_index")
    if index is None:
        index = step["_index"] = {r["old"]: r for r in step["rules"]}
    for cut in _prefixes(path):
        if cut in index:
            return dict(index[cut])
    return None


@functools.cache
def _prefixes(path: str) -> tuple[str, ...]:
    ends = [m.start() for m in re.finditer(r"\.|\[\]", path)] + [len(path)]
    cuts = [path[:e] for e in ends] + [path[: e + 2] for e in ends if path[e:e + 2] == "[]"]
    return tuple(sorted(set(cuts), key=len, reverse=True))
