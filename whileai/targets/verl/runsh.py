"""A run.sh read into its verl commands: the module each runs and its Hydra overrides, in order.

    [c] = read(Path("run/run.sh"))   # c.kind "main_ppo", c.overrides ("algorithm.adv_estimator=grpo", ...)

Pure, stdlib-only, nothing run. It reads the bash that whileai's run.sh and verl's example scripts
use: continuations, comments, quotes, variables the script assigns (`X=1`, `export X=1`, arrays
`X=(a b)` with `"${X[@]}"`), `${X:-default}`, `$(( arithmetic ))`, `"$@"` (nothing). A variable it
does not assign (`$HOME`) comes from `env`, else stays as written and is named in `Command.unknown`.
A verl command: `-m verl.<module>` (python3 -m, torchrun ... -m, ray job submit -- python3 -m).
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

KINDS = {"verl.trainer.main_ppo": "main_ppo",
         "verl.trainer.main_generation_server": "main_generation_server",
         "verl.trainer.sft_trainer": "sft_trainer"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)", re.S)
_HYDRA_OPTIONS = {"--config-path", "--config-name", "--config-dir", "-cp", "-cn", "-cd"}
_SEPARATORS = {"\n", ";", "&", "|"}


@dataclass(frozen=True)
class Command:
    """One verl command of a run.sh."""

    module: str  # "verl.trainer.main_ppo"
    kind: str  # "main_ppo", "main_generation_server", "sft_trainer"; else the module's last part
    launcher: tuple[str, ...]  # the words before the module: ("python3", "-m"), ("torchrun", ..., "-m")
    options: tuple[str, ...]  # Hydra's own options: "--config-name=ppo_megatron_trainer", ...
    overrides: tuple[str, ...]  # the Hydra overrides, as the process receives them
    line: int  # the line the command starts on (1-based)
    unknown: tuple[str, ...] = ()  # variables the script uses but does not assign

    def option(self, name: str) -> str | None:
        """A Hydra option's value (`--config-name`), or None."""
        names = (name, "-c" + name[len("--config-")])  # --config-name or -cn
        return next((o.partition("=")[2] for o in self.options if o.partition("=")[0] in names), None)


def read(path: Path, env: Mapping[str, str] | None = None) -> list[Command]:
    """The verl commands of the run.sh at `path` (or `path/run.sh` for a directory)."""
    path = path / "run.sh" if path.is_dir() else path
    return parse(path.read_text(), env)


def parse(text: str, env: Mapping[str, str] | None = None) -> list[Command]:
    """The verl commands of a shell script's text, in order."""
    lexer = _Lexer(text, dict(env or {}))
    out: list[Command] = []
    for line, words in lexer.commands():
        cmd = _verl_command(_assignments(words, lexer), line, lexer)
        out += [cmd] if cmd else []
        lexer.unknown.clear()
    return out


def mentions_verl(text: str) -> bool:
    """Whether a shell script has a verl command (what `whileai check` claims), read cheaply."""
    return bool(re.search(r"-m\s+[\"']?verl\.", text))


def _assignments(words: list[str], lexer: _Lexer) -> list[str]:
    """Apply leading `NAME=value` words (and `export NAME=value`); return the command left."""
    rest = words[1:] if words[0] in ("export", "declare", "readonly", "local") else words
    i = 0
    while i < len(rest) and (m := _ASSIGN.fullmatch(rest[i])):
        name, plus, value = m.groups()
        lexer.vars[name] = lexer.vars.get(name, "") + value if plus else value
        lexer.arrays.pop(name, None)
        lexer.taint[name] = tuple(lexer.unknown)
        i += 1
    return rest[i:]


def _verl_command(words: list[str], line: int, lexer: _Lexer) -> Command | None:
    at = next((i for i, w in enumerate(words[:-1]) if w == "-m" and words[i + 1].startswith("verl.")), -1)
    if at < 0:
        return None
    module, options, overrides, args = words[at + 1], [], [], iter(words[at + 2:])
    for a in args:
        if a.startswith("-"):  # Hydra's own options: `--config-name=x`, `--config-name x`, `-cn x`
            options.append(f"{a}={next(args, '')}" if a in _HYDRA_OPTIONS else a)
        elif a:
            overrides.append(a)
    return Command(module, KINDS.get(module, module.rsplit(".", 1)[-1]), tuple(words[:at + 1]),
                   tuple(options), tuple(overrides), line, tuple(dict.fromkeys(lexer.unknown)))


