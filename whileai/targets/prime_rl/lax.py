"""Where prime-rl's loader is more lenient than a schema reads: `check` agrees with it both ways.

- Booleans: pydantic's lax mode (prime-rl's config classes are not strict) accepts `"yes"`,
  `"on"`, `"t"`, `1` ... for a bool. `check` accepts them too, with a note naming the value
  the loader will read.
- `[inference.vllm]` (vLLM's engine arguments) takes any extra key, so a typo such as
  `gpu_memory_utilisation` passes the loader while the real key keeps its default: accepted,
  with a warning and a did-you-mean, in `check` and in a report's `--set` row.
"""

from __future__ import annotations

from typing import Any

from whileai.catalogs.targets import Catalog, Problem, lax_bool  # noqa: F401  (lax_bool: the loader's lax booleans)
from whileai.errors import close_matches
from whileai.targets.prime_rl.catalog import catalog


def _vllm_tables(doc: dict[str, Any], entry: str) -> list[tuple[str, Any]]:
    if entry == "inference":
        return [("vllm", doc.get("vllm"))]
    inference = doc.get("inference")
    return [("inference.vllm", inference.get("vllm"))] if isinstance(inference, dict) else []


def vllm_fields(cat: Catalog | None = None) -> list[str]:
    return list((cat or catalog()).defs.get("VllmConfig", {}).get("properties", {}))


def extra_key_hint(key: str, known: list[str]) -> str | None:
    """A vLLM key prime-rl does not know and that is close to one it does: the did-you-mean."""
    if key in known:
        return None
    near = close_matches(key, known, n=1, cutoff=0.8)
    return near[0] if near else None


def extra_key_message(table: str, key: str, near: str) -> str:
    return (f"not a field prime-rl knows: the loader passes it to vLLM as is, and {table}.{near} "
            f"is left as it was; did you mean {near!r}?")


def vllm_typos(doc: dict[str, Any], entry: str = "rl") -> list[Problem]:
    """A key of [inference.vllm] close to one of its fields: accepted, but likely a typo."""
    known = vllm_fields()
    out = []
    for where, table in _vllm_tables(doc, entry):
        for key in table if isinstance(table, dict) else {}:
            near = extra_key_hint(key, known)
            if near:
                out.append(Problem(f"{where}.{key}", extra_key_message(where, key, near)))
    return out


def override_note(path: str) -> str | None:
    """The note for a `--set inference.vllm.<typo>=...` row of a report, or None."""
    for table in ("inference.vllm.", "vllm."):
        if path.startswith(table) and "." not in path[len(table):]:
            near = extra_key_hint(path[len(table):], vllm_fields())
            if near:
                return extra_key_message(table[:-1], path[len(table):], near)
    return None


