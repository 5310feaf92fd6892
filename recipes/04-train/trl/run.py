"""Paired arms from spec files with TRL, trained here on the CPU on tiny local models; by default
every bundled example (examples/*.toml: GRPO, OPD, OPSD and SFT on reverse-text, the article's
comparison) against the GRPO arm, and OPD against SFT (on- vs off-policy distillation).

    python recipes/04-train/trl/run.py              # train and score every arm, then
                                                    # runs/trl-tiny/results.json + results.png
    python recipes/04-train/trl/run.py --dry-run    # write the run dirs, print the plan and reports
    python recipes/04-train/trl/run.py --validate   # ... and check each with TRL's own parser
    python recipes/04-train/trl/run.py --collect    # poll arms launched before; exit 3 while any runs
    python recipes/04-train/trl/run.py my/*.toml --budget rollouts=640 --repeats 2 --tag mine

Any spec runs here: its student becomes the tiny student, an OPD (or SFT) teacher the tiny
teacher, and --steps/--prompts/--max-tokens/--samples/--holdout/--lr size it for a CPU; every
replacement is printed and kept in results.json (`substitutions`). Tasks must be on this
machine: a built-in taskset or the spec's own `data` (scored with the baseline's `reward`).
Arms, --baseline, --pair, --repeats and --budget work as in the prime-rl recipe.
Options: --steps 40 --prompts 4 --max-tokens 64 --samples 4 --holdout 32 --warmup 300
         --lr 5e-4 --jobs 3 --tag trl-tiny --out runs --x step,rollouts --relaunch-failed
The tokenizer and the random student and teacher (whileai.launch.tiny) are built once and cached
(~/.cache/whileai/tiny/<key>, or $WHILEAI_CACHE); --warmup gives the teacher that many
supervised steps on the train split (the student a fifth) so rewards start above zero. Each arm
folder is what `whileai compile --backend trl --cpu` writes; whileai.launch.trl_eval runs its
command and scores the base model, each checkpoint and the final model on data/test.jsonl.
Before training, `whileai preflight` checks each arm's models, memory and disk (--no-preflight
skips it). A second launch skips arms done or running. Exit codes: 0 done, 1 an arm or the
preflight failed, 2 bad input (one line), 3 still running.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

import whileai as wai
from whileai.cli.recipe import (
    add_arm_options,
    arms_from_args,
    guarded,
    manifest_to_collect,
    parser,
    plan_lines,
    positive,
    result_lines,
    run_local,
    write_comparison,
)
from whileai.cost.budget import check_matched, per_step, steps_of
from whileai.errors import SpecError, raw
from whileai.files.writable import out_error, probe
from whileai.launch import LocalBackend, Manifest, arm_from_compiled, call_argv, collect, plan, tiny
from whileai.launch.arms import Arms, match_budget, repeat, replace_run
from whileai.launch.interrupt import collect_gate
from whileai.launch.offline import TINY, Offline, metric, task_texts
from whileai.preflight.gate import gate
from whileai.report.text import render_text
from whileai.report.wrap import width
from whileai.rules.honoured import strict
from whileai.targets.compiled import as_written, in_context

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "TOKENIZERS_PARALLELISM": "false"}
EVAL = "whileai.launch.trl_eval:train_and_evaluate"
# trl_eval scores the checkpoints, the same way for every arm: save a few, evaluate none in TRL
RECIPE_OVERRIDES = {"gradient_checkpointing": False, "logging_steps": 1, "report_to": "none",
                    "save_strategy": "steps", "save_only_model": True, "eval_strategy": "no"}
console = Console()


def compile_arm(name: str, run: wai.RunSpec, subs: list[dict[str, Any]]) -> wai.Compiled:
    """A checkpoint every quarter of the steps, each scored afterwards by trl_eval."""
    interval = max(1, run.steps // 4)
    forced = RECIPE_OVERRIDES | {"save_steps": interval}
    for k, v in forced.items():
        if k in run.overrides and run.overrides[k] != v:
            subs.append({"arm": name, "field": f"overrides.{k}", "spec": run.overrides[k], "run": v,
                         "reason": "the recipe saves checkpoints and trl_eval scores them"})
    run = replace_run(run, eval={"interval": interval, "examples": run.eval.examples},
                      overrides=dict(run.overrides) | forced)
    c = wai.compile(run, "trl", cpu=True)
    # eval_strategy 'no' is the recipe's: trl_eval scores the holdout instead, so eval-never-runs
    # (no holdout score) is met here and said as a note
    return replace(c, warnings=tuple(w for w in c.warnings if w.rule != "eval-never-runs"),
                   notes=(*c.notes, "eval-never-runs is met: the recipe turns TRL's own evaluation off "
                          f"and whileai.launch.trl_eval scores the base model, every checkpoint (each "
                          f"{interval} steps) and the final model on data/test.jsonl"))


def offline_arms(a: Any, arms: Arms) -> tuple[dict[str, wai.Compiled], dict[str, Any], dict[str, Any]]:
    """Compiled arms on the tiny models, the manifest meta, and what building the models needs."""
    off = Offline(prompts=a.prompts, max_tokens=a.max_tokens, samples=a.samples, holdout=a.holdout, lr=a.lr)
    for n, r in arms.runs.items():
        off.check(n, r)
    base = arms.runs[arms.baseline]
    if base.data is not None and base.reward is None:
        raise SpecError("reward", None, "a 'module.function' in the baseline spec: arms on your own "
                        "data are scored on its holdout with the baseline's reward",
                        hint=f"baseline {arms.baseline}")
    texts, pairs = task_texts(base)
    warm = {"teacher": a.warmup, "student": a.warmup // 5}
    models = tiny.paths_in(tiny.cache_dir(tiny.cache_key(texts, pairs, warm)))
    runs: dict[str, wai.RunSpec] = {}
    subs: list[dict[str, Any]] = []
    for n, r in arms.runs.items():
        runs[n], s = off.apply(n, r, models)
        subs += s
    if a.budget is not None:
        runs = match_budget(runs, a.budget, lambda r: per_step(wai.compile(r, "trl", cpu=True)))
    else:
        runs = {n: replace_run(r, steps=a.steps) for n, r in runs.items()}
    for n, r in runs.items():
        if r.steps != arms.runs[n].steps:
            why = f"--budget {a.budget}" if a.budget else "CPU-sized (--steps)"
            subs.append({"arm": n, "field": "steps", "spec": arms.runs[n].steps, "run": r.steps,
                         "reason": why})
    compiled = {n: compile_arm(n, r, subs) for n, r in repeat(runs, a.repeats).items()}
    compiled = dict(zip(compiled, in_context(list(compiled.values()), list(compiled)), strict=True))
    check_matched(compiled, a.budget)
    ts = compiled[arms.baseline].run
    held = (f"{ts.taskset} holdout" if ts.data is None else f"{Path(ts.data).name} test split")
    meta = {"holdout": f"{held} ({ts.eval.examples} tasks)", "metric": metric(ts, base.reward),
            "models": TINY, "warmup_steps": warm, "learning_rate": a.lr, "device": "cpu",
            "baseline": arms.baseline, "comparisons": [list(p) for p in arms.pairs],
            "budget": str(a.budget) if a.budget else None, "substitutions": subs,
            "models_dir": str(Path(models["student"]).parent)}
    need = {"texts": texts, "pairs": pairs, "warm": warm, "reward": base.reward,
            "paths": sorted({str(p.resolve().parent) for p in arms.paths.values()})}
    return compiled, meta, need


def substituted(subs: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], list[str]]:
    """Substitutions grouped: (field, spec value, run value, reason) -> arms."""
    out: dict[tuple[str, str, str, str], list[str]] = {}
    for s in subs:
        out.setdefault((s["field"], repr(s["spec"]), repr(s["run"]), s["reason"]), []).append(s["arm"])
    return out


def needs_extras(validate: bool) -> None:
    """Training needs the trl extra (and the results extra for results.json and the plot);
    --validate needs TRL's own parser: one line before anything is written or built, not a
    traceback afterwards. --dry-run and --collect need neither."""
    from importlib.util import find_spec

    need = {"trl": ("torch", "transformers", "trl")}
    if not validate:
        need["results"] = ("numpy", "scipy", "matplotlib")
    gone = {extra: [m for m in mods if find_spec(m) is None] for extra, mods in need.items()}
    gone = {extra: mods for extra, mods in gone.items() if mods}
    if gone:
        what = ", ".join(m for mods in gone.values() for m in mods)
        raise SpecError("--validate" if validate else "training", raw(f"{what} not installed"),
                        f"pip install -e '.[{','.join(gone)}]' in a clone of whileai "
                        "(--dry-run needs neither)")


def build_models(need: dict[str, Any]) -> None:
    from transformers.utils import logging

    logging.disable_progress_bar()
    start = time.monotonic()
    with console.status(f"tiny models: building or reusing (warm-up steps {need['warm']})"):
        paths, built = tiny.cached(need["texts"], need["pairs"], need["warm"])
    where = Path(paths["student"]).parent
    how = f"built in {time.monotonic() - start:.0f} s" if built else "cached: reused, not rebuilt"
    console.print(f"models: {where} ({how})")


def validate(m: Manifest, names: list[str], paths: list[str]) -> int:
    """TRL's own parser on every arm's folder (the reward modules import from the spec folders)."""
    from whileai.targets.trl.check import check_dir

    sys.path[:0] = paths
    bad = 0
    for name in names:
        problems = check_dir(m.arms[name].dir)
        bad += bool(problems)
        print(f"{name}: {'REJECTED' if problems else 'ok'} (TRL's parser, unknown keys rejected)")
        for p in problems:
            print(f"  {p}", file=sys.stderr)
    return 1 if bad else 0


def report(m: Manifest, out: Path, xs: tuple[str, ...]) -> int:
    res = write_comparison(m, out, xs)
    for line in result_lines(res):
        console.print(line, soft_wrap=True, style="yellow" if line.startswith("warning") else None)
    console.print(f"wrote {out / 'results.json'} and {out / 'results.png'}")
    return 1 if any(a["state"] == "failed" for a in res["arms"].values()) else 0


def backend(jobs: int, paths: list[str]) -> LocalBackend:
    env = {}
    if jobs > 1 and "OMP_NUM_THREADS" not in os.environ:  # arms share the cores
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // jobs))
    if paths:  # the spec folders: a reward module named in a spec imports from there
        env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return LocalBackend(env=env)


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C anywhere: one line, the arms started here stopped, nothing half-written."""
    return guarded(_main, argv)


