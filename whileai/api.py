"""The Python API: the same compile path as the CLI, with keyword arguments.

`compile_all` is that path: the target from the registry (whileai.targets.registry), where each
spec goes (whileai.files.write.destinations), every spec compiled,
then one write plan for all of them, committed all-or-nothing. Bad input of any kind raises
SpecError only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from whileai.errors import SpecError, raw
from whileai.files import write
from whileai.files.names import spec_name
from whileai.spec.load import build
from whileai.spec.run import METHODS, RunSpec
from whileai.targets import registry
from whileai.targets.base import Options
from whileai.targets.compiled import Compiled, as_written, in_context


def compile(
    run: RunSpec, target: str = "prime-rl", *, out: str | Path | None = None,
    force: bool = False, cpu: bool = False, strict: bool = False,
) -> Compiled:
    """Compile a run spec for a target (whileai.targets.registry); write it to `out` when given
    (atomically). strict: every warning is an error (SpecError, nothing written)."""
    return compile_all([run], target, out=out, force=force, cpu=cpu, strict=strict)[0]


def compile_all(
    runs: list[RunSpec], target: str = "prime-rl", *, names: list[str] | None = None,
    out: str | Path | None = None, force: bool = False, cpu: bool = False, strict: bool = False,
    check: Callable[[list[Compiled]], None] | None = None,
) -> list[Compiled]:
    """Compile several specs and write them all, or nothing when any one fails.

    check: run on the written results with the files in place (the target's own check, which
    reads them there); an exception from it takes the whole write back and is raised again.

    names: each spec's name (whileai.files.names.spec_name: the CLI passes the file stems);
    unset: the method type. With one
    spec, `out` is the target's file (or a folder for it) or its run directory itself; with
    several, a folder holding <name>.toml or <name>/ each."""
    t = registry.get(target)
    options = Options(cpu=bool(cpu))
    for option, value in options._asdict().items():
        if value and option in t.refuses:  # refused, never silently dropped
            raise SpecError(f"--{option}", raw(f"set with backend {t.name}"), f"--{option} applies "
                            f"to {', '.join(registry.having(option))} only ({t.refuses[option]})")
    for run in runs:
        if not isinstance(run, RunSpec):
            raise SpecError("run", run, "a whileai.RunSpec (build one with wai.RunSpec(...))")
    dests = write.destinations(*t.shape, names or [spec_name(None, r) for r in runs], out)
    compiled = [replace(t.compile(run, name=d.name, out=str(d.root) if d.root is not None else None,
                                  options=options), name=d.name.removesuffix(t.shape.suffix or ""))
                for run, d in zip(runs, dests, strict=True)]
    # a GRPO arm compiled alongside meets the others' needs-grpo-arm (whileai.rules.accept)
    compiled = in_context(compiled, names or [spec_name(None, r) for r in runs])
    if strict:  # every warning is an error, before anything is written (whileai.rules.honoured)
        from whileai.rules.honoured import strict as refuse_warnings

        refuse_warnings(compiled)
    if out is None:
        return compiled
    whole = t.shape.suffix is None  # a run directory is the output's own folder
    written = [as_written(c, d.root) for d, c in zip(dests, compiled, strict=True)]
    write.write([write.Output(d.root, c.files, whole) for d, c in zip(dests, compiled, strict=True)
                 if d.root is not None], force=bool(force),
                then=None if check is None else lambda: check(written))
    return written


def _run(taskset: str, method: Any, model: str, fields: dict[str, Any]) -> RunSpec:
    if isinstance(method, str):
        if method not in METHODS:
            raise SpecError("method", method, f"one of {', '.join(METHODS)} or a method object")
        method = {"type": method}
    data = {k: v for k, v in fields.items() if v is not None}
    return build(RunSpec, {"taskset": taskset, "method": method, "model": model, **data})


def prime_rl_config(
    taskset: str, method: Any, *, model: str, out: str | Path | None = None, steps: int = 100,
    prompts: int = 64, gpus: int | None = None, lora: bool = True, overrides: dict[str, Any] | None = None,
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
