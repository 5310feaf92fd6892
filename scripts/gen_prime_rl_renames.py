"""Derive prime-rl's rename chain between consecutive releases: schemas/prime-rl-renames.json.

    python scripts/gen_prime_rl_renames.py           # write it
    python scripts/gen_prime_rl_renames.py --check   # exit 1 if the file on disk differs

Reads the flat key catalogues (schemas/prime-rl-<release>.keys.json, made from the real
classes by gen_prime_rl_history.py) and, per entry point and pair of consecutive releases:

- a key that disappeared and whose name reappears under exactly one new parent is `moved`
  (the classes say so: `inference.gpu_memory_utilization` -> `inference.vllm.gpu_memory_utilization`);
- the renames the classes cannot tell (the name itself changed, a table was reshaped) come from
  scripts/prime_rl_renames.toml, read off the commits that rewrote prime-rl's own configs;
- every other key that disappeared is `dropped` (removed in that release).

Each rule is counted against the history fixture (tests/fixtures/prime-rl/migrate-history.json):
`confirmed` is the number of prime-rl's own files that had the old key at the older release and
the new key at the pin. Pure: no prime-rl import, no network.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_prime_rl_history import write_or_check  # noqa: E402  (the sibling that writes the key catalogues)

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "schemas"
OUT = SCHEMAS / "prime-rl-renames.json"
CURATED = ROOT / "scripts" / "prime_rl_renames.toml"
HISTORY = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-history.json"
GENERIC = {"type", "id", "name", "enabled", "kwargs", "args"}
RELEASES = ("v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0", "v0.7.0", "v0.8.0", "559b447")


def keys(release: str) -> dict[str, dict[str, dict[str, Any]]]:
    return json.loads((SCHEMAS / f"prime-rl-{release}.keys.json").read_text())["entries"]


def parent(path: str) -> str:
    return re.sub(r"(\[\])?(\.[^.\[\]]+|\.\*)$", "", path) if "." in path else ""


def leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1].removesuffix("[]")


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + ".") or path.startswith(root + "[]")


COMPONENTS = {"trainer", "orchestrator", "inference", "teacher_inference"}  # an rl file's processes


def top(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def same_component(old: str, new: str) -> bool:
    """A key moves only inside its own process, and a teacher's key stays a teacher's: the
    teacher server's port is never the student's router port."""
    if top(old) != top(new) and top(old) in COMPONENTS and top(new) in COMPONENTS:
        return False
    return ("teacher" in old) <= ("teacher" in new)


def derive(old: dict[str, Any], new: dict[str, Any], curated: list[dict[str, Any]],
           to: str = "", frm: str = "") -> list[dict[str, Any]]:
    """`to`: the newer release, named in each rule's `at` (the source line that declares the
    key's new field there, or the old field's line at the older release for a drop)."""
    fields = {k for k, v in old.items() if "alias_of" not in v}  # aliases are renamed first (migrate)
    removed = sorted(fields - {k for k, v in new.items() if "alias_of" not in v})
    added = sorted(k for k, v in new.items() if k not in old and "alias_of" not in v)
    rules: list[dict[str, Any]] = [dict(r, origin="curated") for r in curated
                                  if r["old"].removesuffix("[]") in old]
    covered = [r["old"] for r in rules]
    moved: list[str] = []
    for key in sorted(removed, key=lambda k: (-k.count("."), k)):  # leaves before their tables
        if any(under(key, c) for c in covered):
            continue
        if "alias_of" in new.get(key, {}):  # renamed: the old name stays as an alias
            target = new[key]["alias_of"]
            rules.append({"old": key, "new": target, "kind": "moved", "origin": "aliases",
                          "why": f"renamed to {leaf(target)} (the old name is an alias of it at {to})",
                          **_at(new, target, to)})
            moved.append(key)
            continue
        # a key moves only inside its own component: a teacher's server is never the student's
        cands = [a for a in added if leaf(a) == leaf(key) and new[a]["kind"] == old[key]["kind"]
                 and same_component(key, a)]
        if not cands:  # its new place keeps the old name as an alias (sampling.max_tokens)
            cands = [a for a, v in new.items() if a not in old and "alias_of" in v
                     and leaf(a) == leaf(key) and same_component(key, a)]
        if leaf(key) in GENERIC:  # a tag's name says nothing alone: its table must match too
            cands = [a for a in cands if leaf(parent(a)) == leaf(parent(key))]
        if len(cands) > 1:  # the one that keeps most of the old path, then the shallowest
            segs = key.split(".")[:-1]

            def score(a: str, segs: list[str] = segs) -> tuple[int, int]:
                return (sum(s in a.split(".") for s in segs), -a.count("."))

            best = max(map(score, cands))
            cands = [a for a in cands if score(a) == best]
        if len(cands) == 1:
            dest = new[cands[0]].get("alias_of", cands[0])
            rules.append({"old": key, "new": dest, "kind": "moved", "origin": "classes",
                          "why": f"{leaf(key)} moved to {parent(cands[0]) or 'the top level'}"
                          + (f" and was renamed {leaf(dest)}" if dest != cands[0] else ""),
                          **_at(new, dest, to)})
            moved.append(key)
        elif not any(under(m, key) for m in moved):
            rules.append({"old": key, "kind": "dropped", "origin": "classes",
                          "why": f"removed: no key of that name remains at {to}", **_at(old, key, frm)})
    return collapse(rules, old)


def _at(cat: dict[str, Any], key: str, release: str) -> dict[str, str]:
    return {"at": f"{release} {cat[key]['at']}"} if cat.get(key, {}).get("at") else {}


def collapse(rules: list[dict[str, Any]], old: dict[str, Any]) -> list[dict[str, Any]]:
    """A dropped table's keys are one rule; a moved table whose keys all moved alike is one rule."""
    out = []
    dropped = {r["old"] for r in rules if r["kind"] == "dropped"}
    for r in rules:
        if r["kind"] == "dropped" and parent(r["old"]) in dropped:
            continue
        out.append(r)
    return sorted(out, key=lambda r: r["old"])


