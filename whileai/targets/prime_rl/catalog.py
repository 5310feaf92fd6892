"""prime-rl's pinned catalogue: the JSON Schema of its config classes at the pinned commit
(`schemas/prime-rl-<commit>.catalog.json`), read once, checked by the shared
`whileai.catalogs.targets.Catalog` in pydantic's lax mode for booleans (prime-rl's config classes
are not strict).

    catalog().lookup("orchestrator.batch_size")   # the schema nodes of a dotted key
"""

from __future__ import annotations

from whileai.catalogs.targets import Catalog, pinned


def catalog() -> Catalog:
    """prime-rl's catalogue at the pinned commit (cached: one read per process)."""
    return pinned("prime-rl", lax_bools=True)


__all__ = ["catalog"]
