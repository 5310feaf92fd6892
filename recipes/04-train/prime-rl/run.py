"""Paired GRPO / OPSD / OPD arms on reverse-text with prime-rl, on Modal (2 GPUs per arm).

    python recipes/04-train/prime-rl/run.py --dry-run     # write configs + manifest, launch nothing
    python recipes/04-train/prime-rl/run.py --validate    # `rl @ cfg --dry-run` in a Modal CPU container
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write configs and manifest only")
    mode.add_argument("--validate", action="store_true", help="prime-rl --dry-run on Modal CPU")
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    ap.add_argument("--arms", default="grpo,opsd,opd", help="comma-separated: grpo, opsd, opd")
    ap.add_argument("--tag", default="rt", help="run tag; the folder is <out>/<tag>")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=1, help="runs per arm (noise band when > 1)")
    ap.add_argument("--out", type=Path, default=Path("runs"))
    ap.add_argument("--relaunch-failed", action="store_true")
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
    m = plan(compile_arms(kinds, args.steps, args.repeats), args.tag, out,
             meta={"holdout": f"{TASKSET} (eval split)"})
    for name, arm in m.arms.items():
        print(f"{name}: {Path(arm.dir) / (arm.spec.main or '')} [{arm.state}]")
    if args.dry_run:
        return 0
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
