"""`whileai` command line: parse, call the core, print. Bad input → one line, exit code 2."""

from __future__ import annotations

import json
import re
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from whileai.cli.commands import HOT
from whileai.cli.fail import err_line as _err
from whileai.cli.fail import fail as _fail
from whileai.cli.fail import quiet_pipe as _stdout
from whileai.cli.helptext import HelpCommand
from whileai.cli.params import typer_command
from whileai.errors import SpecError
from whileai.targets import registry


def _listed(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


HELP = {"help_option_names": ["-h", "--help"]}  # -h as in every other command-line tool
SETTINGS: dict[str, Any] = dict(
    # shell completion: typer's --install-completion / --show-completion (docs/guide.md, The CLI)
    context_settings=HELP, add_completion=True, no_args_is_help=True, rich_markup_mode=None,
    pretty_exceptions_enable=False,
    # the targets are named from the registry: a target added there is named here with no edit
    help=f"Compile OPD / OPSD / GRPO / SFT method specs into {_listed(registry.names())} run files.",
)
app = typer.Typer(**SETTINGS)
# plain, readable help (whileai.cli.helptext), -h as well as --help
command = partial(app.command, cls=HelpCommand, context_settings=HELP)

for _name, (_params, _body) in HOT.items():  # compile, explain, check: whileai.cli.params
    command(_name)(typer_command(_params, _body))


@command()
def methods() -> None:
    """The methods, their fields, defaults and where each default comes from."""
    from whileai.report.render import print_methods

    with _stdout():
        print_methods()


@command()
def rules() -> None:
    """The research warning rules, their conditions and sources."""
    from whileai.report.render import print_rules
    from whileai.targets import registry

    with _stdout():
        print_rules(registry.rules())


@command("inspect")
def inspect_cmd(
    spec: Annotated[Path | None, typer.Argument(help="An OPD, OPSD or SFT run spec (or --run).",
                    show_default=False)] = None,
    local_student: Annotated[str | None, typer.Option(help="Student as a local model: a folder or a "
                             "model id in the local Hugging Face cache (offline). With --run and "
                             "--local-teacher: a checkpoint for the full-vocabulary KL.")] = None,
    local_teacher: Annotated[str | None, typer.Option(help="Teacher as a local model (OPD, SFT).")] = None,
    student_endpoint: Annotated[str | None, typer.Option(help="Student's OpenAI-compatible server: "
                                "URL serving the spec's model, or vllm:<model>@<url>.")] = None,
    teacher_endpoint: Annotated[str | None, typer.Option(help="Teacher's server (default: the "
                                "spec's teacher endpoint).")] = None,
    student_api_key_env: Annotated[str, typer.Option(help="Env var holding the student server's "
                                   "API key (the name only).")] = "VLLM_API_KEY",
    prompts: Annotated[int, typer.Option(min=1, help="Prompts drawn from the task data.")] = 8,
    samples: Annotated[int, typer.Option(min=1, help="Completions per prompt.")] = 1,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Cap on completion tokens "
                          "(default: the spec's, at most 256).")] = None,
    top_k: Annotated[int, typer.Option(min=1, max=20, help="Teacher alternatives kept per token.")] = 5,
    seed: Annotated[int | None, typer.Option(help="Seed of prompt choice and sampling (default: "
                    "the spec's seed).")] = None,
    split: Annotated[str, typer.Option(help="train or holdout.")] = "train",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder (default: "
                   "inspect-<spec name>).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite files whileai did not write.")] = False,
    device: Annotated[str, typer.Option(help="Local models: auto, cpu, mps, cuda or cuda:N.")] = "auto",
    timeout: Annotated[float, typer.Option(help="Seconds per endpoint request.")] = 120.0,
    run: Annotated[Path | None, typer.Option("--run", help="Instead of a spec: a prime-rl run folder "
                   "(output_dir / run.name) with token exports ([inspect] token_export = true).")] = None,
    steps: Annotated[str | None, typer.Option(help="With --run: steps A:B:S (first, last, stride).")] = None,
    tokenizer: Annotated[str | None, typer.Option(help="With --run: decode tokens with this local "
                         "tokenizer (folder or cached model id; ids otherwise).")] = None,
    show_step: Annotated[int | None, typer.Option(help="With --run: the step whose sequences are "
                         "shown (default: the last read).")] = None,
    own_teacher: Annotated[bool, typer.Option("--teacher", help="With --run: score the run's samples "
                           "against the run's own teacher (its configs/orchestrator.json).")] = False,
    pick: Annotated[str | None, typer.Option(help="With --run and a teacher: which samples of each "
                    "step to score: surprise (largest student surprise; the default), advantage "
                    "(lowest) or all.")] = None,
    per_step: Annotated[int | None, typer.Option(help="With --run and a teacher: samples scored per "
                        "step (--pick surprise or advantage; default 8).")] = None,
    teacher_api_key_env: Annotated[str, typer.Option(help="With --run: env var holding the teacher "
                                   "server's API key (the name only).")] = "VLLM_API_KEY",
    tiny: Annotated[bool, typer.Option("--tiny", help="Offline: tiny local student and teacher "
                    "models (whileai.vocab.tiny), built once and cached; a pipeline check.")] = False,
) -> None:
    """Score a spec's samples under student and teacher, or (--run) read a run's token exports.

    Writes an HTML page and JSON, and prints a summary."""
    from whileai.report.render import console

    try:
        if run is not None or spec is None:
            from whileai.tokenview.runapp import NothingFinished, TeacherFlags, run_cli

            teacher = TeacherFlags(teacher_endpoint, local_teacher, own_teacher, teacher_api_key_env,
                                   pick, per_step, top_k, timeout, device, local_student)
            try:
                run_cli(spec, run, steps=steps, tokenizer=tokenizer, out=out, force=force,
                        show_step=show_step, console=console(), teacher=teacher)
            except NothingFinished as e:  # a run folder with nothing finished: say what, exit 1
                _err(f"error: {e}")
                raise SystemExit(1) from None
            return
        from whileai.tokenview.app import run_inspect
        from whileai.tokenview.run import InspectOptions

        if split not in ("train", "holdout"):
            raise SpecError("--split", split, "train or holdout")
        if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", device):
            raise SpecError("--device", device, "auto, cpu, mps, cuda or cuda:N")
        flags: dict[str, Any] = dict(local_student=local_student, student_endpoint=student_endpoint,
                     local_teacher=local_teacher, teacher_endpoint_text=teacher_endpoint)
        if tiny:
            from whileai.tokenview.app import precheck
            from whileai.tokenview.tiny_models import tiny_flags

            precheck(spec, split=split, out=out)  # every refusal that needs no model, before they are built
            flags = tiny_flags(spec, flags, lambda line: _err(line))
        run_inspect(spec, opts=InspectOptions(prompts, samples, max_tokens, top_k, seed, split), out=out,
                    force=force, device=device, timeout=timeout, console=console(),
                    student_key_env=student_api_key_env, **flags)
    except SpecError as e:
        _fail(e)
    except KeyboardInterrupt:
        _err("interrupted: whileai inspect stopped; nothing more was written")
        raise SystemExit(130) from None


