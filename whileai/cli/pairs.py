"""Paired arms on the command line, shared by `whileai arms` and the recipe (whileai.cli.recipe):
the arm options and their parsing, the plan's and the results' lines, the local loop that runs arms
here, results.json with its plot, and the Ctrl-C guard every recipe runs under."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from whileai.cost.budget import KINDS, Budget, mismatch, parse_budget, planned
from whileai.errors import SpecError, raw
from whileai.launch.arms import Arms, load_arms
from whileai.launch.executor import collect, launch
from whileai.launch.local import LocalExecutor
from whileai.launch.manifest import MANIFEST, Manifest, load_manifest
from whileai.results.plot import AXES
from whileai.targets.run import positive
from whileai.words import counted

if TYPE_CHECKING:
    pass

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
X_CHOICES = tuple(AXES)


class Parser(argparse.ArgumentParser):
    """argparse with the project's error shape: one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def parser(doc: str | None) -> Parser:
    """The recipe's parser, described by its docstring's first paragraph (whole sentences)."""
    return Parser(description=(doc or "").strip().split("\n\n")[0],
                  formatter_class=argparse.RawDescriptionHelpFormatter)


def budget(text: str) -> Budget:
    try:
        return parse_budget(text)
    except SpecError as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; {e.allowed}") from None


def axes(text: str) -> tuple[str, ...]:
    xs = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in xs if x not in X_CHOICES]
    if bad or not xs:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; a comma list of {', '.join(X_CHOICES)}")
    return xs


def add_arm_options(ap: argparse.ArgumentParser, *, default_tag: str) -> None:
    ap.add_argument("specs", nargs="*", type=Path, metavar="SPEC",
                    help="spec files as arms (default: the bundled examples/*.toml)")
    ap.add_argument("--arms", default=None, help="comma-separated bundled arms (examples/<name>.toml: "
                    f"{', '.join(bundled())}) or spec files; default: all bundled")
    ap.add_argument("--baseline", default=None, help="the arm every other is compared against "
                    "(a name or a spec file; default: the GRPO arm)")
    ap.add_argument("--pair", action="append", default=[], metavar="A:B",
                    help="also compare arm A against arm B (repeatable); opd:sft is added by default "
                    "when both exist")
    ap.add_argument("--repeats", type=positive, default=1, help="runs per arm, seeds seed..seed+N-1 "
                    "(a noise band needs 2 or more)")
    ap.add_argument("--budget", type=budget, default=None, metavar="KIND=N",
                    help="set each arm's steps to spend the same: "
                    + "; ".join(f"{k}: {v}" for k, v in KINDS.items()))
    ap.add_argument("--tag", default=default_tag, help="run tag; the folder is <out>/<tag>")
    ap.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of the run folder")
    ap.add_argument("--x", type=axes, default=("step", "rollouts"), metavar="X,...",
                    help=f"the plot's x axes: {', '.join(X_CHOICES)} (default step,rollouts)")
    ap.add_argument("--relaunch-failed", action="store_true", help="launch: spawn the arms that "
                    "failed again (a second launch skips arms already pending or done)")
    ap.add_argument("--partial", action="store_true", help="--collect: write a comparison of the "
                    "finished arms while others never ran or still run (marked partial)")
    ap.add_argument("--strict", action="store_true", help="every compile warning is an error: "
                    "exit 2 naming the first, before anything is written")


def bundled() -> list[str]:
    from whileai.files.names import spec_name

    return sorted(spec_name(p) for p in EXAMPLES.glob("*.toml"))


def spec_paths(a: argparse.Namespace) -> list[Path]:
    """Positional spec files, then --arms (bundled names or files); default: every bundled spec."""
    paths = list(a.specs)
    for item in [x.strip() for x in (a.arms or "").split(",") if x.strip()]:
        if item.endswith(".toml"):
            paths.append(Path(item))
        elif item in bundled():
            paths.append(EXAMPLES / f"{item}.toml")
        else:
            raise SpecError("--arms", item, f"a bundled arm ({', '.join(bundled())}) or a .toml spec file")
    for p in paths:
        if not p.is_file():
            raise SpecError("arms", str(p), "an existing spec file")
    if a.arms is not None and not paths:
        raise SpecError("--arms", a.arms,
                        f"a comma list of bundled arms ({', '.join(bundled())}) or spec files")
    return paths or [EXAMPLES / f"{n}.toml" for n in bundled()]


