"""`whileai rehearse SPEC|RUN.toml [-t TARGET] [--steps 2] [--timeout S] [--keep DIR]`, and
`whileai rehearse --setup DIR [SPEC]` (with a SPEC: its tasksets import too): the target's own
launcher for N steps on a CPU, through its `rehearsal` hook (whileai.targets.hooks; prime-rl's:
targets/prime_rl/rehearse/, docs/rehearse.md). A target without one: one line, exit 2.
Exit 0: ok; 1: the rehearsal failed (its cause quoted); 2: bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from whileai.cli.params import TARGET
from whileai.errors import SpecError, clean, missing_argument, raw

if TYPE_CHECKING:
    from collections.abc import Callable

    from whileai.targets.compiled import Compiled
    from whileai.targets.hooks import Rehearsal


def rehearse_cmd(
    config: Annotated[
        Path | None, typer.Argument(help="A run spec, or a config file the target reads.", show_default=False)
    ] = None,
    target: Annotated[str, typer.Option(*TARGET.flags, help=TARGET.help)] = TARGET.default,
    steps: Annotated[int, typer.Option(help="Steps to run (at least 1).")] = 2,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds the whole rehearsal may take; every process it started is stopped by then."
        ),
    ] = 900.0,
    keep: Annotated[
        Path | None,
        typer.Option(
            help="Keep the rehearsal's folder here (logs, the "
            "offline copy); default: a temporary folder, removed when it passes."
        ),
    ] = None,
    python: Annotated[
        str | None,
        typer.Option(
            help="The target's environment: its python, venv or checkout (default: prime-rl "
            "$WHILEAI_REHEARSE_PYTHON, verl $WHILEAI_VERL_PYTHON or this Python when it has verl)."
        ),
    ] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="A spec: override a target key "
            "before compiling, as `whileai compile --set` does. Repeatable.",
        ),
    ] = None,
    serve: Annotated[
        list[str] | None,
        typer.Option(
            help="A target's own config file (prime-rl: a TOML): a teacher's run line "
            "(`inference --vllm.model M --server.port P`). Repeatable."
        ),
    ] = None,
    setup: Annotated[
        Path | None,
        typer.Option(
            help="Prepare and check the target's environment "
            "in DIR (prime-rl: a checkout after `uv sync`, or its venv; verl: its venv), then exit."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Run the target's own code for a few steps on the CPU (prime-rl: its launcher,
    orchestrator and env servers; verl: its resource pools, datasets, reward and loss).

    What needs a GPU stands in; the verdict: the run starts, or its first failure, quoted from
    the target's own log or message."""
    from whileai.cli.fail import fail

    try:
        rehearsal = rehearsal_of(target)
        if setup is not None:
            stages = rehearsal.read(config, serve=serve, sets=sets, compile=_compiler(target, config, sets)) \
                if config else None
            found, ok = rehearsal.setup(setup, python=python, stages=stages)
            print("\n".join(clean(x) for x in found))
            raise typer.Exit(0 if ok else 1)
        if config is None:
            raise missing_argument("CONFIG", "a run spec or the target's own file (or --setup DIR)")
        stages = rehearsal.read(config, serve=serve, sets=sets, compile=_compiler(target, config, sets))
        result = rehearsal.rehearse(
            stages,
            python=python,
            steps=steps,
            timeout=timeout,
            keep=keep,
            say=lambda x: None if as_json else print(clean(x), flush=True),
        )
    except SpecError as e:
        fail(e)
    except KeyboardInterrupt as e:  # whileai.rehearse.supervise.RehearsalInterrupted names the folder left
        line = getattr(e, "line", lambda: "interrupted: every process the rehearsal started was stopped")
        print(clean(line()), file=sys.stderr)
        raise typer.Exit(130) from None
    print(json.dumps(result.to_dict(), indent=1) if as_json else "\n".join(_fit(rehearsal.lines(result))))
    raise typer.Exit(0 if result.ok else 1)


def rehearsal_of(name: str) -> Rehearsal:
    """The target's rehearsal hook; a target without one is refused in one line (exit 2)."""
    from whileai.targets import registry

    t = registry.get(name)
    if t.rehearsal is None:
        can = [n for n in registry.names() if registry.get(n).rehearsal is not None]
        raise SpecError("--target", raw(f"{t.name} is not rehearsable"),
                        f"a rehearsal runs a target's own launcher on the CPU; rehearsable: {', '.join(can)}")
    return t.rehearsal


def _compiler(target: str, config: Path, sets: list[str] | None) -> Callable[[], Compiled]:
    """The spec at `config` compiled for the target, its --set applied (as `whileai compile` does)."""

    def compiled() -> Compiled:
        from whileai.api import compile_all
        from whileai.files.names import spec_name
        from whileai.spec.load import load_spec, parse_sets

        run = load_spec(config, parse_sets(sets or []))
        return compile_all([run], target, names=[spec_name(config, run)])[0]

    return compiled


def _fit(lines: list[str]) -> list[str]:
    """Each verdict line cleaned and wrapped to the width (the terminal's, else 100), its
    continuation indented under it: one item a line, readable in a log."""
    from whileai.report.wrap import fit

    return fit(clean(line) for line in lines)
