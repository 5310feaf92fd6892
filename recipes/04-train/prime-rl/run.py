"""Paired arms from spec files with prime-rl on Modal (2 GPUs per arm); by default every bundled
example (examples/*.toml: GRPO, OPD, OPSD and SFT on reverse-text), each compared against the
GRPO arm, and OPD against SFT (the article's on- vs off-policy question).

    python recipes/04-train/prime-rl/run.py --dry-run     # write the configs, print reports and the plan
    python recipes/04-train/prime-rl/run.py --validate    # offline: pinned schema, loader rules, resolve
    python recipes/04-train/prime-rl/run.py --validate --on modal   # prime-rl's own `rl @ cfg --dry-run`
                                                                    # in a Modal CPU container
    python recipes/04-train/prime-rl/run.py --validate --rehearse   # and `whileai rehearse` each arm:
                    # prime-rl's own rl for 2 steps on this CPU ($WHILEAI_REHEARSE_PYTHON, docs/rehearse.md)
    python recipes/04-train/prime-rl/run.py               # deploy the app, spawn one call per arm
    python recipes/04-train/prime-rl/run.py --collect     # exit 3 while any arm runs; then
                                                          # results.json + results.png in runs/<tag>/
    python recipes/04-train/prime-rl/run.py my/grpo.toml my/opd.toml my/sft.toml \\
        --budget rollouts=20480 --repeats 3 --pair opd:sft --tag mine

Arms are spec files (SPEC... or --arms grpo,opd naming bundled ones). Every arm must share the
baseline's taskset, holdout and student (--baseline picks it; default: the GRPO spec); each is
compared against it, plus --pair A:B (opd:sft by default when both exist). --budget rollouts=N
(or tokens=N) sets each arm's steps so all spend the same; --steps N sets every arm's steps.
Options: --tag rt --out runs --repeats 1 --relaunch-failed --x step,rollouts
A second launch skips arms already pending or done; --relaunch-failed re-spawns failed ones.
Before deploying, `whileai preflight` probes each arm's remote teacher (--no-preflight skips it).
Exit codes: 0 done, 1 preflight failed, 2 bad input (one line), 3 still running, 4 Modal
unreachable / no token.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import whileai as wai
from whileai.cli.recipe import (
    add_arm_options,
    arms_from_args,
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
from whileai.launch import EXIT_INFRA, InfraError, backend, collect, launch, modal_module, plan
from whileai.launch.arms import Arms, match_budget, repeat, replace_run
from whileai.launch.interrupt import Interrupted, collect_gate, remote
from whileai.preflight.gate import gate
from whileai.report.text import render_text
from whileai.report.wrap import width
from whileai.rules.honoured import strict
from whileai.targets.compiled import as_written, in_context

MODAL_APP = os.environ.get("WHILEAI_MODAL_APP", "whileai")  # modal_app.APP_NAME


def compile_arms(arms: Arms, steps: int | None, budget: object, repeats: int) -> dict[str, wai.Compiled]:
    from whileai.targets.prime_rl import compile as prime_rl

    runs = {n: replace_run(r, steps=steps) if steps else r for n, r in arms.runs.items()}
    if budget is not None:
        runs = match_budget(runs, budget, lambda r: per_step(prime_rl.compile(r)))  # type: ignore[arg-type]
    out = {n: prime_rl.compile(r, name=f"{n.split('@')[0]}.toml") for n, r in repeat(runs, repeats).items()}
    out = dict(zip(out, in_context(list(out.values()), list(out)), strict=True))  # the GRPO arm is here
    check_matched(out, budget)  # type: ignore[arg-type]
    return out


def validate_offline(arms: dict[str, wai.Compiled]) -> int:
    """The pinned schema and loader rules, then the values each process will really get."""
    from whileai.spec.load import loads_toml
    from whileai.targets.prime_rl.check import check_document
    from whileai.targets.prime_rl.resolve import render, resolve

    bad = 0
    for name, c in arms.items():
        doc = loads_toml(c.text)
        problems = check_document(doc)
        bad += bool(problems)
        print(f"\n{name}: {'REJECTED' if problems else 'ok'} ({c.pin})")
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        print(render(resolve(doc)[1]))
    return 1 if bad else 0


def rehearse_arms(arms: dict[str, wai.Compiled], steps: int, timeout: float) -> int:
    """`whileai rehearse` each arm, one after the other (the stand-ins share ports): 1 if any fails."""
    from whileai.targets import registry

    bad = 0
    for name, c in arms.items():
        r = registry.get(c.target).rehearsal  # the target's rehearsal hook (prime-rl has one)
        assert r is not None, c.target
        print(f"\nrehearsing {name} ({steps} steps on the CPU)")
        result = r.rehearse(r.stages(c), python=None, steps=steps, timeout=timeout, keep=None,
                            say=lambda line: print(line, flush=True))
        print("\n".join(r.lines(result)))
        bad += not result.ok
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C anywhere: one line; arms already spawned on Modal are listed with how to stop them."""
    return guarded(_main, argv, MODAL_APP)


