"""`whileai migrate`: carry a prime-rl config written for an older release to the pin (core.py:
`migrate`, `detect`, `entry_of`, `ENTRIES`).

The package imports nothing: `whileai`'s CLI registers the command (cli/migrate.py) without
loading tomlkit or the catalogues."""