def flat(node: Any, path: str = "") -> set[str]:
    if isinstance(node, dict):
        return {path} | {k for key, v in node.items() for k in flat(v, f"{path}.{key}" if path else key)}
    if isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        return {path} | {k for x in node for k in flat(x, path + "[]")}
    return {path}


def confirm(steps: list[dict[str, Any]]) -> None:
    pairs = json.loads(HISTORY.read_text()) if HISTORY.exists() else []
    docs = [(p["tag"], flat(tomllib.loads(p["old_toml"])), flat(tomllib.loads(p["pin_toml"]))) for p in pairs]
    for step in steps:
        older = RELEASES[: RELEASES.index(step["from"]) + 1]
        for r in step["rules"]:
            if "new" not in r:
                continue
            r["confirmed"] = sum(1 for tag, old, pin in docs if tag in older and r["old"] in old
                                 and any(under(k, r["new"]) for k in pin))


def sub(rule: dict[str, Any], entry: str) -> dict[str, Any] | None:
    """An rl rule under [<entry>] as the entry point's own file spells it (`inference.parallel.tp`
    -> `parallel.tp` for `uv run inference`); None for a rule elsewhere in the rl file. A
    converted rule keeps its transform, which reads paths relative to the entry's root."""
    head = f"{entry}."
    if not rule["old"].startswith(head) or not rule.get("new", head).startswith(head):
        return None
    out = dict(rule, old=rule["old"][len(head):])
    if "new" in rule:
        out["new"] = rule["new"][len(head):]
    return out


def build() -> dict[str, Any]:
    curated = tomllib.loads(CURATED.read_text())["step"]
    cats = {r: keys(r) for r in RELEASES}
    steps = []
    for a, b in zip(RELEASES, RELEASES[1:], strict=False):
        cur = next((s["rules"] for s in curated if s["from"] == a and s["to"] == b), [])
        for entry in ("rl", "sft", "inference", "orchestrator", "trainer"):
            if entry not in cats[a] or entry not in cats[b]:
                continue
            mine = [r for r in (cur if entry == "rl" else [sub(r, entry) for r in cur])
                    if r is not None and r["old"].split(".")[0] in {k.split(".")[0] for k in cats[a][entry]}]
            steps.append({"from": a, "to": b, "entry": entry,
                          "rules": derive(cats[a][entry], cats[b][entry], mine, b, a)})
    confirm([s for s in steps if s["entry"] == "rl"])
    return {"releases": list(RELEASES), "pin": RELEASES[-1],
            "note": "generated by scripts/gen_prime_rl_renames.py from schemas/prime-rl-*.keys.json "
                    "and scripts/prime_rl_renames.toml", "steps": steps, "folded": folded(cats)}


def folded(cats: dict[str, Any]) -> list[dict[str, Any]]:
    """The keys each release accepted through a before-validator (scripts/prime_rl_renames.toml
    [[folded]]), per entry point as its own file spells them; each new key must be one the
    release's classes declare."""
    out = []
    for group in tomllib.loads(CURATED.read_text()).get("folded", []):
        for entry in ("rl", "sft", "inference", "orchestrator", "trainer"):
            cat = cats[group["release"]].get(entry, {})
            for rule in group["rules"]:
                mine = rule if entry == "rl" else sub(rule, entry)
                if mine is None or not cat:
                    continue
                if mine["new"] not in cat:
                    raise SystemExit(f"[[folded]] {group['release']}: {mine['new']} is not a key of {entry}")
                out.append({"release": group["release"], "entry": entry, "old": mine["old"],
                            "new": mine["new"], "why": group["why"], "at": group["at"]})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    return write_or_check(OUT, json.dumps(build(), indent=1) + "\n", args.check)


if __name__ == "__main__":
    sys.exit(main())