def _main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write the run dirs, print the reports")
    mode.add_argument("--validate", action="store_true", help="write the run dirs, check each with "
                      "TRL's own parser (unknown keys rejected)")
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    add_arm_options(ap, default_tag="trl-tiny")
    ap.add_argument("--steps", type=positive, default=40, help="optimizer steps per arm (without --budget)")
    ap.add_argument("--prompts", type=positive, default=4, help="prompts per step")
    ap.add_argument("--max-tokens", type=positive, default=64, help="completion tokens (and eval tokens)")
    ap.add_argument("--samples", type=positive, default=4, help="cap on completions per prompt")
    ap.add_argument("--holdout", type=positive, default=32, help="holdout tasks scored per evaluation")
    ap.add_argument("--warmup", type=int, default=300, help="teacher SFT steps (student: a fifth)")
    ap.add_argument("--lr", type=float, default=5e-4, help="learning rate of every arm")
    ap.add_argument("--jobs", type=positive, default=3, help="arms trained at the same time")
    ap.add_argument("--no-preflight", action="store_true", help="launch without `whileai preflight`'s "
                    "checks of models, memory and disk")
    a = ap.parse_args(argv)
    for k, v in OFFLINE.items():
        os.environ.setdefault(k, v)
    out = (a.out / a.tag).resolve()
    try:
        if a.collect:
            m = manifest_to_collect(out, a.tag)
        else:
            probe(a.out / a.tag, "--out")  # writable before anything is compiled or built
            arms = arms_from_args(a)
            compiled, meta, need = offline_arms(a, arms)
            if a.strict:  # every warning is an error (whileai.honoured)
                strict(compiled.values())
            if not a.dry_run:  # after the input's own errors, before anything is written
                needs_extras(a.validate)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.collect:
        be = backend(a.jobs, [])
        code = collect(m, be)
        code, note = collect_gate(m, a.partial) if code in (0, 3) else (code, None)
        if note:
            print(note, file=sys.stderr)
        return report(m, out, a.x) if code == 0 else code

    # an arm's commands in order, as one shell line (SFT: the teacher samples, then trl sft trains)
    shell = {n: " && ".join(c.commands) for n, c in compiled.items()}
    argv_of = {n: call_argv(EVAL, command=shell[n], taskset=c.run.taskset, reward=need["reward"])
               for n, c in compiled.items()}
    specs = {n: arm_from_compiled(n, c, argv=argv_of[n]) for n, c in compiled.items()}
    try:
        m = plan(specs, a.tag, out, meta=meta)
    except OSError as e:
        print(f"error: {out_error(e)}", file=sys.stderr)
        return 2
    for (field, old, new, why), names in substituted(meta["substitutions"]).items():
        who = "every arm" if len(names) == len(arms.runs) else ", ".join(names)
        console.print(f"substituted {field}: {old} -> {new} ({who}: {why})", soft_wrap=True, highlight=False)
    for n in compiled:
        console.print(f"{n}: {m.arms[n].dir}/config.yaml [{m.arms[n].state}]  $ {shell[n]}",
                      highlight=False)
    for line in plan_lines({n: steps_of(c) for n, c in compiled.items()},
                           {n: per_step(c) for n, c in compiled.items()}, list(arms.pairs), a.budget):
        console.print(line, soft_wrap=True, highlight=False)
    if a.dry_run:
        for n, c in compiled.items():  # the reports name the files just written
            print(f"\n{render_text(as_written(c, m.arms[n].dir), width())}")
        return 0
    if a.validate:
        return validate(m, list(compiled), need["paths"])
    build_models(need)
    if not a.no_preflight and not gate(compiled, "trl", cpu=True, output_dir=str(out),
                                       say=lambda line: console.print(line, soft_wrap=True, highlight=False,
                                                                      markup=False)):
        return 1
    run_local(m, backend(a.jobs, need["paths"]), list(compiled), a.jobs, a.relaunch_failed, console)
    return report(m, out, a.x)


if __name__ == "__main__":
    sys.exit(main())
