"""Paired arms from spec files with verl 0.9.1 on Modal (2 GPUs per arm); by default every bundled
example verl can run (examples/*.toml: GRPO, OPD and SFT on reverse-text; OPSD is skipped with
verl's reason), each compared against the GRPO arm, and OPD against SFT.

    python recipes/04-train/verl/run.py --dry-run     # write the run folders, print reports and the plan
    python recipes/04-train/verl/run.py --validate    # verl's own check of every run.sh (Hydra compose,
                    # validate_config, the worker configs) and whileai's rules; run it with a Python
                    # that has verl 0.9.1 (pip install 'whileai[verl]'): without verl, exit 1
    python recipes/04-train/verl/run.py               # deploy the app, spawn one call per arm
    python recipes/04-train/verl/run.py --collect     # exit 3 while any arm runs; then
                                                      # results.json + results.png in runs/<tag>/
    python recipes/04-train/verl/run.py my/grpo.toml my/opd.toml --steps 50 --tag mine

Each arm folder is what `whileai compile -b verl` writes, with what the recipe adds, reported as
overrides: `trainer.logger` gains "file" (verl's file logger, read back per step) and
`trainer.validation_data_dir` keeps verl's holdout samples (the per-task scores pairs need). An
SFT arm gets eval.sh (whileai.launch.verl_eval): verl's model merger, then verl's validation of
the merged model on the same holdout and reward as the RL arms. In the container the arm's
run.sh runs as written (`bash run.sh`); verl starts the OPD teacher on its own GPU pool.
Arms, --baseline, --pair, --repeats, --budget and --strict work as in the prime-rl recipe.
A second launch skips arms already pending or done; --relaunch-failed re-spawns failed ones.
Exit codes: 0 done, 1 a check failed, 2 bad input (one line), 3 still running, 4 Modal
unreachable / no token.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import whileai as wai
from whileai.cli.recipe import (
    EXAMPLES,
    add_arm_options,
    arms_from_args,
    bundled,
    guarded,
    manifest_to_collect,
    parser,
    plan_lines,
    positive,
    print_results,
)
from whileai.cost.budget import check_matched, per_step, steps_of
from whileai.errors import SpecError
from whileai.files.writable import out_error, probe
from whileai.launch import EXIT_INFRA, InfraError, Manifest, collect, launch, plan
from whileai.launch.arms import Arms, load_arms, match_budget, repeat, replace_run
from whileai.launch.interrupt import Interrupted, collect_gate, remote
from whileai.launch.manifest import arm_from_compiled
from whileai.launch.verl_eval import eval_files, recipe_overrides, sft_overrides
from whileai.report.text import render_text
from whileai.report.wrap import width
from whileai.rules.honoured import strict
from whileai.targets.compiled import as_written, in_context

APP = "whileai-verl"  # modal_verl.VERL_APP


def with_recipe(run: wai.RunSpec, name: str) -> wai.RunSpec:
    """The spec with what the recipe needs from verl's logs, as overrides the report shows."""
    extra = sft_overrides() if run.method.type == "sft" else recipe_overrides(name)
    return replace_run(run, overrides=dict(run.overrides) | extra)


def compile_arms(arms: Arms, steps: int | None, budget: object, repeats: int) -> dict[str, wai.Compiled]:
    from whileai.targets.verl.compile import compile as verl

    runs = {n: replace_run(r, steps=steps) if steps else r for n, r in arms.runs.items()}
    if budget is not None:
        runs = match_budget(runs, budget, lambda r: per_step(verl(r)))  # type: ignore[arg-type]
    out = {n: verl(with_recipe(r, n)) for n, r in repeat(runs, repeats).items()}
    out = dict(zip(out, in_context(list(out.values()), list(out)), strict=True))  # the GRPO arm is here
    check_matched(out, budget)  # type: ignore[arg-type]
    return out


def verl_arms(a: argparse.Namespace) -> Arms:
    """The arms: the user's specs, or the bundled ones verl runs (the others named and skipped)."""
    if a.specs or a.arms is not None:
        return arms_from_args(a)
    from whileai.cli.arms import _runnable

    skipped: list[str] = []
    paths = _runnable([EXAMPLES / f"{n}.toml" for n in bundled()], "verl", False, skipped)
    for line in skipped:
        print(f"note: {line}")
    return load_arms(paths, baseline=a.baseline, pairs=a.pair)


