"""The paired-arms pipeline every target's recipe shares (whileai.cli.recipe is its face): the
arms as the target's launcher runs them, their steps set, each compiled, and the manifest specs.

    prep, compiled = compile_arms(target, target.launcher, arms, args)
    specs = arm_specs(target.launcher, compiled, prep, arms.runs[arms.baseline])
    m = plan(specs, tag, out, meta=...)          # whileai.launch.manifest

Pure but for the tiny models' cache folder it names (built later, by the face).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from whileai.cost.budget import check_matched, per_step
from whileai.files.names import main_file, spec_name
from whileai.launch.arms import Arms, match_budget, repeat, replace_run
from whileai.launch.local import LocalExecutor
from whileai.launch.manifest import ArmSpec, arm_from_compiled
from whileai.targets.compiled import in_context

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec
    from whileai.targets.base import Target
    from whileai.targets.compiled import Compiled
    from whileai.targets.run import Launcher, Prepared


def warmup(a: argparse.Namespace) -> dict[str, int]:
    """The tiny models' supervised warm-up steps: the teacher --warmup, the student a fifth."""
    return {"teacher": a.warmup, "student": a.warmup // 5}


def compile_arms(t: Target, L: Launcher, arms: Arms,
                 a: argparse.Namespace) -> tuple[Prepared, dict[str, Compiled]]:
    """The arms as the target runs them, their steps set (--steps, or --budget matched), each
    repeat compiled with what the recipe adds, in the context of the others (the GRPO arm)."""
    def models(base: RunSpec) -> dict[str, str]:
        from whileai.tasksets.builtin import task_texts
        from whileai.vocab import tiny

        texts, pairs = task_texts(base)
        return tiny.paths_in(tiny.cache_dir(tiny.cache_key(texts, pairs, warmup(a))))

    def planned(r: RunSpec) -> dict[str, Any]:  # a step's spend, as the target compiles the spec
        name = main_file(spec_name(None, r), t.shape.suffix)
        return per_step(t.compile(r, name=name, out=None, options=L.options))

    paths = sorted({str(p.resolve().parent) for p in arms.paths.values()})
    prep = L.prepare(arms.runs, arms.baseline, paths, models, a)
    runs = prep.runs
    if a.budget is not None:
        runs = match_budget(runs, a.budget, planned)
    elif a.steps:
        runs = {n: replace_run(r, steps=a.steps) for n, r in runs.items()}
    if prep.subs is not None:
        for n, r in runs.items():
            if r.steps != arms.runs[n].steps:
                why = f"--budget {a.budget}" if a.budget else "CPU-sized (--steps)"
                prep.subs.append({"arm": n, "field": "steps", "spec": arms.runs[n].steps,
                                  "run": r.steps, "reason": why})
    out = {n: L.compile(n, r, prep.subs) for n, r in repeat(runs, a.repeats).items()}
    out = dict(zip(out, in_context(list(out.values()), list(out)), strict=True))  # the GRPO arm is here
    check_matched(out, a.budget)
    return prep, out


def check_fits(t: Target, compiled: Mapping[str, Compiled], gpus: int, where: str) -> None:
    """Refuse (SpecError, one line) the first arm that does not fit the one machine it will run
    on, `gpus` GPUs (`where`: its name, e.g. the Modal container and its GPU list): the GPUs the
    target says the run needs on one node (its `machine` hook: the layout, plus a teacher's own
    GPUs), and one node."""
    from whileai.errors import SpecError, raw

    for n, c in compiled.items():
        need = t.machine(c.run, list(c.stages or (c,)))
        if need.nodes > 1 or need.gpus > gpus:
            many = f"{need.nodes} nodes of {need.gpus} GPUs" if need.nodes > 1 else f"{need.gpus} GPUs"
            why = need.gpus_why[1:-1] if need.gpus_why.startswith("(") else need.gpus_why
            raise SpecError("arms", raw(f"arm {n} needs {many} ({why})"),
                            f"an arm that fits the {gpus} GPUs of {where}",
                            hint="give it fewer gpus or a smaller teacher, or every arm a larger "
                            "container: WHILEAI_MODAL_GPUS=H100:8")


def arm_specs(L: Launcher, compiled: Mapping[str, Compiled], prep: Prepared,
              baseline: RunSpec) -> dict[str, ArmSpec]:
    """Each arm's manifest spec: its files (and those the target adds), and how it runs here."""
    from whileai.launch import runner

    specs = {}
    for n, c in compiled.items():
        call = L.call(c, prep)
        s = arm_from_compiled(n, c, argv=runner.call_argv(call.function, **call.kwargs) if call else None)
        if extra := L.files(c, n, baseline):  # scored as the pairs are
            s = s.model_copy(update={"files": dict(s.files) | extra})
        specs[n] = s
    return specs


def validate_where(t: Target, L: Launcher, a: argparse.Namespace) -> tuple[bool, str]:
    """Where --validate checks the arms (on Modal?) and the line that says so: `--on auto` (the
    default) is a Modal CPU container where a Modal token is configured (whileai.launch.token) and
    offline here otherwise; --rehearse runs here, so it keeps --validate here."""
    on = getattr(a, "on", None)
    if on is None:
        why = "its arms run on this machine" if L.app is None else "its Modal app has no dry run"
        return False, f"offline, here ({t.name}: {why}): {L.validates}"
    if on == "auto" and getattr(a, "rehearse", False):
        on = "local"
    if on == "auto":
        from whileai.launch.token import modal_token

        token = modal_token()
        if token is not None:
            return True, f"{t.name}'s own dry run in a Modal CPU container (a Modal token: {token})"
        return False, (f"offline, here (no Modal token: `modal token new`, or MODAL_TOKEN_ID): "
                       f"{L.validates}")
    if on == "modal":
        return True, f"{t.name}'s own dry run in a Modal CPU container (--on modal)"
    return False, f"offline, here (--on local): {L.validates}"


def substituted(subs: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], list[str]]:
    """Substitutions grouped: (field, spec value, run value, reason) -> arms."""
    out: dict[tuple[str, str, str, str], list[str]] = {}
    for s in subs:
        out.setdefault((s["field"], repr(s["spec"]), repr(s["run"]), s["reason"]), []).append(s["arm"])
    return out


def local_executor(L: Launcher, jobs: int, paths: list[str]) -> LocalExecutor:
    env = {}
    if jobs > 1 and "OMP_NUM_THREADS" not in os.environ:  # arms share the cores
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // jobs))
    if paths:  # the spec folders: a reward module named in a spec imports from there
        env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return LocalExecutor(env=env)


__all__ = ["arm_specs", "check_fits", "compile_arms", "local_executor", "substituted", "validate_where",
           "warmup"]
