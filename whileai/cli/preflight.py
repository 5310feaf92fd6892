"""`whileai preflight SPEC` (registered in whileai.cli.app; the probing is whileai.preflight): one
line per check, exit 1 when a check fails, 0 otherwise, 2 for bad input (one line, no traceback)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from whileai.cli.params import TARGET
from whileai.errors import SpecError, clean


def preflight_cmd(
    spec: Annotated[Path, typer.Argument(help="A run spec TOML file.", show_default=False)],
    target: Annotated[str, typer.Option(*TARGET.flags, help=TARGET.help)] = TARGET.default,
    student_endpoint: Annotated[str | None, typer.Option(help="The student's inference server, "
                                "probed too: a URL serving the spec's model, or vllm:<model>@<url>.")] = None,
    student_api_key_env: Annotated[str, typer.Option(help="Env var holding the student server's "
                                   "API key (the name only).")] = "VLLM_API_KEY",
    timeout: Annotated[float, typer.Option(help="Seconds the whole preflight may take (every "
                       "request ends by then).")] = 10.0,
    checkout: Annotated[Path | None, typer.Option("--checkout", "--prime-rl", help="The framework's own "
                        "checkout, for a target whose runs start from one: checked against the "
                        "pinned commit.")] = None,
    elsewhere: Annotated[bool, typer.Option("--elsewhere", help="This machine only submits the run "
                         "(a laptop, a login node): its GPUs are not checked, its disk is, and "
                         "each line says so. Without it a one-node run needs its GPUs here.")] = False,
    cpu: Annotated[bool, typer.Option(help="A CPU run, for a target that trains on one (no GPU "
                                      "needed; memory is RAM).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Probe the servers, models and machine facts a spec's run touches, before it launches."""
    from whileai.files.names import spec_name
    from whileai.preflight.run import preflight
    from whileai.report.wrap import width
    from whileai.spec.load import load_spec

    try:
        run = load_spec(spec)
        report = preflight(run, target=target, spec=str(spec), student_endpoint=student_endpoint,
                           student_key_env=student_api_key_env, timeout=timeout,
                           checkout=str(checkout) if checkout is not None else None, cpu=cpu,
                           name=spec_name(spec), where="elsewhere" if elsewhere else "here")
    except SpecError as e:
        print(clean(f"error: {e}"), file=sys.stderr)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        print("interrupted: whileai preflight stopped before its checks finished; nothing was written",
              file=sys.stderr)
        raise typer.Exit(130) from None
    try:
        lines = report.text(width())  # under the check's name, past its status; commands whole
        print(json.dumps(report.to_dict(), indent=1) if as_json else "\n".join(lines))
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    raise typer.Exit(report.exit_code)


__all__ = ["preflight_cmd"]
