"""Faces: the `whileai` command line and the recipes' shared command line.

- `app`: the typer app and every command (each parses, calls one function, prints);
- `commands`: the hot commands' bodies (compile, explain, check), `params`: their parameters,
  described once for typer and for the lean reader `main` runs them with;
- `arms`: `whileai arms`; `recipe`: the recipes' arguments, plans and progress;
- `schemas`: the JSON schemas `whileai schema` prints; `fail`: one line, exit 2;
- `helptext`: every command's help, plain and readable, and a missing argument in one line.

May import everything below it. The entry point stays `whileai.cli:main`.
"""

import gc
import sys


def main() -> None:
    """The `whileai` console script. A hot command given plain input runs without typer (whose
    import and parse cost more than a compile), and as one short run: the cycle collector is
    off (its passes over every module and model built at start-up cost more than they free;
    the memory goes back at exit). Help, errors, anything unusual and every other command go
    to typer, collector on."""
    collecting = gc.isenabled()
    gc.disable()
    from whileai.cli.commands import HOT
    from whileai.cli.params import parse

    words = sys.argv[1:]
    kwargs = parse(HOT[words[0]][0], words[1:]) if words and words[0] in HOT else None
    if kwargs is None:
        if collecting:
            gc.enable()
        from whileai.cli.app import main as run

        run()
        return
    try:
        HOT[words[0]][1](**kwargs)
    except KeyboardInterrupt:  # one line, exit code 130 (the shell's for SIGINT); files go all or none
        print(f"interrupted: whileai {words[0]} stopped", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        gc.freeze()  # what the run made is not walked again at exit either
        if collecting:
            gc.enable()
