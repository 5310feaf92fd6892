"""Manifest → results.json: per-arm configs, series, budgets and health; the comparisons.

Which pairs are compared: `pairs` when given, else the manifest's `meta.comparisons` (written
by the recipes from whileai.launch.arms), else every group against the baseline plus
whileai.launch.arms.DEFAULT_PAIRS. Deterministic: the same manifest gives byte-identical output
(fixed seeds, no clocks), so running collect twice writes the same file.
"""

from __future__ import annotations

import json
import math
import platform
import statistics
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from whileai.files.atomic import atomic_write as atomic_write_text
from whileai.launch.manifest import ArmRecord, Manifest, load_manifest
from whileai.results import stats, truth
from whileai.results.document import (
    ArmResult,
    BudgetInfo,
    ConfigInfo,
    Delta,
    GroupNoise,
    Health,
    Results,
    StatsInfo,
)
from whileai.results.health import check
from whileai.results.spend import COMPARED, arm_budget, mismatches
from whileai.targets import registry

RULE_17 = ("docs/research.md R17: a single self-distillation or OPD number means little without a "
           "GRPO arm on the same holdout")
TOP = ("student", "teacher", "taskset", "holdout", "steps", "metric", "models")


def versions(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each target's pinned revision (its launcher's, from the registry), then whileai and the
    installed libraries that matter, read from metadata (nothing heavy imported)."""
    out = {"python": platform.python_version()}
    for name in registry.names():
        if (launcher := registry.get(name).launcher) is not None:
            out[name] = launcher.revision
    for pkg in ("whileai", "trl", "transformers", "torch", "modal", "numpy", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out | dict(extra or {})


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _finite(points: list[tuple[int, float]]) -> list[tuple[int, float | None]]:
    return [(s, v if math.isfinite(v) else None) for s, v in points]


def _arm(a: ArmRecord) -> ArmResult:
    r, s = a.result, a.spec
    raw = dict(r.series) if r else {}
    per_task = dict(sorted(r.per_task.items())) if r else {}
    ev = [v for _, v in raw.get("eval_reward") or [] if math.isfinite(v)]
    return ArmResult(
        name=s.name, group=s.group, method=s.method, state=a.state, attempts=a.attempts,
        seed=s.seed, error=a.error, backend=a.backend, returncode=r.returncode if r else None,
        seconds=r.seconds if r else None, image=r.image if r else None, gpu=r.gpu if r else None,
        config=ConfigInfo(name=s.main, text=s.files.get(s.main) if s.main else None,
                          reads=s.reads, ignores=s.ignores, commands=s.commands),
        series={k: _finite(v) for k, v in raw.items()}, per_task=per_task,
        mean_task_reward=_mean(list(per_task.values())), final_eval_reward=ev[-1] if ev else None,
        budget=arm_budget(a), health=[Health(**f._asdict()) for f in check(raw)],
    )


def _baseline(arms: dict[str, ArmResult], wanted: str | None) -> str | None:
    if wanted is not None:
        return wanted
    groups = sorted({a.group for a in arms.values() if a.method == "grpo"})
    return "grpo" if "grpo" in groups else (groups[0] if groups else None)


def _group_tasks(runs: list[ArmResult]) -> dict[str, float]:
    by_task: dict[str, list[float]] = {}
    for a in runs:
        for t, v in a.per_task.items():
            by_task.setdefault(t, []).append(v)
    return {t: sum(v) / len(v) for t, v in sorted(by_task.items())}


def _run_mean(a: ArmResult) -> float | None:
    return a.mean_task_reward if a.mean_task_reward is not None else a.final_eval_reward


def _spend(runs: list[ArmResult]) -> dict[str, float]:
    """Mean total per budget quantity over a group's runs (those that know it)."""
    out: dict[str, float] = {}
    for q in COMPARED:
        vals = [v for a in runs if a.budget and (v := getattr(a.budget, q).value) is not None]
        if vals:
            out[q] = sum(vals) / len(vals)
    return out