def validate(m: Manifest) -> int:
    """verl's own check, then whileai's rules, of every run.sh the arms will run: 1 if any fails."""
    from whileai.targets.verl.check import check

    bad = 0
    for name, arm in m.arms.items():
        for script in ("run.sh", "eval/run.sh"):
            path = Path(arm.dir) / script
            if not path.is_file():
                continue
            lines = check(path, "auto")
            failed = any(level == "error" for level, _ in lines)
            bad += failed
            print(f"\n{name}: {script}: {'REJECTED' if failed else 'ok'}")
            for level, line in lines:
                print(f"  {level}: {line}", file=sys.stderr if level == "error" else sys.stdout)
            if not any(level != "ok" and "not checked by verl" not in line for level, line in lines):
                print("  whileai's rules where verl is lax: nothing refused")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C anywhere: one line; arms already spawned on Modal are listed with how to stop them."""
    return guarded(_main, argv, APP)


def _modal() -> object:
    from whileai.launch import modal_module

    modal_module()  # one line naming the extra where modal is not installed
    import importlib

    return importlib.import_module("whileai.launch.modal_verl")


def _main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write run folders and manifest only")
    mode.add_argument("--validate", action="store_true", help="verl's own check and whileai's rules")
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    add_arm_options(ap, default_tag="verl")
    ap.add_argument("--steps", type=positive, default=None, help="every arm's steps (default: its spec's)")
    args = ap.parse_args(argv)
    out = args.out / args.tag
    try:
        if args.collect:
            m = manifest_to_collect(out, args.tag)
            code = collect(m, _modal().backend())  # type: ignore[attr-defined]
        else:
            probe(out, "--out")  # writable before anything is compiled
            arms = verl_arms(args)
            compiled = compile_arms(arms, args.steps, args.budget, args.repeats)
            if args.strict:  # every warning is an error (whileai.honoured)
                strict(compiled.values())
            specs = {}
            for n, c in compiled.items():
                s = arm_from_compiled(n, c)
                if c.run.method.type == "sft":
                    extra = eval_files(c, n, arms.runs[arms.baseline])  # scored as the pairs are
                    s = s.model_copy(update={"files": dict(s.files) | extra})
                specs[n] = s
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except InfraError as e:
        print(f"Modal not reachable: {e}", file=sys.stderr)
        return EXIT_INFRA
    if args.collect:
        code, note = collect_gate(m, args.partial) if code in (0, 3) else (code, None)
        if note:
            print(note, file=sys.stderr)
        if code == 0:
            print_results(m, out, args.x)
        return code

    base = compiled[arms.baseline].run
    meta = {"holdout": f"{base.taskset} (eval split, {base.eval.examples} tasks)",
            "metric": f"{base.taskset}'s own reward (reward.py, verl's validation: val-core mean@n)",
            "baseline": arms.baseline, "target": "verl", "comparisons": [list(p) for p in arms.pairs],
            "budget": str(args.budget) if args.budget else None}
    try:
        m = plan(specs, args.tag, out, meta=meta)
    except OSError as e:
        print(f"error: {out_error(e)}", file=sys.stderr)
        return 2
    for name, arm in m.arms.items():
        print(f"{name}: {Path(arm.dir) / 'run.sh'} [{arm.state}]")
    print("\n".join(plan_lines({n: steps_of(c) for n, c in compiled.items()},
                               {n: per_step(c) for n, c in compiled.items()}, list(arms.pairs), args.budget)))
    if args.dry_run:
        for n, c in compiled.items():  # the reports name the files just written
            print(f"\n{render_text(as_written(c, m.arms[n].dir), width())}")
        return 0
    if args.validate:
        return validate(m)
    try:
        app = _modal()
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"image: {app.IMAGE_LABEL} (not built or run on this machine; WHILEAI_VERL_IMAGE names "  # type: ignore[attr-defined]
          "another)")
    try:
        app.deploy()  # type: ignore[attr-defined]
        try:
            launch(m, app.backend(), arms=list(compiled), relaunch_failed=args.relaunch_failed)  # type: ignore[attr-defined]
        except KeyboardInterrupt:
            raise Interrupted([], remote(m)) from None
    except InfraError as e:
        print(f"Modal not reachable: {e}", file=sys.stderr)
        return EXIT_INFRA
    print(f"spawned; collect with: python {sys.argv[0]} --collect --tag {args.tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
