"""The hot commands' bodies: `whileai compile`, `explain` and `check`. Their parameters are
described in whileai.cli.params; whileai.cli.app registers them with typer, and whileai.cli.main
runs them straight from plain input, so nothing here imports typer (or rich, unless the report
is printed as rich tables)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.cli.fail import err_line as _err
from whileai.cli.fail import fail as _fail
from whileai.cli.fail import quiet_pipe as _stdout
from whileai.cli.params import CHECK, COMPILE, ENTRY_POINTS, EXPLAIN, Param
from whileai.errors import SpecError, clean
from whileai.report.wrap import fit


def _compile_all(specs: list[Path], target: str, sets: list[str] | None, out: Path | None,
                 force: bool, cpu: bool, strict: bool = False,
                 check: Callable[[list[Any]], None] | None = None) -> list[Any]:
    from functools import partial

    from whileai.api import compile_all
    from whileai.files.names import spec_name
    from whileai.files.writable import named
    from whileai.spec.load import load_spec, parse_sets

    overrides = parse_sets(sets or [])
    runs = [named(specs, p, partial(load_spec, p, overrides)) for p in specs]  # all valid first
    stems = [spec_name(p, r) for p, r in zip(specs, runs, strict=True)]
    try:
        return compile_all(runs, target, names=stems, out=out, force=force, cpu=cpu,
                           strict=strict, check=check)
    except SpecError:
        if len(specs) > 1:  # which spec: compile each alone (the error path only)
            for p, r in zip(specs, runs, strict=True):
                named(specs, p, partial(compile_all, [r], target, cpu=cpu))
            if strict:  # a warning: each spec's own, among the others (whileai.rules.accept)
                from whileai.rules.honoured import strict as refuse_warnings

                together = compile_all(runs, target, names=stems, cpu=cpu)
                for p, c in zip(specs, together, strict=True):
                    named(specs, p, partial(refuse_warnings, [c]))
        raise


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported when first called (rich only where a table is printed)."""
    def call(*args: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(*args)

    return call


def _show(results: list[Any], as_json: bool, plain: bool | None, to_dict: Callable[[Any], Any],
          to_text: Callable[[Any, int], str], to_rich: Callable[[Any], None]) -> None:
    """Each result as JSON, as plain text (the default when stdout is not a terminal: a pipe, a
    log) at the terminal's width, or through rich."""
    if as_json:
        import json

        data = [to_dict(c) for c in results]
        print(json.dumps(data[0] if len(data) == 1 else data, indent=1))
    elif plain or (plain is None and not sys.stdout.isatty()):
        from whileai.report.wrap import width

        print("\n\n".join(to_text(c, width()) for c in results))
    else:
        for c in results:
            to_rich(c)


class _Refused(Exception):
    """The target's own check refused a written file: the write is taken back (files.atomic)."""


def compile_cmd(specs: list[Path], target: str, out: Path | None, sets: list[str] | None,
                as_json: bool, force: bool, check: bool, cpu: bool, plain: bool | None,
                strict: bool) -> None:
    """Compile run spec(s) for a target and print what it reads, ignores and warns."""
    if check:
        _can_check(target)
    verdicts: list[tuple[bool, str]] = []
    written: list[Any] = []

    def judge(results: list[Any]) -> None:
        """--check -o: the target's check of the files in place; a refusal takes them back."""
        from whileai.targets import registry

        written[:] = results
        verdicts[:] = registry.get(target).verify(results)  # a SpecError takes the write back too
        if not all(passed for passed, _ in verdicts):
            raise _Refused

    refused = False
    try:
        results = _compile_all(specs, target, sets, out, force, cpu, strict,
                               judge if check and out is not None else None)
    except SpecError as e:
        _fail(e)
    except _Refused:
        results, refused = written, True
    except KeyboardInterrupt:
        if not written:
            raise
        _err(_unchecked(written))  # the files stay, named as unchecked
        raise SystemExit(130) from None
    with _stdout():
        _show(results, as_json, plain, lambda c: c.to_dict(), _lazy("whileai.report.text", "render_text"),
              _lazy("whileai.report.render", "print_report"))
        if check:
            try:  # with -o the check ran on the written files (judge); without, it runs here
                _report_check(verdicts if out is not None else _verdicts(target, results), refused)
            except KeyboardInterrupt:  # no -o: the line says nothing was written
                _err(_unchecked(results))
                raise SystemExit(130) from None


def _unchecked(results: list[Any]) -> str:
    """Ctrl-C during --check: the line that names each file written and not checked."""
    written = list(dict.fromkeys(p for c in results for p in (c.out, *(s.out for s in c.stages)) if p))
    if not written:
        return "interrupted: whileai compile stopped during --check; nothing was written"
    return (f"interrupted: whileai compile stopped during --check; written and not checked: "
            f"{', '.join(written)} (compile again with --check to check them)")


def _can_check(target: str) -> None:
    """--check whose checker cannot run here (TRL not installed): one line, nothing written."""
    from whileai.targets import registry

    try:
        found = registry.get(target)
    except SpecError as e:
        _fail(e)
    try:
        found.verify([])
    except SpecError as e:
        _fail(SpecError(e.field, e.value, e.allowed, hint="nothing was written; drop --check to "
                        "write the files unchecked"))


def _verdicts(target: str, results: list[Any]) -> list[tuple[bool, str]]:
    """The target's own check of what was compiled: (passed, line) each."""
    from whileai.targets import registry

    try:
        return registry.get(target).verify(results)
    except SpecError as e:
        _fail(e)


def _report_check(verdicts: list[tuple[bool, str]], refused: bool) -> None:
    """Each verdict a line; a refusal ends with exit 2 (its files taken back when written)."""
    for passed, line in verdicts:
        if passed:
            print("\n".join(fit([line])))
        else:
            _err(f"error: {line}")
    if not all(passed for passed, _ in verdicts):  # refused: the write was taken back
        if refused:
            _err("nothing was written: the target's own check refused it (compile without --check "
                 "to write the files unchecked)")
        raise SystemExit(2)


def explain(specs: list[Path], target: str, sets: list[str] | None, as_json: bool,
            plain: bool | None) -> None:
    """Each key of the compiled file and what produced it."""
    try:
        results = _compile_all(specs, target, sets, None, False, False)
    except SpecError as e:
        _fail(e)
    with _stdout():
        explained = "whileai.report.explain"
        _show(results, as_json, plain, _lazy(explained, "explain_dict"), _lazy(explained, "explain_text"),
              _lazy("whileai.report.render", "print_explain"))


def check(configs: list[Path], entry: str) -> None:
    """Check files written by hand: each goes to the target that claims it (a prime-rl TOML
    against the pinned schema, loader rules and known renames; a TRL run directory through
    TRL's own parser; a verl run.sh, or its run folder, through verl 0.9.1's own config check,
    in a Python with verl)."""
    from whileai.targets import registry

    if entry != "auto" and entry not in ENTRY_POINTS:
        _fail(SpecError("--entry", entry, f"auto or one of {', '.join(ENTRY_POINTS)}"))
    failed = False
    with _stdout():
        for config in configs:
            # the target that claims it; else the first (the default -b), whose reader says why not
            claimed = [registry.get(n) for n in registry.names() if registry.get(n).claims(config)]
            target = claimed[0] if claimed else registry.get(registry.names()[0])
            for level, line in target.check(config, entry):
                if level == "error":
                    _err(f"error: {line}")
                    failed = True
                else:
                    print("\n".join(fit([clean(f"{level}: {line}")])))
    if failed:
        raise SystemExit(2)


# command name → (its parameters, its body): what whileai.cli.app registers and main runs lean
HOT: dict[str, tuple[tuple[Param, ...], Any]] = {
    "compile": (COMPILE, compile_cmd), "explain": (EXPLAIN, explain), "check": (CHECK, check),
}