def gpu_type(label: str | None) -> str | None:
    """'NVIDIA H100 80GB HBM3 x2' -> 'NVIDIA H100 80GB HBM3' (the Modal app's label: its count
    dropped); None offline."""
    return label.rsplit(" x", 1)[0] if label else None


def _gpu_types(runs: list[ArmResult]) -> set[str]:
    return {t for a in runs if (t := gpu_type(a.gpu))}


def _same_gpus(name: str, runs: list[ArmResult], against: str, base: list[ArmResult]) -> str | None:
    """A warning when the two sides ran on different GPU types (a Modal fallback list lets each
    arm's container get the first type free): their GPU-seconds are then not compared, since a
    GPU-second differs by type; their rewards are (same config, steps, data and seeds: the type
    changes speed, not what is trained). None when the types agree or are unknown."""
    ta, tb = _gpu_types(runs), _gpu_types(base)
    if not ta or not tb or ta == tb:
        return None
    return (f"GPU-seconds not compared: {name} ran on {', '.join(sorted(ta))}, {against} on "
            f"{', '.join(sorted(tb))} (a GPU-second differs by type; rewards are compared)")


def _collapsed(runs: list[ArmResult]) -> list[str]:
    return [a.name for a in runs if any(h.collapse for h in a.health)]


def _delta(name: str, runs: list[ArmResult], against: str, base: list[ArmResult], draws: int,
           seed: int) -> Delta:
    ta, tb = _group_tasks(runs), _group_tasks(base)
    ma = [m for a in runs if (m := _run_mean(a)) is not None]
    mb = [m for a in base if (m := _run_mean(a)) is not None]
    band = stats.noise_band(ma, mb) if ma and mb else None
    sa, sb = _spend(runs), _spend(base)
    gpus = _same_gpus(name, runs, against, base)
    ratio = {q: sa[q] / sb[q] for q in sa if sb.get(q) and not (gpus and q == "device_seconds")}
    off = mismatches(ratio)
    warnings = [f"budgets differ: {name} spends " + ", ".join(
        f"{ratio[q]:.2g}x the {q.replace('_', ' ')}" for q in off) + f" of {against}"] if off else []
    warnings += [gpus] if gpus else []
    ca, cb = _collapsed(runs), _collapsed(base)
    common: dict[str, Any] = {"arm": name, "baseline": against, "draws": draws, "seed": seed,
                              "noise_band": band.band if band else None, "budget_ratio": ratio,
                              "collapsed": ca + cb}
    if not ta or not tb:
        a, b = _mean(ma), _mean(mb)
        d = a - b if a is not None and b is not None else None
        return Delta(**common, mean_a=a, mean_b=b, delta=d, ci95=None, p_value=None, n_tasks=0,
                     paired=False, within_noise=None if band is None or d is None
                     else abs(d) <= band.band, verdict=_verdict("insufficient data", ca, cb),
                     warnings=warnings + ["no per-task rewards: only the final eval rewards are compared"])
    res = stats.compare(ta, tb, draws=draws, seed=seed)

    def num(x: float) -> float | None:
        return None if x != x else x  # NaN → null (JSON has no NaN)

    plain = stats.verdict(res.delta, res.ci95, band, res.p_value)
    return Delta(**common, mean_a=num(res.mean_a), mean_b=num(res.mean_b), delta=num(res.delta),
                 ci95=res.ci95, p_value=res.p_value, p_floor=res.p_floor, p_text=res.p_text,
                 permutations=res.permutations, permutation_exact=res.exact, n_tasks=res.n_tasks,
                 paired=res.paired, within_noise=None if band is None else abs(res.delta) <= band.band,
                 statistical_verdict=plain, verdict=_verdict(plain, ca, cb),
                 warnings=warnings + list(res.warnings))


def _verdict(plain: str, mine: list[str], theirs: list[str]) -> Any:
    return "collapsed" if mine else "baseline collapsed" if theirs else plain