def arms_from_args(a: argparse.Namespace) -> Arms:
    """The arms, the baseline (an arm's name or a spec file) and the pairs the options name."""
    return load_arms(spec_paths(a), baseline=a.baseline, pairs=a.pair)


def manifest_to_collect(folder: Path, tag: str) -> Manifest:
    """The manifest `--collect` reads; SpecError when there is none or nothing was launched."""
    if not (folder / MANIFEST).is_file():
        known = sorted(p.parent.name for p in folder.parent.glob(f"*/{MANIFEST}"))
        raise SpecError("--tag", tag, f"a tag launched before under {folder.parent}: "
                        + (", ".join(known) or "none yet (launch first)"),
                        hint=f"no {folder / MANIFEST}")
    m = load_manifest(folder)
    if all(arm.state == "planned" for arm in m.arms.values()):
        raise SpecError("--collect", raw(f"tag {tag!r} has {len(m.arms)} arm(s), none launched"),
                        "collect after a launch (run the recipe without --dry-run/--collect first)")
    return m


def plan_lines(steps: Mapping[str, int], per_step: Mapping[str, Mapping[str, Any]],
               pairs: list[tuple[str, str]], matched: Budget | None) -> list[str]:
    """The plan: each arm's planned spend, the pairs compared, a warning when budgets differ > 2x."""
    out = [f"{'arm':<14} {'steps':>6} {'rollouts/step':>14} {'rollouts':>9} {'tokens (cap)':>13}  teacher"]
    totals: dict[str, dict[str, float]] = {k: {} for k in KINDS}
    for n, s in steps.items():
        p = per_step[n]
        for k in KINDS:
            totals[k][n] = s * planned(dict(p), k)
        out.append(f"{n:<14} {s:>6} {p['rollouts']:>14} {totals['rollouts'][n]:>9,.0f} "
                   f"{totals['tokens'][n]:>13,.0f}  {p.get('teacher') or '-'}")
    out.append("compared: " + ", ".join(f"{x} vs {y}" for x, y in pairs))
    if matched is not None:
        out.append(f"budget matched: every arm's steps set to spend {matched}")
    groups = {n: v for n, v in totals["rollouts"].items() if "@" not in n}
    seen = {n: steps[n] * per_step[n]["prompts"] for n in groups
            if isinstance(per_step[n].get("prompts"), int)}
    drawn = {n: per_step[n]["samples"] for n in groups}
    if (w := mismatch("rollouts", groups, prompts=seen, samples=drawn)) is not None:
        out.append(f"warning: {w}")
    return out


def result_lines(res: Mapping[str, Any]) -> list[str]:
    """A line per arm (final eval, spend, health), per comparison, per warning."""
    out = []
    for name, a in res["arms"].items():
        ev = ", ".join(f"{s}: {'nan' if v is None else f'{v:.3f}'}"
                       for s, v in a["series"].get("eval_reward", []))
        b = a.get("budget") or {}
        spend = ", ".join(f"{_num(b[q]['value'])} {label} ({b[q]['source']})" for q, label in (
            ("rollouts", "rollouts"), ("sampled_tokens", "tokens"), ("teacher_tokens", "teacher tokens"),
            ("device_seconds", f"{(b.get('device') or 'device').upper()}-s")) if b.get(q))
        out.append(f"{name:<10} {a['state']:<6} eval reward {{{ev}}}; spent {spend}")
        out += [f"  {h['id']}: {h['message']}" for h in a.get("health", [])]
    for d in res.get("comparisons", []):
        ci = "none" if d["ci95"] is None else f"[{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"
        delta = "none" if d["delta"] is None else f"{d['delta']:+.4f}"
        out.append(f"{d['arm']} vs {d['baseline']}: delta {delta}, 95% CI {ci}, p {d.get('p_text')}, "
                   f"{counted(d['n_tasks'], 'tasks')} ({'paired by task' if d['paired'] else 'unpaired'}): "
                   f"{d['verdict']}")
        if d.get("verdict_reason"):
            out.append(f"  why: {d['verdict_reason']}")
    stats = res.get("stats") or {}
    if stats:
        out.append(f"statistics: {stats['bootstrap_draws']} bootstrap draws, up to "
                   f"{stats['permutations']} permutations, seed {stats['seed']}; noise band: "
                   f"{stats['noise_band']}")
        if stats.get("verdict_rule"):
            out.append(f"verdict rule: {stats['verdict_rule']}")
    if res.get("holdout"):
        out.append(f"holdout: {res['holdout']}")
    if res.get("models"):
        out.append(f"models: {res['models']}")
    out += [f"warning: {w}" for w in res.get("warnings", [])]
    return out


