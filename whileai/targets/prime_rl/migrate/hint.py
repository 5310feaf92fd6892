"""What `whileai check` says about a file written for an older prime-rl release."""

from __future__ import annotations

from typing import Any


def old_release_hint(doc: dict[str, Any], entry: str = "rl") -> str | None:
    """'looks written for prime-rl v0.7.0' when an older release's classes know more of the
    file's keys than the pin's do; None otherwise."""
    from whileai.targets.prime_rl.migrate import chain
    from whileai.targets.prime_rl.migrate.edit import leaves

    if not chain.keys(chain.pin(), entry):
        return None
    paths = [chain.generic(p) for p in leaves(doc)]
    release, unknown = chain.looks_written_for(paths, entry)
    at_pin = sum(not chain.known(p, chain.pin(), entry) for p in paths)
    if release == chain.pin() or unknown >= at_pin:
        return None
    return f"looks written for prime-rl {release} (the pin is {chain.pin()})"