def _pairs(groups: Mapping[str, str], base: str | None, meta: Mapping[str, Any],
           wanted: Sequence[tuple[str, str]] | None) -> list[tuple[str, str]]:
    if wanted is not None:
        return list(wanted)
    if meta.get("comparisons"):
        return [(str(a), str(b)) for a, b in meta["comparisons"]]
    if base is None or base not in groups:
        return []
    from whileai.launch.arms import comparisons

    return comparisons(groups, base)


def build(
    manifest: Manifest | str | Path,
    *,
    baseline: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    draws: int = stats.DRAWS,
    seed: int = stats.SEED,
    extra_versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The results document (validated against the Results model) as a dict."""
    m = manifest if isinstance(manifest, Manifest) else load_manifest(manifest)
    meta = dict(m.meta)
    arms = {n: _arm(a) for n, a in m.arms.items()}
    warnings: list[str] = []
    for a in arms.values():
        if a.state != "done":
            why = f": {a.error.splitlines()[0]}" if a.error else ""
            warnings.append(f"arm {a.name} is {a.state}{why}; left out of the comparison")
        for h in a.health:
            warnings.append(f"arm {a.name}: {h.id}: {h.message}")
    done: dict[str, list[ArmResult]] = {}
    for a in arms.values():
        if a.state == "done":
            done.setdefault(a.group, []).append(a)
    base = _baseline(arms, baseline or meta.pop("baseline", None))
    if base is None:
        warnings.append(f"no GRPO arm: no deltas ({RULE_17})")
    elif base not in done:
        warnings.append(f"the baseline {base!r} has no finished run: no deltas ({RULE_17})")
    groups = {a.group: a.method for a in arms.values()}
    comps: list[Delta] = []
    for g, against in _pairs(groups, base, meta, pairs):
        if g in done and against in done:
            comps.append(_delta(g, done[g], against, done[against], draws, seed))
        elif (missing := g if g not in done else against) not in groups:
            warnings.append(f"{g} vs {against}: not compared (no arm named {missing!r})")
    vs = {d.arm: d for d in comps if d.baseline == base}
    for a in arms.values():
        a.delta = vs.get(a.group) if a.state == "done" else None
    noise = {}
    for g, runs in sorted(done.items()):
        means = [v for a in runs if (v := _run_mean(a)) is not None]
        noise[g] = GroupNoise(runs=[a.name for a in runs], run_means=means,
                              run_std=statistics.stdev(means) if len(means) > 1 else None)
    repeats = max((len(r) for r in done.values()), default=0)
    band = (f"from {repeats} runs per group where repeated" if repeats > 1 else
            "none: every arm ran once (repeat the arms, e.g. --repeats 3, for one)")
    budget = BudgetInfo(matched=meta.pop("budget", None),
                        warnings=[w for d in comps for w in d.warnings if w.startswith("budgets differ")])
    warnings += budget.warnings
    warnings += [w for d in comps for w in d.warnings if w.startswith("GPU-seconds not compared")]
    top = {k: meta.pop(k, None) for k in TOP}
    top["holdout"], scored = truth.scored(arms, comps, top["holdout"])  # what was really scored
    for d in comps:
        d.verdict_reason = truth.reason(d)
    meta.pop("comparisons", None)
    subs = meta.pop("substitutions", None) or []
    vers = versions({**(meta.pop("versions", None) or {}), **(extra_versions or {})})
    res = Results(tag=m.tag, **top, versions=vers, meta=meta, baseline=base, arms=arms, noise=noise,
                  comparisons=comps, vs_grpo=vs, budget=budget, substitutions=subs,
                  stats=StatsInfo(bootstrap_draws=draws, permutations=stats.PERMUTATIONS, seed=seed,
                                  min_pairs=stats.MIN_PAIRS, noise_band=band,
                                  verdict_rule=truth.VERDICT_RULE),
                  scored=scored, warnings=warnings)
    return res.model_dump(mode="json")


def write_results(path: str | Path, results: Mapping[str, Any]) -> Path:
    """Validate and write results.json atomically."""
    Results.model_validate(results)
    p = Path(path)
    atomic_write_text(p, json.dumps(results, indent=1, allow_nan=False) + "\n")
    return p
