"""The paired-arms recipe, once for every target: recipes/04-train/<target>/run.py is
`main("<target>", __doc__)`. It asks the target's launcher (whileai.targets.run.Launcher,
through the registry) what differs: the arms' specs as it runs them, what it adds to each
arm, its own --validate, and where arms run (a local process here, or its Modal app).

    python run.py --dry-run      # write the arm folders and the manifest, print the plan and reports
    python run.py --validate     # ... and the target's own check of each arm folder: on a Modal CPU
                                 # container where a Modal token is configured, else offline (it says)
    python run.py                # launch every arm (a second launch skips pending or done ones)
    python run.py --collect      # exit 3 while any arm runs; then results.json + results.png

Bad input anywhere is a SpecError, printed as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.cli.pairs import (
    EXAMPLES,
    Parser,
    add_arm_options,
    arms_from_args,
    bundled,
    guarded,
    manifest_to_collect,
    parser,
    plan_lines,
    print_results,
    result_lines,
    run_local,
    write_comparison,
)
from whileai.errors import SpecError
from whileai.launch.arms import Arms, load_arms
from whileai.launch.executor import collect, container_gpus, launch, modal_gpus
from whileai.launch.manifest import Manifest
from whileai.launch.recipe import (
    arm_specs,
    check_fits,
    compile_arms,
    local_executor,
    substituted,
    validate_where,
    warmup,
)
from whileai.targets.run import positive

if TYPE_CHECKING:
    from whileai.targets.base import Target
    from whileai.targets.compiled import Compiled
    from whileai.targets.run import Launcher, Prepared

def main(target: str, doc: str | None = None, argv: list[str] | None = None) -> int:
    """The paired-arms recipe for `target` (a registry name): recipes/04-train/<target>/run.py.
    Ctrl-C anywhere ends in one line (local arms stopped; arms spawned on Modal listed with how
    to stop them)."""
    from whileai.targets import registry

    try:
        t = registry.get(target)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    launcher = t.launcher
    if launcher is None:
        print(f"error: {t.name} has no paired-arms run (its target has no launcher)", file=sys.stderr)
        return 2
    app = launcher.app.name if launcher.app is not None else "whileai"
    return guarded(lambda av: _main(t, launcher, doc, av), argv, app)


def recipe_parser(t: Target, L: Launcher, doc: str | None) -> Parser:
    """The shared options, then the ones this target's run has (its own, --jobs for arms run here,
    --warmup for tiny models, --on where its Modal app can dry-run, --rehearse where it rehearses)."""
    ap = parser(doc)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write the arm folders and the manifest, "
                      "print the reports")
    mode.add_argument("--validate", action="store_true", help=L.validates)
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    add_arm_options(ap, default_tag=L.tag)
    ap.add_argument("--steps", type=positive, default=L.steps, help="every arm's steps (default: "
                    + (f"{L.steps}" if L.steps else "its spec's") + "; --budget sets them instead)")
    L.add_options(ap)
    if L.tiny:
        ap.add_argument("--warmup", type=int, default=300, help="teacher SFT steps (student: a fifth)")
    if L.app is None:
        ap.add_argument("--jobs", type=positive, default=3, help="arms trained at the same time")
    if L.preflight:
        ap.add_argument("--no-preflight", action="store_true", help=L.preflight)
    if L.app is not None and L.app.check is not None:
        ap.add_argument("--on", choices=["auto", "local", "modal"], default="auto",
                        help=f"--validate: {t.name} itself in a Modal CPU container (modal), offline "
                        "here (local), or modal where a Modal token is configured (auto, the default)")
    if t.rehearsal is not None:
        ap.add_argument("--rehearse", action="store_true", help=f"--validate: also run {t.name}'s own "
                        "launcher for --rehearse-steps steps on this CPU with stand-in servers and "
                        "trainer (whileai rehearse)")
        ap.add_argument("--rehearse-steps", type=positive, default=2, help="--rehearse: steps per arm")
        ap.add_argument("--rehearse-timeout", type=positive, default=900, help="--rehearse: seconds per arm")
    return ap


def _main(t: Target, L: Launcher, doc: str | None, argv: list[str] | None) -> int:
    from whileai.files.writable import out_error, probe
    from whileai.launch import EXIT_INFRA, InfraError, plan
    from whileai.rules.honoured import strict

    a = recipe_parser(t, L, doc).parse_args(argv)
    for k, v in L.env.items():
        os.environ.setdefault(k, v)
    on_modal, where = validate_where(t, L, a)
    if getattr(a, "rehearse", False) and not (a.validate and not on_modal):
        print("error: --rehearse = True: allowed with --validate (on local) only", file=sys.stderr)
        return 2
    out = a.out / a.tag
    if L.app is None:  # arms run here, in their folders
        out = out.resolve()
    try:
        if a.collect:
            m = manifest_to_collect(out, a.tag)
        else:
            probe(a.out / a.tag, "--out")  # writable before anything is compiled or built
            arms = recipe_arms(t, L, a)
            prep, compiled = compile_arms(t, L, arms, a)
            if a.strict:  # every warning is an error (whileai.honoured)
                strict(compiled.values())
            if not a.dry_run:  # after the input's own errors, before anything is written
                L.require(a.validate)
                if L.app is not None:  # each arm runs in one Modal container: it must fit it
                    choices = modal_gpus()
                    check_fits(t, compiled, container_gpus(choices),
                               f"its Modal container ({','.join(choices)})")
            specs = arm_specs(L, compiled, prep, arms.runs[arms.baseline])
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.collect:
        return _collect(t, L, m, out, a)

    base = compiled[arms.baseline].run
    shared: dict[str, Any] = {"baseline": arms.baseline, "comparisons": [list(p) for p in arms.pairs],
              "budget": str(a.budget) if a.budget else None}
    if L.tiny:
        shared["warmup_steps"] = warmup(a)
    meta = L.meta(base, prep) | shared | prep.meta
    try:
        m = plan(specs, a.tag, out, meta=meta)
    except OSError as e:
        print(f"error: {out_error(e)}", file=sys.stderr)
        return 2
    say = _say(L)
    if prep.subs is not None:
        for (field, old, new, why), names in substituted(prep.subs).items():
            who = "every arm" if len(names) == len(arms.runs) else ", ".join(names)
            say(f"substituted {field}: {old} -> {new} ({who}: {why})")
    for name in compiled if L.app is None else m.arms:  # arms run here: with their command
        arm = m.arms[name]
        run = f"  $ {' && '.join(compiled[name].commands)}" if L.app is None else ""
        say(f"{name}: {Path(arm.dir) / (arm.spec.main or '')} [{arm.state}]{run}")
    from whileai.cost.budget import per_step, steps_of

    for line in plan_lines({n: steps_of(c) for n, c in compiled.items()},
                           {n: per_step(c) for n, c in compiled.items()}, list(arms.pairs), a.budget):
        say(line)
    if a.dry_run:
        from whileai.report.text import render_text
        from whileai.report.wrap import width
        from whileai.targets.compiled import as_written

        for n, c in compiled.items():  # the reports name the files just written
            print(f"\n{render_text(as_written(c, m.arms[n].dir), width())}")
        return 0
    if a.validate:
        print(f"--validate: {where}")
    if a.validate and not on_modal:
        code = L.validate({n: Path(arm.dir) for n, arm in m.arms.items() if n in compiled}, compiled, prep)
        if getattr(a, "rehearse", False) and code == 0:
            try:
                code = rehearse_arms(compiled, a.rehearse_steps, float(a.rehearse_timeout))
            except SpecError as e:
                print(f"error: {e}", file=sys.stderr)
                return 2
        return code
    if L.app is None:
        return _run_here(t, L, m, compiled, prep, arms.runs[arms.baseline], out, a)
    from whileai.launch import modal_module
    from whileai.launch.interrupt import cancel_remote

    if L.app.deploy_env is not None:  # what the arms need of the image, read where it is defined
        os.environ.update(L.app.deploy_env(compiled))
    try:
        app = modal_module(t.name)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        if a.validate:
            results = app.validate_arms(m)
            for n, r in results.items():
                print(f"{n}: {'ok' if r.get('ok') else 'REJECTED'} ({t.name}'s own check on Modal)")
                if not r.get("ok"):
                    print(str(r.get("output")), file=sys.stderr)
            return 1 if any(not r.get("ok") for r in results.values()) else 0
        if L.app.note:
            print(L.app.note)
        if L.preflight and not a.no_preflight:
            from whileai.preflight.gate import gate

            if not gate(compiled, t.name, where="modal"):
                return 1
        try:
            m.meta["modal"] = app.deploy()  # --collect asks this app and volume, whatever the env
        except app.BuildError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        m.save()
        ex = app.ModalExecutor.of(m)
        try:
            launch(m, ex, arms=list(compiled), relaunch_failed=a.relaunch_failed)
        except KeyboardInterrupt:  # this tag's calls cancelled, one by one (never the app)
            raise cancel_remote(m, ex) from None
    except InfraError as e:
        print(f"Modal not reachable: {e}", file=sys.stderr)
        return EXIT_INFRA
    print(f"spawned; collect with: python {sys.argv[0]} --collect --tag {a.tag}")
    return 0


def recipe_arms(t: Target, L: Launcher, a: argparse.Namespace) -> Arms:
    """The arms: the user's specs, or the bundled ones the target runs (the others named and
    skipped with the target's reason)."""
    if a.specs or a.arms is not None:
        return arms_from_args(a)
    skipped: list[str] = []
    paths = runnable([EXAMPLES / f"{n}.toml" for n in bundled()], t.name, L.options.cpu, skipped)
    for line in skipped:
        print(f"note: {line}")
    return load_arms(paths, baseline=a.baseline, pairs=a.pair)