def _main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write configs and manifest only")
    mode.add_argument("--validate", action="store_true", help="dry-run each config (see --on)")
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    add_arm_options(ap, default_tag="rt")
    ap.add_argument("--steps", type=positive, default=None, help="every arm's steps (default: its spec's)")
    ap.add_argument("--no-preflight", action="store_true", help="deploy without `whileai preflight`'s "
                    "probes of the arms' remote teachers")
    ap.add_argument("--on", choices=["local", "modal"], default="local",
                    help="--validate: offline here (default) or prime-rl itself on Modal")
    ap.add_argument("--rehearse", action="store_true", help="--validate: also run prime-rl's own rl for "
                    "--rehearse-steps steps on this CPU with stand-in servers and trainer (whileai rehearse)")
    ap.add_argument("--rehearse-steps", type=positive, default=2, help="--rehearse: steps per arm")
    ap.add_argument("--rehearse-timeout", type=positive, default=900, help="--rehearse: seconds per arm")
    args = ap.parse_args(argv)
    out = args.out / args.tag
    if args.rehearse and not (args.validate and args.on == "local"):
        print("error: --rehearse = True: allowed with --validate (on local) only", file=sys.stderr)
        return 2
    try:
        if args.collect:
            m = manifest_to_collect(out, args.tag)
        else:
            probe(out, "--out")  # writable before anything is compiled
            arms = arms_from_args(args)
            compiled = compile_arms(arms, args.steps, args.budget, args.repeats)
            if args.strict:  # every warning is an error (whileai.honoured)
                strict(compiled.values())
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.collect:
        try:
            code = collect(m, backend("modal"))
        except SpecError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        code, note = collect_gate(m, args.partial) if code in (0, 3) else (code, None)
        if note:
            print(note, file=sys.stderr)
        if code == 0:
            print_results(m, out, args.x)
        return code

    base = compiled[arms.baseline].run
    meta = {"holdout": f"{base.taskset} (eval split, {base.eval.examples} tasks)",
            "metric": f"{base.taskset}'s own reward (its verifiers rubric)", "baseline": arms.baseline,
            "comparisons": [list(p) for p in arms.pairs], "budget": str(args.budget) if args.budget else None}
    try:
        m = plan(compiled, args.tag, out, meta=meta)
    except OSError as e:
        print(f"error: {out_error(e)}", file=sys.stderr)
        return 2
    for name, arm in m.arms.items():
        print(f"{name}: {Path(arm.dir) / (arm.spec.main or '')} [{arm.state}]")
    print("\n".join(plan_lines({n: steps_of(c) for n, c in compiled.items()},
                               {n: per_step(c) for n, c in compiled.items()}, list(arms.pairs), args.budget)))
    if args.dry_run:
        for n, c in compiled.items():  # the reports name the files just written
            print(f"\n{render_text(as_written(c, m.arms[n].dir), width())}")
        return 0
    if args.validate and args.on == "local":
        code = validate_offline(compiled)
        if args.rehearse and code == 0:
            try:
                code = rehearse_arms(compiled, args.rehearse_steps, float(args.rehearse_timeout))
            except SpecError as e:
                print(f"error: {e}", file=sys.stderr)
                return 2
        return code
    try:
        app = modal_module()
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        if args.validate:
            bad = {n: r for n, r in app.validate_arms(m).items() if not r.get("ok")}
            for n, r in bad.items():
                print(f"{n}: rejected by prime-rl\n{r.get('output')}", file=sys.stderr)
            return 1 if bad else 0
        if not args.no_preflight and not gate(compiled, "prime-rl", where="modal"):
            return 1
        app.deploy()
        try:
            launch(m, backend("modal"), arms=list(compiled), relaunch_failed=args.relaunch_failed)
        except KeyboardInterrupt:
            raise Interrupted([], remote(m)) from None
    except InfraError as e:
        print(f"Modal not reachable: {e}", file=sys.stderr)
        return EXIT_INFRA
    print(f"spawned; collect with: python {sys.argv[0]} --collect --tag {args.tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
