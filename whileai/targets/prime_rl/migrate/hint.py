"""What `whileai check` says about a file written for an older prime-rl release."""

from __future__ import annotations

from typing import Any


def old_release_hint(doc: dict[str, Any], entry: str = "rl") -> str | None:
    """'looks written for prime-rl v0.7.0' when an older release's classes know more of the
    file's keys than the pin's do; None otherwise."""
    from whileai.targets.prime_rl.migrate import chain
    from whileai.targets.prime_rl.migrate.core import window
    from whileai.targets.prime_rl.migrate.edit import leaves

    if not chain.keys(chain.pin(), entry):
        return None
    paths = [chain.generic(p) for p in leaves(doc)]
    release, unknown = chain.looks_written_for(paths, entry)
    at_pin = sum(not chain.known(p, chain.pin(), entry) for p in paths)
    if release == chain.pin() or unknown >= at_pin:
        return None
    return f"looks written for prime-rl {' or '.join(window(doc, entry))} (the pin is {chain.pin()})"


def moves(text: str, entry: str = "rl") -> dict[str, str]:
    """old key -> what became of it on the way to the pin ('moved to monitors.wandb in v0.8.0
    -> 559b447'), for each key of an old file that `whileai migrate` moves, converts or drops."""
    from whileai.targets.prime_rl.migrate.core import migrate

    out: dict[str, str] = {}
    for c in migrate(text, entry=entry).changes:
        old = c.old.split(" = ")[0]
        if not old or old in out or c.kind in ("defaulted", "unknown"):
            continue
        what = {"dropped": "dropped", "decision": "needs a decision"}.get(c.kind, f"{c.kind} to {c.new}")
        out[old] = f"{what} in {c.release}"
        table, _, leaf = old.rpartition(".")
        if c.kind == "moved" and table and c.new.endswith("." + leaf):  # its table moved with it
            out.setdefault(table, f"moved to {c.new[: -len(leaf) - 1]} in {c.release}")
    return out
