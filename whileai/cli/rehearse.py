"""`whileai rehearse SPEC|RUN.toml [--steps 2] [--timeout S] [--keep DIR]`, and
`whileai rehearse --setup DIR [SPEC]` (with a SPEC: its tasksets import too): prime-rl's own
launcher for N steps on a CPU (docs/rehearse.md).
Exit 0: ok; 1: the rehearsal failed (its cause quoted); 2: bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from whileai.errors import SpecError, clean, missing_argument


def rehearse_cmd(
    config: Annotated[
        Path | None, typer.Argument(help="A run spec, or a prime-rl TOML.", show_default=False)
    ] = None,
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
            help="The prime-rl environment: its python, venv or checkout (default: $WHILEAI_REHEARSE_PYTHON)."
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
            help="A prime-rl TOML: a teacher's run line "
            "(`inference --vllm.model M --server.port P`). Repeatable."
        ),
    ] = None,
    setup: Annotated[
        Path | None,
        typer.Option(
            help="Prepare and check the prime-rl environment "
            "in DIR (a checkout after `uv sync`, or its venv), then exit."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Run prime-rl's own launcher, orchestrator and env servers for a few steps on the CPU.

    Inference servers and the trainer are stand-ins; the verdict: the run starts, or its first
    failure, quoted from prime-rl's log."""
    from whileai.cli.fail import fail

    try:
        if setup is not None:
            from whileai.rehearse.env import held_day, taskset_modules
            from whileai.rehearse.env import setup as do_setup

            texts = [s.text for s in _stages(config, serve, sets)] if config else []
            need = taskset_modules(texts) if config else None
            found, ok = do_setup(setup, python_flag=python, tasksets=need, held=held_day(texts))
            print("\n".join(clean(x) for x in found))
            raise typer.Exit(0 if ok else 1)
        if config is None:
            raise missing_argument("CONFIG", "a run spec or a prime-rl TOML (or --setup DIR)")
        from whileai.rehearse.env import find_python
        from whileai.rehearse.report import lines
        from whileai.rehearse.run import rehearse

        stages = _stages(config, serve, sets)
        result = rehearse(
            stages,
            python=find_python(python),
            steps=steps,
            timeout=timeout,
            keep=keep,
            say=lambda x: None if as_json else print(clean(x), flush=True),
        )
    except SpecError as e:
        fail(e)
    except KeyboardInterrupt as e:  # whileai.rehearse.supervise.Interrupted names the folder left
        line = getattr(e, "line", lambda: "interrupted: every process the rehearsal started was stopped")
        print(clean(line()), file=sys.stderr)
        raise typer.Exit(130) from None
    print(json.dumps(result.to_dict(), indent=1) if as_json else "\n".join(_fit(lines(result))))
    raise typer.Exit(0 if result.ok else 1)


def _stages(config: Path, serve: list[str] | None, sets: list[str] | None) -> list:  # type: ignore[type-arg]
    from whileai.rehearse.inputs import from_compiled, from_toml
    from whileai.spec.load import load_spec, loads_toml, parse_sets, read_text
    from whileai.targets.prime_rl.check import looks_like_spec

    text = read_text(config, "config", 8 << 20, "TOML file")
    if looks_like_spec(loads_toml(text, where=str(config))):
        if serve:
            raise SpecError("--serve", serve[0], "nothing with a spec (its teachers' run lines are compiled)")
        from whileai.api import compile_all

        run = load_spec(config, parse_sets(sets or []))
        return from_compiled(compile_all([run], "prime-rl", names=[config.stem])[0])
    if sets:
        raise SpecError("--set", sets[0], "nothing with a prime-rl TOML (edit the file)")
    return from_toml(text, config.stem, serve)


def _fit(lines: list[str]) -> list[str]:
    """Each verdict line cleaned and wrapped to the width (the terminal's, else 100), its
    continuation indented under it: one item a line, readable in a log."""
    from whileai.report.wrap import para, width

    out: list[str] = []
    for line in lines:
        text = clean(line)
        lead = text[: len(text) - len(text.lstrip())]
        out += para(text.lstrip(), width(), lead, lead + "    ")
    return out
