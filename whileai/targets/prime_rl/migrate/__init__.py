"""`whileai migrate`: carry a prime-rl config written for an older release to the pin (core.py:
`migrate`, `detect`, `entry_of`, `ENTRIES`); `hook.py` is the target's `migration` hook, which
`whileai migrate` (cli/migrate.py) calls through the registry.

The package imports nothing: prime-rl's `target` module imports the hook without loading
tomlkit or the catalogues."""
