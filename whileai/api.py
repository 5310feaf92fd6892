"""The Python API: the same compile path as the CLI, with keyword arguments."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.files import build, write_files
from whileai.report import Compiled
from whileai.spec import METHODS, RunSpec

BACKENDS = ("prime-rl", "trl")


def compile(
    run: RunSpec, backend: str = "prime-rl", *, out: str | Path | None = None,
    force: bool = False, cpu: bool = False,
) -> Compiled:
    """Compile a run spec for a backend; write it to `out` when given (atomically)."""
    if backend == "prime-rl":
        from whileai.backends import prime_rl

        target = Path(out) if out is not None else None
        if target is not None and target.suffix and target.suffix != ".toml" and not target.is_dir():
            raise SpecError("out", str(out), "a .toml file or a directory (prime-rl reads TOML)")
        name = target.name if target is not None and target.suffix == ".toml" else None
        compiled = prime_rl.compile(run, name=name)
        single = True
    elif backend == "trl":
        from whileai.backends import trl

        compiled = trl.compile(run, cpu=cpu, out=str(out) if out is not None else None)
        single = False
    else:
        raise SpecError("backend", backend, f"one of {', '.join(BACKENDS)}")
    if out is None:
        return compiled
    target = Path(out)
    if backend == "prime-rl" and (target.is_dir() or not target.suffix):
        target = target / compiled.main
    write_files(target, compiled.files, single=single, force=force)
    shown = str(target / compiled.main) if not single else str(target)
    return replace(compiled, out=shown)


def _run(taskset: str, method: Any, model: str, fields: dict[str, Any]) -> RunSpec:
    if isinstance(method, str):
        if method not in METHODS:
            raise SpecError("method", method, f"one of {', '.join(METHODS)} or a method object")
        method = {"type": method}
    data = {k: v for k, v in fields.items() if v is not None}
    return build(RunSpec, {"taskset": taskset, "method": method, "model": model, **data})


def prime_rl_config(
    taskset: str, method: Any, *, model: str, out: str | Path | None = None, steps: int = 100,
    prompts: int = 64, gpus: int = 2, lora: bool = True, overrides: dict[str, Any] | None = None,
    force: bool = False, **fields: Any,
) -> Compiled:
    """A prime-rl TOML for `method` on `taskset`; `print()` the result for the report."""
    run = _run(taskset, method, model, dict(
        steps=steps, prompts=prompts, gpus=gpus, lora=lora, overrides=overrides, **fields))
    return compile(run, "prime-rl", out=out, force=force)


def trl_config(
    taskset: str, method: Any, *, model: str, out: str | Path | None = None, steps: int = 100,
    prompts: int = 64, lora: bool = True, overrides: dict[str, Any] | None = None,
    cpu: bool = False, force: bool = False, **fields: Any,
) -> Compiled:
    """A TRL run directory for `method` on `taskset`; `print()` the result for the report."""
    run = _run(taskset, method, model, dict(
        steps=steps, prompts=prompts, lora=lora, overrides=overrides, **fields))
    return compile(run, "trl", out=out, force=force, cpu=cpu)
