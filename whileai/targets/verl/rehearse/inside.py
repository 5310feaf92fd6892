"""One stage of verl's rehearsal, run by verl's own Python:

    python -m whileai.targets.verl.rehearse.inside --folder F --job J --gpus N --nodes M \
        --scratch S [--line L] [--only STEP]

Reads the verl command `J` (main_ppo, main_generation_server, sft_trainer) of F/run.sh with its Hydra
overrides ($PWD = F, as run.sh cds to its folder), composes verl's config as `whileai check` does
(whileai.targets.verl.check.compose), then runs each step of STEPS (one module of this package each,
`run(ctx) -> StepRecord`) and prints each StepRecord as one JSON line on stdout; whatever verl and
Ray print goes to stderr. A step that raises is a failed StepRecord (its error's first line, the
innermost verl frame as its cause); the steps after it still run. Exit 0 when every step is ok,
1 otherwise, 2 on bad usage.
`--gpus 0` / `--nodes 0`: the command's own trainer.n_gpus_per_node / trainer.nnodes.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from whileai.targets.verl.rehearse.context import Context, StepRecord

STEPS = ["pools", "data", "reward", "loss"]
PACKAGE = "whileai.targets.verl.rehearse"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, required=True, help="the run folder (run.sh's own)")
    ap.add_argument("--job", required=True, help="main_ppo, main_generation_server or sft_trainer")
    ap.add_argument("--line", type=int, default=0, help="its line in run.sh (0: the first --job command)")
    ap.add_argument("--gpus", type=int, default=0, help="GPUs a node has (0: trainer.n_gpus_per_node)")
    ap.add_argument("--nodes", type=int, default=0, help="nodes (0: trainer.nnodes)")
    ap.add_argument("--scratch", type=Path, required=True, help="a folder of this stage's own")
    ap.add_argument("--only", choices=STEPS, help="run this step only")
    args = ap.parse_args(argv)
    out = _own_stdout()
    folder = args.folder.resolve()
    args.scratch.mkdir(parents=True, exist_ok=True)
    ctx, failed = _context(folder, args)
    if failed is not None:
        _say(out, failed)
        return 1
    assert ctx is not None
    ok = True
    for name in [args.only] if args.only else STEPS:
        step = run_step(name, ctx)
        ok &= step.ok
        _say(out, step)
    return 0 if ok else 1


def _context(folder: Path, args: argparse.Namespace) -> tuple[Context | None, StepRecord | None]:
    """The stage's Context with verl's composed config, or the failed `config` step."""
    from whileai.targets.verl.runsh import read

    start = time.perf_counter()
    try:
        env = {**os.environ, "PWD": str(folder)}
        cmds = [c for c in read(folder / "run.sh", env) if c.kind == args.job
                and (not args.line or c.line == args.line)]
        if not cmds:
            at = f" at line {args.line}" if args.line else ""
            raise ValueError(f"run.sh has no {args.job} command{at}")
        cmd = cmds[0]
        name = cmd.option("--config-name")
        config = _compose(cmd.kind, list(cmd.overrides), name.removesuffix(".yaml") if name else None)
        gpus = args.gpus or int(config.trainer.n_gpus_per_node)
        nodes = args.nodes or int(config.trainer.nnodes)
        ctx = Context(folder, cmd.kind, list(cmd.overrides), gpus, nodes, args.scratch.resolve(), config)
        return ctx, None
    except Exception as e:
        return None, failed("config", e, folder, time.perf_counter() - start)


def _compose(kind: str, overrides: list[str], name: str | None) -> Any:
    from whileai.targets.verl.check import compose
    from whileai.targets.verl.novllm import without_vllm

    with without_vllm():
        return compose(kind, overrides, name)


def run_step(name: str, ctx: Context) -> StepRecord:
    """One step by name: its module's `run(ctx)`; a module not there yet is a step not built."""
    start = time.perf_counter()
    module = f"{PACKAGE}.{name}"
    try:
        run = importlib.import_module(module).run
    except ModuleNotFoundError as e:
        if e.name != module:
            return failed(name, e, ctx.folder, time.perf_counter() - start)
        return StepRecord(name, False, error=f"not built: {module.replace('.', '/')}.py is not there yet")
    try:
        step = run(ctx)
    except Exception as e:
        return failed(name, e, ctx.folder, time.perf_counter() - start)
    step.seconds = step.seconds or round(time.perf_counter() - start, 2)
    return step


def failed(name: str, e: BaseException, folder: Path, seconds: float) -> StepRecord:
    return StepRecord(name, False, error=first_line(e), cause=where(e, folder), seconds=round(seconds, 2))


def first_line(e: BaseException) -> str:
    """The exception's type and first line (Hydra's "Error in call to target" with its reason)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    first = lines[0] + (f" {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else "")
    return f"{type(e).__name__}: {first}"


def where(e: BaseException, folder: Path) -> str:
    """file:line of the innermost frame in verl's package (relative: verl/...); else in the run
    folder (relative to it: reward.py:12); else the innermost frame."""
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return ""
    verl_root = _verl_root()
    for f in reversed(frames):
        p = Path(f.filename)
        if verl_root is not None and p.is_relative_to(verl_root):
            return f"{p.relative_to(verl_root.parent)}:{f.lineno}"
    for f in reversed(frames):
        if Path(f.filename).is_relative_to(folder):
            return f"{Path(f.filename).relative_to(folder)}:{f.lineno}"
    f = frames[-1]
    return f"{_short(Path(f.filename))}:{f.lineno}"


def _verl_root() -> Path | None:
    spec = importlib.util.find_spec("verl") if "verl" not in sys.modules else sys.modules["verl"].__spec__
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def _short(p: Path) -> str:
    parts = p.parts
    return str(Path(*parts[parts.index("whileai"):])) if "whileai" in parts else p.name


def _own_stdout() -> TextIO:
    """The real stdout kept for the JSON lines; fd 1 then points at stderr, so what verl, Ray and
    their children print never mixes into them."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return out


def _say(out: TextIO, step: StepRecord) -> None:
    out.write(step.to_json() + "\n")
    out.flush()


if __name__ == "__main__":
    sys.exit(main())