@command()
def schema(
    which: Annotated[str, typer.Argument(help="spec, report, results, inspect or inspect-run.")] = "spec",
) -> None:
    """Print a JSON Schema: run spec files, the --json report, results.json or inspect's JSON."""
    from whileai.cli.schemas import SCHEMAS, generate

    if which not in SCHEMAS:
        _fail(SpecError("schema", which, f"one of {', '.join(SCHEMAS)}"))
    with _stdout():
        print(json.dumps(generate(which), indent=2))


from whileai.cli.arms import arms_cmd  # noqa: E402  (its own module: plans paired arms)

command("arms")(arms_cmd)

from whileai.cli.preflight import preflight_cmd  # noqa: E402  (whileai preflight: probes the run)

command("preflight")(preflight_cmd)
from whileai.cli.migrate import migrate_cmd  # noqa: E402  (whileai migrate)

command("migrate")(migrate_cmd)
from whileai.cli.rehearse import rehearse_cmd  # noqa: E402  (whileai rehearse: a CPU run of prime-rl's launcher)

command("rehearse")(rehearse_cmd)


def main() -> None:
    """Console entry. Typer builds every command's parameters before it dispatches (a few ms
    each), so when argv names a command, a group holding just that command is run."""
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    chosen = [c for c in app.registered_commands if (c.name or c.callback.__name__) == wanted]  # type: ignore[union-attr]
    if not chosen:
        app(prog_name="whileai")
        return
    lean = typer.Typer(**SETTINGS)
    lean.registered_commands = chosen
    lean.callback()(_group)
    lean(prog_name="whileai")


def _version(shown: bool) -> None:
    if shown:
        from whileai.version import __version__

        pins = ", ".join(registry.get(n).pin for n in registry.names())
        print(f"whileai {__version__} (targets: {pins})")
        raise typer.Exit()


def _group(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Compile OPD / OPSD / GRPO / SFT method specs into the run files of training frameworks."""


app.callback()(_group)


if __name__ == "__main__":
    main()
