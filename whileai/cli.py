"""`whileai` command line: parse, call the core, print. Bad input → one line, exit code 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from whileai.errors import SpecError

SETTINGS: dict[str, Any] = dict(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    help="Compile OPD / OPSD / GRPO method specs into prime-rl and TRL run files.",
)
app = typer.Typer(**SETTINGS)

SpecArg = Annotated[list[Path], typer.Argument(help="Run spec TOML file(s).", show_default=False)]
Backend = Annotated[str, typer.Option("--backend", "-b", help="Target: prime-rl or trl.")]
Sets = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a target key: dotted.key=value (checked). Repeatable."),
]


def _fail(err: SpecError) -> None:
    print(f"error: {err}", file=sys.stderr)
    raise typer.Exit(2)


def _compile_all(specs: list[Path], backend: str, sets: list[str] | None, out: Path | None,
                 force: bool, cpu: bool) -> list[Any]:
    from whileai.api import compile
    from whileai.backends.overrides import parse_assignment
    from whileai.files import load_spec

    overrides = dict(parse_assignment(s) for s in sets or [])
    runs = [(p, load_spec(p, overrides)) for p in specs]  # all specs valid before any write
    if out is not None and len(specs) > 1 and out.exists() and not out.is_dir():
        raise SpecError("out", str(out), "a directory when compiling several specs")
    results = []
    for path, run in runs:
        target = out
        if out is not None and (len(specs) > 1 or out.is_dir()):
            target = out / (f"{path.stem}.toml" if backend == "prime-rl" else path.stem)
        if target is None and backend == "prime-rl":
            from whileai.backends import prime_rl

            results.append(prime_rl.compile(run, name=f"{path.stem}.toml"))
            continue
        results.append(compile(run, backend, out=target, force=force, cpu=cpu))
    return results


@app.command("compile")
def compile_cmd(
    specs: SpecArg,
    backend: Backend = "prime-rl",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output file or directory; "
                   "without it nothing is written.")] = None,
    sets: Sets = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    force: Annotated[bool, typer.Option(help="Overwrite a file whileai did not write.")] = False,
    check: Annotated[bool, typer.Option(help="Also run the target's own parser (trl).")] = False,
    cpu: Annotated[bool, typer.Option(help="trl: a CPU run (use_cpu, bf16 false).")] = False,
    plain: Annotated[bool | None, typer.Option("--plain/--rich", help="Plain text report "
                     "(the default when stdout is not a terminal) or rich tables.")] = None,
) -> None:
    """Compile run spec(s) for a backend and print what the target reads, ignores and warns."""
    try:
        results = _compile_all(specs, backend, sets, out, force, cpu)
    except SpecError as e:
        _fail(e)
    if as_json:
        data = [c.to_dict() for c in results]
        print(json.dumps(data[0] if len(data) == 1 else data, indent=1))
    elif plain or (plain is None and not sys.stdout.isatty()):
        print("\n\n".join(str(c) for c in results))
    else:
        from whileai.render import print_report

        for c in results:
            print_report(c)
    if check:
        _check_target(backend, results)


def _check_target(backend: str, results: list[Any]) -> None:
    if backend == "prime-rl":
        print("checked: every file passed the pinned prime-rl catalogue and loader rules")
        return
    from whileai.backends import trl_check

    for c in results:
        if c.out is None:
            _fail(SpecError("--check", True, "a written run directory: pass -o DIR"))
        try:
            problems = trl_check.check_dir(Path(c.out).parent)
        except SpecError as e:
            _fail(e)
        if problems:
            for p in problems:
                print(f"error: {p}", file=sys.stderr)
            raise typer.Exit(2)
        print(f"checked: {Path(c.out).parent} parses with TRL's own parser (no unknown keys)")


@app.command()
def explain(specs: SpecArg, backend: Backend = "prime-rl", sets: Sets = None) -> None:
    """Each key of the compiled file and what produced it."""
    try:
        results = _compile_all(specs, backend, sets, None, False, False)
    except SpecError as e:
        _fail(e)
    from whileai.render import print_explain

    for c in results:
        print_explain(c)


@app.command()
def check(config: Annotated[Path, typer.Argument(help="A prime-rl TOML written by hand.")]) -> None:
    """Check a prime-rl TOML against the pinned schema, loader rules and known renames."""
    from whileai.backends.prime_rl_rules import check_document, looks_like_spec, runtime_notes
    from whileai.files import loads_toml

    try:
        text = config.read_text(encoding="utf-8")
    except OSError as e:
        _fail(SpecError("config", str(config), "a readable TOML file", hint=e.strerror or ""))
    try:
        doc = loads_toml(text, where=str(config))
    except SpecError as e:
        _fail(e)
    if looks_like_spec(doc):
        _fail(SpecError("config", str(config), "a prime-rl TOML; this is a whileai spec",
                        hint=f"compile it: whileai compile {config}"))
    problems = check_document(doc)
    for note in runtime_notes(doc):
        print(f"warning: {note}")
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    if problems:
        raise typer.Exit(2)
    print(f"ok: {config} passes prime-rl's pinned schema and loader rules")


@app.command()
def methods() -> None:
    """The methods, their fields, defaults and where each default comes from."""
    from whileai.render import print_methods

    print_methods()


@app.command()
def rules() -> None:
    """The research warning rules, their conditions and sources."""
    from whileai.render import print_rules

    print_rules()


@app.command()
def schema(
    which: Annotated[str, typer.Argument(help="spec, report or results.")] = "spec",
) -> None:
    """Print a JSON Schema: run spec files, the --json report, or results.json."""
    from whileai.schemas import SCHEMAS, generate

    if which not in SCHEMAS:
        _fail(SpecError("schema", which, f"one of {', '.join(SCHEMAS)}"))
    print(json.dumps(generate(which), indent=2))


from whileai.cli_arms import arms_cmd  # noqa: E402  (its own module: plans paired arms)

app.command("arms")(arms_cmd)


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


def _group() -> None:
    """Compile OPD / OPSD / GRPO method specs into prime-rl and TRL run files."""


if __name__ == "__main__":
    main()
