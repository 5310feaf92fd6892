"""Paired GRPO / OPSD / OPD arms on reverse-text with prime-rl, on Modal (2 GPUs per arm).

    python recipes/04-train/prime-rl/run.py --dry-run     # write the configs, print their reports
    python recipes/04-train/prime-rl/run.py --validate    # offline: pinned schema, loader rules, resolve
    python recipes/04-train/prime-rl/run.py --validate --on modal   # prime-rl's own `rl @ cfg --dry-run`
                                                                    # in a Modal CPU container
    python recipes/04-train/prime-rl/run.py               # deploy the app, spawn one call per arm
    python recipes/04-train/prime-rl/run.py --collect     # exit 3 while any arm runs; then
                                                          # results.json + results.png in runs/<tag>/
Options: --arms grpo,opsd,opd  --tag rt  --steps 100  --repeats 1  --out runs  --relaunch-failed
A second launch skips arms already pending or done; --relaunch-failed re-spawns failed ones.
Exit codes: 0 done, 3 still running, 4 Modal unreachable / no token (no arm is marked failed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import whileai as wai
from whileai.launch import EXIT_INFRA, InfraError, backend, collect, launch, load_manifest, plan
from whileai.results import build, plot, write_results

STUDENT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
TEACHER = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"
TASKSET = "reverse-text"


def method(kind: str) -> object:
    if kind == "opd":
        return wai.OPD(wai.Endpoint(url="http://localhost:8001/v1", model=TEACHER))
    return {"grpo": wai.GRPO(), "opsd": wai.OPSD(privileged="answer")}[kind]


def compile_arms(kinds: list[str], steps: int, repeats: int) -> dict[str, wai.Compiled]:
    arms = {}
    for kind in kinds:
        for k in range(repeats):
            name = kind if k == 0 else f"{kind}@{k + 1}"
            run = wai.RunSpec(taskset=TASKSET, model=STUDENT, method=method(kind), steps=steps,
                              seed=k)
            arms[name] = wai.compile(run, "prime-rl")
    return arms


def validate_offline(arms: dict[str, wai.Compiled]) -> int:
    """The pinned schema and loader rules, then the values each process will really get."""
    from whileai.backends.prime_rl_resolve import render, resolve
    from whileai.backends.prime_rl_rules import check_document
    from whileai.load import loads_toml

    bad = 0
    for name, c in arms.items():
        doc = loads_toml(c.text)
        problems = check_document(doc)
        bad += bool(problems)
        print(f"\n{name}: {'REJECTED' if problems else 'ok'} ({c.target})")
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        print(render(resolve(doc)[1]))
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write configs and manifest only")
    mode.add_argument("--validate", action="store_true", help="dry-run each config (see --on)")
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    ap.add_argument("--arms", default="grpo,opsd,opd", help="comma-separated: grpo, opsd, opd")
    ap.add_argument("--tag", default="rt", help="run tag; the folder is <out>/<tag>")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=1, help="runs per arm (noise band when > 1)")
    ap.add_argument("--out", type=Path, default=Path("runs"))
    ap.add_argument("--relaunch-failed", action="store_true")
    ap.add_argument("--on", choices=["local", "modal"], default="local",
                    help="--validate: offline here (default) or prime-rl itself on Modal")
    args = ap.parse_args(argv)
    out = args.out / args.tag

    if args.collect:
        m = load_manifest(out)
        code = collect(m, backend("modal"))
        if code == 0:
            res = build(m)
            write_results(out / "results.json", res)
            plot(res, out / "results.png")
            for g, d in res["vs_grpo"].items():
                print(f"{g} vs {res['baseline']}: delta {d['delta']}, CI {d['ci95']}, "
                      f"p {d['p_value']}, {d['verdict']}")
            for w in res["warnings"]:
                print(f"warning: {w}", file=sys.stderr)
            print(f"wrote {out / 'results.json'} and {out / 'results.png'}")
        return code

    kinds = [k.strip() for k in args.arms.split(",") if k.strip()]
    arms = compile_arms(kinds, args.steps, args.repeats)
    m = plan(arms, args.tag, out, meta={"holdout": f"{TASKSET} (eval split)"})
    for name, arm in m.arms.items():
        print(f"{name}: {Path(arm.dir) / (arm.spec.main or '')} [{arm.state}]")
    if args.dry_run:
        for c in arms.values():
            print(f"\n{c}")
        return 0
    if args.validate and args.on == "local":
        return validate_offline(arms)
    try:
        from whileai.launch import modal_app

        if args.validate:
            bad = {n: r for n, r in modal_app.validate_arms(m).items() if not r.get("ok")}
            for n, r in bad.items():
                print(f"{n}: rejected by prime-rl\n{r.get('output')}", file=sys.stderr)
            return 1 if bad else 0
        modal_app.deploy()
        launch(m, backend("modal"), relaunch_failed=args.relaunch_failed)
    except InfraError as e:
        print(f"Modal not reachable: {e}", file=sys.stderr)
        return EXIT_INFRA
    print(f"spawned; collect with: python {sys.argv[0]} --collect --tag {args.tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