def runnable(bundled: list[Path], target: str, cpu: bool, skipped: list[str]) -> list[Path]:
    """The bundled arms the target can run. A method the target refuses (verl 0.9.1 has no OPSD)
    drops that arm with its one-line reason in `skipped`; a spec the user names is never dropped:
    its refusal is the command's error."""
    from whileai.api import compile
    from whileai.errors import SpecError
    from whileai.spec.load import load_spec
    from whileai.targets import registry

    registry.get(target)  # an unknown target: one line, before any arm is compiled
    kept = []
    for p in bundled:
        try:
            compile(load_spec(p), target, cpu=cpu)
        except SpecError as e:
            if e.field != "method.type":
                raise
            skipped.append(f"bundled arm {p.name} skipped: {e}")
            continue
        kept.append(p)
    return kept


def _say(L: Launcher) -> Callable[[str], None]:
    """Lines of the plan: on the console (rich, no markup) where arms run here, else print."""
    if L.app is not None:
        return print
    console = _console()
    return lambda line: console.print(line, soft_wrap=True, highlight=False, markup=False)


def _console() -> Any:
    from rich.console import Console

    return Console()


def _run_here(t: Target, L: Launcher, m: Manifest, compiled: Mapping[str, Compiled], prep: Prepared,
              base: Any, out: Path, a: argparse.Namespace) -> int:
    """Arms run here: the tiny models built, the preflight, up to --jobs arms at a time, then the
    comparison."""
    console = _console()
    if L.tiny:
        build_models(console, base, a)
    if L.preflight and not a.no_preflight and not gate_here(t, L, compiled, out, console):
        return 1
    run_local(m, local_executor(L, a.jobs, prep.paths), list(compiled), a.jobs, a.relaunch_failed, console)
    return report(m, out, a.x, console)


