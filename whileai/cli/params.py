"""The hot commands' parameters, each described once: name, type, flags, help text, default.

typer's commands are declared from these tables (`typer_command`, used by whileai.cli.app), and
so is `parse`, a lean reader of the same parameters that runs `whileai compile`, `explain` and
`check` without importing typer (whileai.cli.main): it takes only plain input (known flags,
their values, the arguments) and answers None for anything else (help, a typo, a missing
value, `--`, a repeated flag), which typer then reads and answers as it always has.

    SPECS = Param("specs", list[Path], (), "Run spec TOML file(s).")   # an argument: no flags
    TARGET = Param("target", str, ("--target", "-t"), "Target: ...", "prime-rl")
"""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, Union, get_args, get_origin

from whileai.targets import registry

REQUIRED = inspect.Parameter.empty


class Param(NamedTuple):
    name: str  # the command function's parameter
    type: Any  # its Python type: list[...] repeats, bool is a flag, Path converts
    flags: tuple[str, ...]  # () for an argument; a bool without flags is --name/--no-name
    help: str
    default: Any = REQUIRED
    argument: bool = False

    def typer_info(self) -> Any:
        import typer

        if self.argument:
            return typer.Argument(help=self.help, show_default=False)
        return typer.Option(*self.flags, help=self.help)

    def switches(self) -> dict[str, Any]:
        """Each flag on the command line → the value it gives (None: the value that follows)."""
        if not _is_bool(self.type):
            return dict.fromkeys(self.flags)
        if not self.flags:
            name = self.name.replace("_", "-")
            return {f"--{name}": True, f"--no-{name}": False}
        out: dict[str, Any] = {}
        for flag in self.flags:
            on, _, off = flag.partition("/")
            out[on] = True
            if off:
                out[off] = False
        return out


def _members(tp: Any) -> tuple[Any, ...]:
    return tuple(a for a in get_args(tp) if a is not type(None)) \
        if get_origin(tp) in (Union, types.UnionType) else (tp,)


def _is_bool(tp: Any) -> bool:
    return _members(tp) == (bool,)


def _item(tp: Any) -> tuple[bool, Callable[[str], Any]]:
    """(repeats, convert one word) for a parameter's type."""
    [tp] = _members(tp)
    many = get_origin(tp) is list
    item = get_args(tp)[0] if many else tp
    return many, (Path if item is Path else str)


def typer_command(params: tuple[Param, ...], body: Callable[..., None]) -> Callable[..., None]:
    """`body` as a typer command: its signature (the typer annotations) built from `params`."""
    from typing import Annotated

    def command(**kwargs: Any) -> None:
        body(**kwargs)

    hints = {p.name: Annotated[p.type, p.typer_info()] for p in params}
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default,
                           annotation=hints[p.name]) for p in params])
    command.__annotations__ = {**hints, "return": None}
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(command, attr, getattr(body, attr))
    return command


def parse(params: tuple[Param, ...], words: list[str]) -> dict[str, Any] | None:
    """The command's keyword arguments from plain input, or None where typer should read it."""
    if os.name == "nt" or "_WHILEAI_COMPLETE" in os.environ:  # wildcard expansion, completion
        return None
    flags = {f: (p, v) for p in params for f, v in p.switches().items()}
    [arg] = [p for p in params if p.argument]
    given: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not _plain(word):
            return None
        if not word.startswith("-"):
            positional.append(word)
            continue
        name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        if name not in flags:
            return None
        p, on = flags[name]
        many, convert = _item(p.type)
        if on is not None:  # a flag: no value
            if eq or p.name in given:
                return None
            given[p.name] = on
            continue
        if not eq:
            if i == len(words):
                return None
            value = words[i]
            i += 1
        if not _plain(value) or value.startswith("-") or (p.name in given and not many):
            return None
        given[p.name] = [*given.get(p.name, []), convert(value)] if many else convert(value)
    many, convert = _item(arg.type)
    if not positional and arg.default is REQUIRED or len(positional) > 1 and not many:
        return None
    if positional:
        given[arg.name] = [convert(w) for w in positional] if many else convert(positional[0])
    return {p.name: given.get(p.name, p.default) for p in params}


def _plain(word: str) -> bool:
    """Neither empty, nor `-` or `--` alone, nor text that is not UTF-8 (typer decides those)."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return word not in ("", "-", "--")


SPECS = Param("specs", list[Path], (), "Run spec TOML file(s).", argument=True)
TARGET = Param("target", str, ("--target", "-t", "--backend", "-b"),
               f"The framework to compile for: {', '.join(registry.names())} (-b/--backend: the "
               "same option, its older name).", registry.names()[0])
SETS = Param("sets", list[str] | None, ("--set",), "Override a target key: dotted.key=value, "
             "list items as a.b[0].c or a.b.0.c (checked). Repeatable.", None)
COMPILE = (
    SPECS,
    TARGET,
    Param("out", Path | None, ("--out", "-o"), "A one-file target: the file (or a folder for "
          "<spec> and the target's suffix); a run-directory target: the directory itself; several "
          "specs: a folder for all. Without it nothing is written.", None),
    SETS,
    JSON := Param("as_json", bool, ("--json",), "Print the report as JSON.", False),
    Param("force", bool, (), "Overwrite a file whileai did not write, or one changed since it "
          "did.", False),
    Param("check", bool, (), "Also run the target's own check of what was compiled (its parser or "
          "loader); a refusal exits 2.", False),
    Param("cpu", bool, (), "A CPU run, where the target can train on a CPU (the "
          "others refuse it, naming the ones that can).", False),
    PLAIN := Param("plain", bool | None, ("--plain/--rich",), "Plain text report (the default when "
                   "stdout is not a terminal) or rich tables.", None),
    Param("strict", bool, (), "Every warning is an error: exit 2 naming the first, and nothing is "
          "written.", False),
)
EXPLAIN = (SPECS, TARGET, SETS, JSON._replace(help="Print the keys as JSON."),
           PLAIN._replace(help="One key a line, `key = value  (what produced it)`: the default when "
                          "stdout is not a terminal; or rich tables."))

ENTRY_POINTS = ("rl", "sft", "evals", "inference", "orchestrator", "trainer", "env-server")
CHECK = (
    Param("configs", list[Path], (), "Files written by hand: prime-rl TOMLs, TRL run directories, "
          "verl run.sh files (or their run folders).", argument=True),
    Param("entry", str, ("--entry",), "prime-rl: the entry point the files are for: auto (the first that "
          f"accepts, as prime-rl's own test does) or one of {', '.join(ENTRY_POINTS)}.", "auto"),
)
