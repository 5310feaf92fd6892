"""Help a person can read and copy: plain text (no rich markup, so `A:B:S` stays `A:B:S` and is
never an emoji), option names whole at any width, and readable value names.

Every command is registered with `cls=HelpCommand` (whileai.cli.app): arguments read `SPEC...`
(not `{specs}` and `<list[Path]>`), options name their value (`--out PATH`, `--set TEXT`, `--top-k
N`, not `<path>`, `<list[str]>`, `<int range>`), and an on/off switch shows no `[default: no-x]`.
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperCommand

from whileai.cli.fail import err_line, fail
from whileai.errors import missing_argument

# typer's type labels → the value name shown after an option
_NAMES = {
    "str": "TEXT",
    "path": "PATH",
    "int": "N",
    "int range": "N",
    "float": "NUMBER",
    "float range": "NUMBER",
    "bool": "BOOL",
}


def _value_name(param: Any, ctx: Any) -> str:
    """An option's value name: its metavar, else its type as a word (TEXT, PATH, N, NUMBER)."""
    if param.metavar:
        return str(param.metavar)
    shown = param.display_type(ctx) if hasattr(param, "display_type") else ""
    label = re.sub(r"^<(?:list\[)?(.*?)\]?>$", r"\1", str(shown or "")).lower()
    return _NAMES.get(label, label.upper() or "TEXT")


def argument_name(param: Any) -> str:
    """`SPEC`, `SPEC...` or `[SPEC]`: the argument as the usage line and help show it."""
    name = str(param.metavar or param.name).upper()
    name += "..." if param.nargs != 1 else ""
    return name if param.required else f"[{name}]"


class HelpCommand(TyperCommand):
    """typer's command whose help is plain and readable (see the module's docstring), and whose
    usage errors are one line, exit code 2: `error: missing argument SPECS...; run spec ...`,
    `error: No such option: --bogus (whileai compile --help)`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return list(super().parse_args(ctx, args))
        except Exception as e:  # click's usage errors (typer vendors click: matched by name)
            if "UsageError" not in {k.__name__ for k in type(e).__mro__}:
                raise
            hint = f" (whileai {self.name} --help)"
            param: Any = getattr(e, "param", None)
            if type(e).__name__ == "MissingParameter" and getattr(param, "param_type_name", "") == "argument":
                what = (param.help or "").rstrip(".")
                fail(missing_argument(argument_name(param), what[:1].lower() + what[1:] + hint))
            usage: Any = e  # a click UsageError, matched by name above
            message = " ".join(usage.format_message().split()).rstrip(".")  # one line, as every refusal
            err_line(f"error: {message}{hint}")
            raise SystemExit(getattr(e, "exit_code", 2)) from None

    def get_short_help_str(self, limit: int = 45) -> str:
        """The first sentence, whole, up to its colon, for `whileai --help` (click cuts it at 45
        characters, mid-word)."""
        first = " ".join((self.short_help or self.help or "").split("\n\n")[0].split())
        return first.split(". ")[0].split(": ")[0].rstrip(".")

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        args = [argument_name(p) for p in self.get_params(ctx) if p.param_type_name == "argument"]
        return [self.options_metavar or "", *args]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args, opts = [], []
        params: list[Any] = self.get_params(ctx)
        for p in params:
            if p.param_type_name == "argument":
                default = "" if p.required or p.default in (None, ()) else f"  [default: {p.default}]"
                args.append((argument_name(p), (p.help or "") + default))
                continue
            if getattr(p, "is_flag", False):
                p.show_default = False  # `--force / --no-force`: the pair says it
            else:
                p.metavar = _value_name(p, ctx)
            record = p.get_help_record(ctx)
            if record:
                opts.append(record)
        for title, rows in (("Arguments", args), ("Options", opts)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
