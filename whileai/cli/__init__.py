"""Faces: the `whileai` command line and the recipes' shared command line.

- `app`: the typer app and every command (each parses, calls one function, prints);
- `commands`: the hot commands' bodies (compile, explain, check), `params`: their parameters,
  described once for typer and for the lean reader `main` runs them with;
- `arms`: `whileai arms`; `recipe`: the recipes' arguments, plans and progress;
- `schemas`: the JSON schemas `whileai schema` prints; `fail`: one line, exit 2.

May import everything below it. The entry point stays `whileai.cli:main`.
"""

import sys


def main() -> None:
    """The `whileai` console script. A hot command given plain input runs without typer (whose
    import and parse cost more than a compile); help, errors and anything unusual go to typer."""
    from whileai.cli.commands import HOT
    from whileai.cli.params import parse

    words = sys.argv[1:]
    if words and words[0] in HOT:
        params, body = HOT[words[0]]
        kwargs = parse(params, words[1:])
        if kwargs is not None:
            try:
                body(**kwargs)
            except KeyboardInterrupt:
                raise SystemExit(130) from None  # as typer ends on Ctrl-C
            return
    from whileai.cli.app import main as run

    run()
