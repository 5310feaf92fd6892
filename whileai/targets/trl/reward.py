"""A GRPO `reward = "module.function"` found at compile, without running the user's code.

The module is looked for beside the spec, beside the data file, in the working directory,
then on the Python path, with importlib's path finder (which locates files and imports
nothing); its source is parsed (ast) for a top-level `function`. A reward that cannot be
found is a SpecError now, not a ModuleNotFoundError on the GPU machine. Where it goes:

- a single-file module found in one of those folders is copied into the run directory (TRL's
  `trl grpo` puts the working directory on sys.path, so the command stays as it is);
- a module inside a package there: the command gets `PYTHONPATH=<that folder>`;
- an installed module: the report says it must be installed where TRL runs.
"""

from __future__ import annotations

import ast
import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from typing import Any, NamedTuple

from whileai.errors import SpecError
from whileai.tasksets.local import display

SOURCE_LIMIT = 4 << 20


class Reward(NamedTuple):
    dotted: str
    origin: str | None  # the module's file, when it has one
    copy: str | None  # file name in the run directory (a single-file module copied in)
    source: str | None  # the text copied
    pythonpath: str | None  # a folder the command must put on PYTHONPATH
    installed: bool  # found on the Python path only

    def note(self) -> str:
        if self.copy:
            return f"{self.copy} copied from {display(self.origin or '')} into the run directory"
        if self.pythonpath:
            return f"imported from {self.pythonpath} (PYTHONPATH in the command)"
        return f"found at {self.origin or 'an installed module'}: install it where TRL runs"


def folders(run: Any) -> list[str]:
    """Where a user's module is looked for first: beside the spec, the data, then the cwd."""
    found = [getattr(run, "_origin", None), os.path.dirname(os.path.abspath(run.data))
             if run.data else None, os.getcwd()]
    return list(dict.fromkeys(os.path.abspath(d) for d in found if d))


def locate(run: Any) -> Reward:
    """The reward of a GRPO run, found and checked; SpecError when it cannot be imported."""
    dotted: str = run.reward
    module, _, func = dotted.rpartition(".")
    mine = folders(run)
    for dirs, user in ((mine, True), ([p for p in sys.path if p and p not in mine], False)):
        spec, top_dir = _find(module, dirs)
        if spec is None:
            continue
        origin = spec.origin if spec.has_location else None
        text = _source(origin, dotted) if origin and origin.endswith(".py") else None
        if text is not None and not _defines(text, func, origin or module, dotted):
            raise SpecError("reward", dotted, f"a function {func!r} defined at the top level of "
                            f"{origin}", hint=f"{module} has no {func}")
        single = user and "." not in module and origin is not None \
            and os.path.basename(origin) == f"{module}.py"
        return Reward(dotted, origin, f"{module}.py" if single else None, text if single else None,
                      top_dir if user and not single else None, not user)
    raise SpecError("reward", dotted, "an importable 'module.function'", hint="no module "
                    f"{module!r} beside the spec, the data file, in {os.getcwd()} or on the "
                    "Python path")


def _find(module: str, dirs: list[str]) -> tuple[ModuleSpec | None, str | None]:
    """importlib's finder along the dotted name: locates files, imports (runs) nothing."""
    parts = module.split(".")
    for d in dirs:
        spec = PathFinder.find_spec(parts[0], [d])
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                spec = None
                break
            spec = PathFinder.find_spec(".".join(parts[: i + 1]), list(spec.submodule_search_locations))
        if spec is not None:
            return spec, d
    return None, None


def _source(origin: str, dotted: str) -> str:
    from whileai.spec.load import read_text

    try:
        return read_text(origin, "reward", SOURCE_LIMIT, "Python file")
    except SpecError as e:
        raise SpecError("reward", dotted, f"a readable module: {e}") from None


def _defines(text: str, func: str, where: str, dotted: str) -> bool:
    try:
        tree = ast.parse(text, filename=where)
    except (SyntaxError, ValueError, RecursionError) as e:
        raise SpecError("reward", dotted, "a module Python can import",
                        hint=f"{Path(where).name} does not parse: {e.__class__.__name__}") from None
    return any(_binds(node, func) for node in _statements(tree.body))


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, including those inside if / try / with blocks."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With, ast.AsyncWith)) \
                or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                out += _statements(getattr(node, field, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                out += _statements(handler.body)
    return out


def _binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Name) and t.id == name for t in targets)
    if isinstance(node, (ast.Import, ast.ImportFrom)):  # `from x import *` may bind it too
        return any(a.name == "*" or (a.asname or a.name.split(".")[0]) == name for a in node.names)
    return False
