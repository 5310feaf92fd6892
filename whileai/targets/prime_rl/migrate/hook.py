"""prime-rl's migration as the target's `migration` hook (whileai.targets.hooks.Migrator).

Light: prime-rl's `target` module imports it; each method imports the work it does (tomlkit,
the rename chain, the loader mirror), so `whileai compile` loads none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whileai.targets.hooks import MigratedFile, Migrator
    from whileai.targets.prime_rl.migrate.core import Migration


class PrimeRLMigrator:
    """A prime-rl TOML written for an older release (v0.5.0 ... v0.8.0), carried to the pin."""

    @property
    def entries(self) -> tuple[str, ...]:
        from whileai.targets.prime_rl.migrate.core import ENTRIES

        return ENTRIES

    def releases(self) -> list[str]:
        from whileai.targets.prime_rl.migrate import chain

        return chain.releases()

    def release(self, given: str) -> str:
        from whileai.errors import SpecError

        known = self.releases()
        release = given if given.startswith("v") or given in known else f"v{given}"
        release = next((r for r in known if r == release or r.startswith(release + ".")), release)
        if release not in known:
            raise SpecError("--from", release, f"one of {', '.join(known[:-1])}")
        return release

    def migrate(self, path: Path, text: str, release: str | None, entry: str | None) -> Migration:
        from whileai.targets.prime_rl.migrate.core import migrate

        what_it_is(path, text)
        return migrate(text, release, entry)

    def refused(self, migrated: MigratedFile) -> list[str]:
        """What the pin's checks (the loader mirror of `whileai check`) say of the migrated text."""
        import tomllib

        from whileai.targets.prime_rl.check import check_document

        return [str(p) for p in check_document(tomllib.loads(migrated.text), entry=migrated.entry)]


def what_it_is(config: Path, text: str) -> None:
    """SpecError for a file that is not an old prime-rl config: a whileai spec, an empty file, or
    a TOML none of whose keys any prime-rl release knows."""
    import tomllib

    from whileai.errors import SpecError
    from whileai.targets.prime_rl.check import looks_like_spec
    from whileai.targets.prime_rl.migrate import chain
    from whileai.targets.prime_rl.migrate.core import ENTRIES
    from whileai.targets.prime_rl.migrate.edit import leaves

    doc = tomllib.loads(text)
    if looks_like_spec(doc):
        raise SpecError("config", str(config), "a prime-rl config", hint=f"this is a whileai spec: "
                        f"compile it (whileai compile {config})")
    if not doc:
        raise SpecError("config", str(config), "a prime-rl config; this file is empty")
    paths = [chain.generic(p) for p in leaves(doc)]
    if not any(chain.known(p, r, e) for p in paths for r in chain.releases() for e in ENTRIES):
        some = ", ".join(paths[:3]) + (" ..." if len(paths) > 3 else "")
        raise SpecError("config", str(config), f"a prime-rl config; none of its keys ({some}) is "
                        "prime-rl's at any release: the file of another program?")


MIGRATION: Migrator = PrimeRLMigrator()
