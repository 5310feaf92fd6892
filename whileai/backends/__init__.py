"""One module per target; each exposes a pure `compile(run, ...) -> Compiled`."""
