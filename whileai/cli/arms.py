"""`whileai arms`: plan a paired comparison of spec files (registered in whileai.cli.app).

    whileai arms grpo.toml opd.toml mine.toml [--baseline grpo] [--pair opd:mine]
                 [--repeats 3] [--budget rollouts=20480] [-t prime-rl|trl|verl] [--cpu] [-o DIR] [--json]

Loads each spec as an arm (named by its file stem), refuses one that does not share the
baseline's taskset, holdout and student, sets budget-matched steps, compiles every arm and
prints what each will spend, the pairs compared and a warning where budgets differ more than
2x. `-o DIR` writes each arm's files under DIR/<arm>/ and the launch manifest DIR/manifest.json
(what the recipes launch and collect). Nothing heavy is imported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from whileai.cli.params import TARGET


def arms_cmd(
    specs: Annotated[list[Path] | None, typer.Argument(help="Spec files, one per arm (default: the "
                     "bundled examples/*.toml).", show_default=False)] = None,
    baseline: Annotated[str | None, typer.Option(help="The arm (name or spec file) every other is "
                        "compared against; default: the GRPO arm.")] = None,
    pair: Annotated[list[str] | None, typer.Option("--pair", help="Also compare A against B "
                    "(A:B, repeatable).")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Runs per arm (seeds seed..seed+N-1).")] = 1,
    budget: Annotated[str | None, typer.Option(help="rollouts=N or tokens=N: steps set so every "
                      "arm spends the same.")] = None,
    target: Annotated[str, typer.Option(*TARGET.flags, help=TARGET.help)] = TARGET.default,
    cpu: Annotated[bool, typer.Option(help="A CPU run, where the target can train on a CPU.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the arms and a manifest "
                   "here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Plan paired arms from spec files: the fairness checks, budgets and pairs compared."""
    from whileai.cli.recipe import runnable
    from whileai.errors import SpecError

    skipped: list[str] = []
    try:
        chosen = specs or runnable(_bundled(), target, cpu, skipped)
        plan = make_plan(chosen, baseline, pair or [], repeats, budget, target, cpu, out)
        plan["skipped"] = skipped
    except SpecError as e:
        from whileai.cli.fail import fail

        fail(e)
    if as_json:
        print(json.dumps(plan, indent=1))
        return
    from whileai.cli.pairs import plan_lines
    from whileai.report.wrap import fit

    # whole words a line, wrapped to the terminal: the URL and keys stay copyable
    print("\n".join(fit([f"note: {line}" for line in skipped], hang="  ")), end="\n" if skipped else "")
    print("\n".join(fit(plan_lines({n: a["steps"] for n, a in plan["arms"].items()},
                                   {n: a["per_step"] for n, a in plan["arms"].items()},
                                   [tuple(p) for p in plan["pairs"]], None))))
    if plan["budget"]:
        print(f"budget matched: every arm's steps set to spend {plan['budget']}")
    if out is not None:
        print(f"wrote {len(plan['arms'])} arm folder(s) and {plan['manifest']}")


def _bundled() -> list[Path]:
    """The bundled examples/*.toml (GRPO, OPD, OPSD, SFT): the arms when none are named. An
    editable install finds them beside the package; `pip install .` in a clone, in the clone."""
    from whileai.cli import pairs
    from whileai.errors import SpecError, raw

    for folder in (pairs.EXAMPLES, Path("examples")):
        found = sorted(folder.glob("*.toml"))
        if found:
            return found
    raise SpecError("SPEC", raw("none given"), "spec files, one per arm (the default, a clone's "
                    "examples/*.toml, is neither beside this install nor in this folder)")


def make_plan(specs: list[Path], baseline: str | None, pairs: list[str], repeats: int,
              budget: str | None, target: str, cpu: bool, out: Path | None) -> dict[str, Any]:
    from whileai.api import compile_all
    from whileai.cost.budget import check_matched, parse_budget, per_step, steps_of
    from whileai.files.names import arm_group
    from whileai.launch.arms import load_arms, match_budget, repeat
    from whileai.targets import registry

    def compile(name: str, r: Any) -> Any:  # an arm's files named as its spec's (whileai.files.names)
        return compile_all([r], target, names=[arm_group(name)], cpu=cpu)[0]

    registry.get(target)  # an unknown target: one line, before any arm is compiled
    if out is not None:
        from whileai.files.writable import probe

        probe(out, "--out")  # before any arm is compiled
    matched = parse_budget(budget) if budget is not None else None
    arms = load_arms(specs, baseline=baseline, pairs=pairs)
    runs = dict(arms.runs)
    if matched is not None:
        runs = match_budget(runs, matched, lambda r: per_step(compile_all([r], target, cpu=cpu)[0]))
    compiled = {n: compile(n, r) for n, r in repeat(runs, repeats).items()}
    check_matched(compiled, matched)
    plan: dict[str, Any] = {
        "baseline": arms.baseline, "pairs": [list(p) for p in arms.pairs],
        "budget": str(matched) if matched else None, "manifest": None,
        "arms": {n: {"spec": str(arms.paths[arm_group(n)]), "method": c.run.method.type,
                     "steps": steps_of(c), "seed": c.run.seed, "per_step": per_step(c)}
                 for n, c in compiled.items()},
    }
    if out is not None:
        from whileai.launch.manifest import plan as write_plan

        meta = {"baseline": arms.baseline, "comparisons": plan["pairs"], "budget": plan["budget"]}
        try:
            m = write_plan(compiled, out.name or "arms", out, meta=meta)
        except OSError as e:
            from whileai.files.writable import out_error

            raise out_error(e) from None
        plan["manifest"] = str(m.path)
    return plan


__all__ = ["arms_cmd", "make_plan"]
