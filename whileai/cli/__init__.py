"""Faces: the `whileai` command line and the recipes' shared command line.

- `app`: the typer app and every command (each parses, calls one function, prints);
- `arms`: `whileai arms`; `recipe`: the recipes' arguments, plans and progress;
- `schemas`: the JSON schemas `whileai schema` prints; `fail`: one line, exit 2.

May import everything below it. The entry point stays `whileai.cli:main`.
"""


def main() -> None:
    """The `whileai` console script."""
    from whileai.cli.app import main as run

    run()