def gate_here(t: Target, L: Launcher, compiled: Mapping[str, Compiled], out: Path, console: Any) -> bool:
    from whileai.preflight.gate import gate

    return gate(compiled, t.name, cpu=L.options.cpu, output_dir=str(out),
                say=lambda line: console.print(line, soft_wrap=True, highlight=False, markup=False))


def build_models(console: Any, base: Any, a: argparse.Namespace) -> None:
    """The tiny models for the baseline spec's tasks, built once and cached."""
    from transformers.utils import logging

    from whileai.tasksets.builtin import task_texts
    from whileai.vocab import tiny

    logging.disable_progress_bar()
    start = time.monotonic()
    texts, pairs = task_texts(base)
    with console.status(f"tiny models: building or reusing (warm-up steps {warmup(a)})"):
        paths, built = tiny.cached(texts, pairs, warmup(a))
    where = Path(paths["student"]).parent
    how = f"built in {time.monotonic() - start:.0f} s" if built else "cached: reused, not rebuilt"
    console.print(f"models: {where} ({how})")


def report(m: Manifest, out: Path, xs: tuple[str, ...], console: Any) -> int:
    """The comparison on the console; 1 when an arm failed."""
    res = write_comparison(m, out, xs)
    for line in result_lines(res):
        console.print(line, soft_wrap=True, style="yellow" if line.startswith("warning") else None)
    console.print(f"wrote {out / 'results.json'} and {out / 'results.png'}")
    return 1 if any(arm["state"] == "failed" for arm in res["arms"].values()) else 0


def _collect(t: Target, L: Launcher, m: Manifest, out: Path, a: argparse.Namespace) -> int:
    from whileai.launch import EXIT_INFRA, InfraError, modal_module
    from whileai.launch.interrupt import collect_gate

    try:
        ex = local_executor(L, a.jobs, []) if L.app is None else modal_module(t.name).ModalExecutor.of(m)
        code = collect(m, ex)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except InfraError as e:
        print(f"Modal not reachable: {e}", file=sys.stderr)
        return EXIT_INFRA
    code, note = collect_gate(m, a.partial) if code in (0, 3) else (code, None)
    if note:
        print(note, file=sys.stderr)
    if code != 0:
        return code
    if L.app is None:
        return report(m, out, a.x, _console())
    print_results(m, out, a.x)
    return code


def rehearse_arms(arms: Mapping[str, Compiled], steps: int, timeout: float) -> int:
    """`whileai rehearse` each arm through its target's rehearsal hook, one after the other (the
    stand-ins share ports): 1 if any fails."""
    from whileai.targets import registry

    bad = 0
    for name, c in arms.items():
        r = registry.get(c.target).rehearsal
        if r is None:  # the option is offered only where the target has a rehearsal
            raise SpecError("--rehearse", c.target, "a target with a rehearsal")
        print(f"\nrehearsing {name} ({steps} steps on the CPU)")
        result = r.rehearse(r.stages(c), python=None, steps=steps, timeout=timeout, keep=None,
                            say=lambda line: print(line, flush=True))
        print("\n".join(r.lines(result)))
        bad += not result.ok
    return 1 if bad else 0



__all__ = ["main", "recipe_arms", "recipe_parser", "rehearse_arms", "runnable"]
