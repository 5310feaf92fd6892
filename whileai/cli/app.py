"""`whileai` command line: parse, call the core, print. Bad input → one line, exit code 2."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from whileai.cli.fail import err_line as _err
from whileai.cli.fail import fail as _fail
from whileai.cli.fail import quiet_pipe as _stdout
from whileai.errors import SpecError, clean

SETTINGS: dict[str, Any] = dict(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    help="Compile OPD / OPSD / GRPO / SFT method specs into prime-rl and TRL run files.",
)
app = typer.Typer(**SETTINGS)

SpecArg = Annotated[list[Path], typer.Argument(help="Run spec TOML file(s).", show_default=False)]
Backend = Annotated[str, typer.Option("--backend", "-b", help="Target: prime-rl or trl.")]
Sets = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a target key: dotted.key=value, list items as a.b[0].c "
                 "or a.b.0.c (checked). Repeatable."),
]


def _compile_all(specs: list[Path], backend: str, sets: list[str] | None, out: Path | None,
                 force: bool, cpu: bool, strict: bool = False) -> list[Any]:
    from functools import partial

    from whileai.api import compile_all
    from whileai.files.writable import named
    from whileai.spec.load import load_spec, parse_sets

    overrides = parse_sets(sets or [])
    runs = [named(specs, p, partial(load_spec, p, overrides)) for p in specs]  # all valid first
    try:
        return compile_all(runs, backend, names=[p.stem for p in specs], out=out, force=force, cpu=cpu,
                           strict=strict)
    except SpecError:
        if len(specs) > 1:  # which spec: compile each alone (the error path only)
            for p, r in zip(specs, runs, strict=True):
                named(specs, p, partial(compile_all, [r], backend, cpu=cpu, strict=strict))
        raise


@app.command("compile")
def compile_cmd(
    specs: SpecArg,
    backend: Backend = "prime-rl",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="prime-rl: the .toml (or a folder "
                   "for <spec>.toml); trl: the run directory itself; several specs: a folder for "
                   "all. Without it nothing is written.")] = None,
    sets: Sets = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    force: Annotated[bool, typer.Option(help="Overwrite a file whileai did not write, or one "
                     "changed since it did.")] = False,
    check: Annotated[bool, typer.Option(help="Also run the target's own parser (trl).")] = False,
    cpu: Annotated[bool, typer.Option(help="trl: a CPU run (use_cpu, bf16 false).")] = False,
    plain: Annotated[bool | None, typer.Option("--plain/--rich", help="Plain text report "
                     "(the default when stdout is not a terminal) or rich tables.")] = None,
    strict: Annotated[bool, typer.Option(help="Every warning is an error: exit 2 naming the "
                      "first, and nothing is written.")] = False,
) -> None:
    """Compile run spec(s) for a backend and print what the target reads, ignores and warns."""
    try:
        results = _compile_all(specs, backend, sets, out, force, cpu, strict)
    except SpecError as e:
        _fail(e)
    with _stdout():
        if as_json:
            data = [c.to_dict() for c in results]
            print(json.dumps(data[0] if len(data) == 1 else data, indent=1))
        elif plain or (plain is None and not sys.stdout.isatty()):
            from whileai.report.compiled import render_text
            from whileai.report.wrap import width

            print("\n\n".join(render_text(c, width()) for c in results))
        else:
            from whileai.report.render import print_report

            for c in results:
                print_report(c)
        if check:
            _check_target(backend, results)


def _check_target(backend: str, results: list[Any]) -> None:
    if backend == "prime-rl":
        print("checked: every file (each stage of a two-stage run) passed the pinned prime-rl "
              "catalogue and loader rules")
        return
    from whileai.targets.trl import check as trl_check

    for c in [s for r in results for s in (r.stages or (r,))]:  # a two-stage run: each stage
        if c.out is None:
            _fail(SpecError("--check", True, "a written run directory: pass -o DIR"))
        try:
            problems = trl_check.check_dir(Path(c.out).parent)
        except SpecError as e:
            _fail(e)
        if problems:
            for p in problems:
                _err(f"error: {p}")
            raise typer.Exit(2)
        print(f"checked: {Path(c.out).parent} parses with TRL's own parser (no unknown keys)")


@app.command()
def explain(specs: SpecArg, backend: Backend = "prime-rl", sets: Sets = None) -> None:
    """Each key of the compiled file and what produced it."""
    try:
        results = _compile_all(specs, backend, sets, None, False, False)
    except SpecError as e:
        _fail(e)
    from whileai.report.render import print_explain

    with _stdout():
        for c in results:
            print_explain(c)


ENTRY_POINTS = ("rl", "sft", "evals", "inference", "orchestrator", "trainer", "env-server")


@app.command()
def check(
    configs: Annotated[list[Path], typer.Argument(help="prime-rl TOML file(s) written by hand.",
                                                  show_default=False)],
    entry: Annotated[str, typer.Option(help="The entry point the files are for: auto (the first "
                     f"that accepts, as prime-rl's own test does) or one of {', '.join(ENTRY_POINTS)}.")]
    = "auto",
) -> None:
    """Check prime-rl TOMLs against the pinned schema, loader rules and known renames."""
    from whileai.spec.load import loads_toml, read_text
    from whileai.targets.prime_rl.check import check_document, detect, looks_like_spec, notes, taskset_typos

    if entry != "auto" and entry not in ENTRY_POINTS:
        _fail(SpecError("--entry", entry, f"auto or one of {', '.join(ENTRY_POINTS)}"))
    failed = False
    with _stdout():
        for config in configs:
            try:
                doc = loads_toml(read_text(config, "config", 8 << 20, "TOML file"), where=str(config))
            except SpecError as e:
                _err(f"error: {e}")
                failed = True
                continue
            if looks_like_spec(doc):
                spec = SpecError("config", str(config), "a prime-rl TOML; this is a whileai spec",
                                 hint=f"compile it: whileai compile {config}")
                _err(f"error: {spec}")
                failed = True
                continue
            try:
                kind, problems = detect(doc) if entry == "auto" else (entry, check_document(doc, entry=entry))
            except SpecError as e:  # a loader rule that crashed (RuleCrash): one line, never skipped
                _err(f"error: {config}: {e}")
                failed = True
                continue
            problems = [*problems, *taskset_typos(doc, kind)]
            for note in notes(doc, kind):
                print(clean(f"warning: {config}: {note}"))
            how = f"uv run {kind} @ {config}"
            for p in problems:
                _err(f"error: {config}: {p}")
            if problems:
                guess = " (the likeliest entry point: none accepts it; --entry to choose)" \
                    if entry == "auto" else ""
                from whileai.targets.prime_rl.migrate.hint import old_release_hint

                if (old := old_release_hint(doc, kind)) is not None:
                    guess = f"; it {old}: run `whileai migrate {config}`"
                _err(f"error: {config} is not a valid prime-rl {kind} config{guess}")
                failed = True
                continue
            print(clean(f"ok: {config} is a prime-rl {kind} config ({how}) that passes the pinned "
                        "schema and loader rules"))
    if failed:
        raise typer.Exit(2)


@app.command()
def methods() -> None:
    """The methods, their fields, defaults and where each default comes from."""
    from whileai.report.render import print_methods

    with _stdout():
        print_methods()


@app.command()
def rules() -> None:
    """The research warning rules, their conditions and sources."""
    from whileai.report.render import print_rules

    with _stdout():
        print_rules()


@app.command("inspect")
def inspect_cmd(
    spec: Annotated[Path | None, typer.Argument(help="An OPD, OPSD or SFT run spec (or --run).",
                    show_default=False)] = None,
    local_student: Annotated[str | None, typer.Option(help="Student as a local model: a folder or a "
                             "model id in the local Hugging Face cache (offline).")] = None,
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
    tiny: Annotated[bool, typer.Option("--tiny", help="Offline: tiny local student and teacher "
                    "models (whileai.launch.tiny), built once and cached; a pipeline check.")] = False,
) -> None:
    """Score a spec's student samples under student and teacher, or (--run) read a prime-rl run's
    token exports: HTML page, JSON, summary."""
    from whileai.report.render import console

    try:
        if run is not None or spec is None:
            from whileai.tokenview.runapp import run_cli

            run_cli(spec, run, steps=steps, tokenizer=tokenizer, out=out, force=force,
                    show_step=show_step, console=console())
            return
        from whileai.tokenview.app import run_inspect
        from whileai.tokenview.run import Options

        if split not in ("train", "holdout"):
            raise SpecError("--split", split, "train or holdout")
        if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", device):
            raise SpecError("--device", device, "auto, cpu, mps, cuda or cuda:N")
        flags: dict[str, Any] = dict(local_student=local_student, student_endpoint=student_endpoint,
                     local_teacher=local_teacher, teacher_endpoint_text=teacher_endpoint)
        if tiny:
            from whileai.tokenview.tiny_models import tiny_flags

            flags = tiny_flags(spec, flags, lambda line: _err(line))
        run_inspect(spec, opts=Options(prompts, samples, max_tokens, top_k, seed, split), out=out,
                    force=force, device=device, timeout=timeout, console=console(),
                    student_key_env=student_api_key_env, **flags)
    except SpecError as e:
        _fail(e)


@app.command()
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

app.command("arms")(arms_cmd)

from whileai.preflight.command import preflight_cmd  # noqa: E402  (its own package: probes the run)

app.command("preflight")(preflight_cmd)
from whileai.cli.migrate import migrate_cmd  # noqa: E402  (whileai migrate)

app.command("migrate")(migrate_cmd)
from whileai.cli.rehearse import rehearse_cmd  # noqa: E402  (whileai rehearse: a CPU run of prime-rl's launcher)

app.command("rehearse")(rehearse_cmd)


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
    """Compile OPD / OPSD / GRPO / SFT method specs into prime-rl and TRL run files."""


if __name__ == "__main__":
    main()