def run_local(m: Manifest, be: LocalExecutor, names: list[str], jobs: int, relaunch: bool,
              console: Any) -> None:
    """Launch up to `jobs` arms at a time; one progress bar per arm (from each run's
    progress.json) until none is pending."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    cols = (TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    seen: set[str] = set()
    with Progress(*cols, console=console) as bars:
        def log(msg: str) -> None:  # collect() logs its summary at every poll: show each line once
            if msg not in seen:
                seen.add(msg)
                bars.console.print(msg)

        ids, queue = {n: bars.add_task(n, total=None) for n in names}, list(names)
        try:
            _loop(m, be, names, jobs, relaunch, bars, ids, queue, log)
        except KeyboardInterrupt:  # Ctrl-C: the arms started here are stopped, not left detached
            from whileai.launch.interrupt import stop_local

            raise stop_local(m, be) from None


def _loop(m: Manifest, be: LocalExecutor, names: list[str], jobs: int, relaunch: bool, bars: Any,
          ids: dict[str, Any], queue: list[str], log: Any) -> None:
    from whileai.targets.run import PROGRESS, read_progress

    while queue or any(m.arms[n].state == "pending" for n in names):
        while queue and sum(a.state == "pending" for a in m.arms.values()) < jobs:
            arm = m.arms[queue.pop(0)]
            if arm.state == "planned" or (arm.state == "failed" and relaunch):
                (Path(arm.dir) / PROGRESS).unlink(missing_ok=True)
            launch(m, be, arms=[arm.spec.name], relaunch_failed=relaunch, log=log)
        collect(m, be, log=log)
        for n in names:
            state, p = m.arms[n].state, read_progress(m.arms[n].dir)
            if state == "pending" and p:
                bars.update(ids[n], description=f"{n}: {p['phase']}", completed=p["done"],
                            total=p["total"])
            elif state in ("done", "failed"):
                bars.update(ids[n], description=f"{n}: {state}", total=1, completed=1)
        time.sleep(0.5)


def write_comparison(m: Manifest, out: Path, xs: tuple[str, ...]) -> dict[str, Any]:
    """results.json and results.png of the manifest's arms in `out` (a comparison of finished
    arms while others run is marked partial); returns the results."""
    from whileai.launch.interrupt import mark_partial
    from whileai.results import build, plot, write_results

    res = mark_partial(build(m), m)
    write_results(out / "results.json", res)
    plot(res, out / "results.png", xs=xs)
    return res


def print_results(m: Manifest, out: Path, xs: tuple[str, ...]) -> None:
    """write_comparison, then its lines and the files written, on stdout."""
    res = write_comparison(m, out, xs)
    from whileai.report.wrap import fit

    print("\n".join(fit(result_lines(res))))
    print(f"wrote {out / 'results.json'} and {out / 'results.png'}")


def guarded(body: Callable[[list[str] | None], int], argv: list[str] | None, app: str = "whileai") -> int:
    """A recipe's main: Ctrl-C anywhere ends in one line (arms spawned on the Modal app `app`
    are listed with how to stop them) and the interrupted exit code."""
    from whileai.launch.interrupt import EXIT_INTERRUPTED, Interrupted, interrupted_line

    try:
        return body(argv)
    except Interrupted as e:
        print(interrupted_line(e, app), file=sys.stderr)
    except KeyboardInterrupt:
        print(interrupted_line(None), file=sys.stderr)
    return EXIT_INTERRUPTED


def _num(v: float | None) -> str:
    return "?" if v is None else f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


# the recipe