class _Lexer:
    """Reads shell text into commands of expanded words (the subset of bash a run.sh uses)."""

    def __init__(self, text: str, env: dict[str, str]) -> None:
        self.text, self.i, self.line, self.env = text, 0, 1, env
        self.vars: dict[str, str] = {}
        self.arrays: dict[str, list[str]] = {}
        self.unknown: list[str] = []  # what the command being read uses unassigned
        self.taint: dict[str, tuple[str, ...]] = {}  # a variable -> the unknowns its value holds

    def commands(self) -> Iterator[tuple[int, list[str]]]:
        while self.i < len(self.text):
            start, words = self.line, self._words(array=False)
            if words:
                yield start, words

    def _peek(self, n: int = 0) -> str:
        return self.text[self.i + n:self.i + n + 1]

    def _take(self, n: int = 1) -> str:
        s, self.i = self.text[self.i:self.i + n], self.i + n
        self.line += s.count("\n")
        return s

    def _words(self, array: bool) -> list[str]:
        """Words up to the end of a command (or the `)` closing an array's elements)."""
        words: list[str] = []
        while self.i < len(self.text):
            c = self._peek()
            if c == "\\" and self._peek(1) == "\n":
                self._take(2)
            elif c in " \t" or (array and c == "\n"):
                self._take()
            elif c == "#":
                self.i = self.text.find("\n", self.i) % (len(self.text) + 1)  # -1: to the end
            elif array and c == ")":
                self._take()
                return words
            elif c in _SEPARATORS:
                self._take()
                while c != "\n" and self._peek() in ("&", "|", ";") and self._peek():
                    self._take()
                return words
            elif c in "<>":
                self._redirect(words)
            else:
                words.extend(self._word(array))
        return words

    def _word(self, array: bool) -> list[str]:
        """One word at the cursor, expanded: none ("$@"), one, or several ("${A[@]}", split $X)."""
        fields: list[str] = [""]
        while self.i < len(self.text):
            c = self._peek()
            if c in " \t\n<>" or c in _SEPARATORS or (array and c == ")"):
                break
            if c == "(" and not array and re.fullmatch(r"[A-Za-z_]\w*=", fields[-1]) and len(fields) == 1:
                self._take()
                name, before = fields[0][:-1], len(self.unknown)
                self.arrays[name] = self._words(array=True)
                self.vars.pop(name, None)
                self.taint[name] = tuple(self.unknown[before:])
                return []
            if c == "\\":
                self._take()
                fields[-1] += self._take()
            elif c == "'":
                end = self.text.find("'", self.i + 1) % (len(self.text) + 1)  # -1: to the end
                fields[-1] += self._take(end + 1 - self.i)[1:-1]
            elif c == '"':
                self._take()
                while self.i < len(self.text) and self._peek() != '"':
                    if self._peek() == "\\" and self._peek(1) in '"\\$`\n':
                        self._take()
                        ch = self._take()
                        fields[-1] += "" if ch == "\n" else ch
                    elif self._peek() == "$":  # "${A[@]}": one word per element; else no split
                        many = self._dollar()
                        _split_into(fields, many) if isinstance(many, list) else None
                        fields[-1] += many if isinstance(many, str) else ""
                    else:
                        fields[-1] += self._take()
                self._take()
            elif c == "$":
                _split_into(fields, self._dollar())
            else:
                fields[-1] += self._take()
        return [f for f in fields if f]

    def _redirect(self, words: list[str]) -> None:
        """Skip a redirection (`> log`, `2>&1`, `>> out.txt`): it is no argument."""
        if words and words[-1].isdigit() and self.text[self.i - 1].isdigit():
            words.pop()  # the descriptor of `2>`
        while self._peek() and self._peek() in "<>&":
            self._take()
        if self._peek() and self._peek() in "0123456789-":  # `>&1`, `>&-`
            self._take()
            return
        self.i += len(self.text[self.i:]) - len(self.text[self.i:].lstrip(" \t"))
        self._word(array=False)

    def _dollar(self) -> str | list[str]:
        """The expansion at a `$`: a string, or a list of words for "${A[@]}" and "$@"."""
        self._take()
        c = self._peek()
        if self.text.startswith("((", self.i):
            return self._arith(self._take(self._closing(self.i + 2, "((", "))") + 2 - self.i)[2:-2])
        if c == "(":  # a command's output: not run
            return self._unknown("$" + self._take(self._closing(self.i + 1, "(", ")") + 1 - self.i))
        if c == "{":
            return self._braced(self._take(self._closing(self.i + 1, "{", "}") + 1 - self.i)[1:-1])
        if c and c in "@*":  # the caller's arguments: none
            return [] if self._take() else []
        name = _NAME.match(self.text, self.i)
        if name is None:  # $1, $?, ...: the script's own arguments and state
            return self._unknown("$" + self._take()) if c and c in "0123456789#?$!-" else "$"
        self._take(name.end() - self.i)
        return self._value(name.group())

    def _braced(self, body: str) -> str | list[str]:
        m = re.fullmatch(r"([A-Za-z_]\w*)\[[@*]\]", body)
        if m:
            self.unknown.extend(self.taint.get(m.group(1), ()))
            return list(self.arrays.get(m.group(1), []))
        m = re.fullmatch(r"([A-Za-z_]\w*)(:?[-=])(.*)", body, re.S)
        if m:
            name, op, default = m.groups()
            self.unknown.extend(self.taint.get(name, ()))
            known = self.vars.get(name, self.env.get(name))
            return self._expand(default) if known is None or (op[0] == ":" and not known) else known
        if body in ("@", "*"):
            return []
        return self._value(body) if _NAME.fullmatch(body) else self._unknown("${" + body + "}")

    def _expand(self, text: str) -> str:
        """A default's text (`${X:-$HOME/data}`) expanded, quotes removed, not split."""
        sub = _Lexer(text, self.env)
        sub.vars, sub.arrays, sub.taint, sub.unknown = self.vars, self.arrays, self.taint, self.unknown
        out = ""
        while sub.i < len(text):
            c = sub._peek()
            value = sub._dollar() if c == "$" else "" if c in "'\"" and sub._take() else sub._take()
            out += value if isinstance(value, str) else " ".join(value)
        return out

    def _value(self, name: str) -> str:
        self.unknown.extend(self.taint.get(name, ()))
        if name in self.arrays:
            return (self.arrays[name] or [""])[0]
        known = self.vars.get(name, self.env.get(name))
        return self._unknown("$" + name) if known is None else known

    def _unknown(self, raw: str) -> str:
        self.unknown.append(raw)
        return raw

    def _arith(self, expr: str) -> str:
        named = _NAME.sub(lambda m: self._value(m.group()), expr.replace("$", ""))
        try:
            return str(_eval(ast.parse(named.strip(), mode="eval").body))
        except (SyntaxError, ValueError, KeyError, TypeError, ZeroDivisionError):
            return self._unknown(f"$(({expr}))")

    def _closing(self, j: int, open_: str, close: str) -> int:
        """Where the `close` that matches an `open_` before `j` starts."""
        depth = 1
        while j < len(self.text):
            mark = next((m for m in (close, open_) if self.text.startswith(m, j)), None)
            depth += 0 if mark is None else -1 if mark == close else 1
            if depth == 0:
                return j
            j += len(mark) if mark else 1
        return len(self.text)


def _split_into(fields: list[str], value: str | list[str]) -> None:
    """An unquoted expansion joins the word being read, split on blanks as bash splits it."""
    if isinstance(value, list):
        if value:
            fields[-1] += value[0]
            fields.extend(value[1:])
        return
    pieces = [""] * value[:1].isspace() + value.split() + [""] * value[-1:].isspace()
    if pieces:
        fields[-1] += pieces[0]
        fields.extend(pieces[1:])


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.floordiv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _eval(node: ast.AST) -> int:
    """Integer arithmetic as bash's $(( )) does it (+ - * / %, parentheses, unary minus)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return int(_OPS[type(node.op)](_eval(node.left), _eval(node.right)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    raise ValueError("not integer arithmetic")
