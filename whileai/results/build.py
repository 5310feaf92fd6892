"""Manifest → results.json: per-arm configs and series, paired deltas against GRPO.

Deterministic: the same manifest gives byte-identical output (fixed seeds, no clocks), so
running collect twice writes the same file.
"""

from __future__ import annotations

import json
import platform
import statistics
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from whileai.launch.manifest import ArmRecord, Manifest, load_manifest
from whileai.launch.metrics import atomic_write_text
from whileai.launch.remote import PRIME_RL_COMMIT
from whileai.results import stats
from whileai.results.model import ArmResult, ConfigInfo, Delta, GroupNoise, Results

RULE_17 = ("research rule 17: a single self-distillation or OPD number means little without a "
           "GRPO arm on the same holdout")


def versions(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """whileai and the installed libraries that matter, read from metadata (nothing imported)."""
    out = {"python": platform.python_version(), "prime-rl": PRIME_RL_COMMIT}
    for pkg in ("whileai", "trl", "transformers", "torch", "modal", "numpy", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out | dict(extra or {})


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _arm(a: ArmRecord) -> ArmResult:
    r, s = a.result, a.spec
    series = dict(r.series) if r else {}
    per_task = dict(sorted(r.per_task.items())) if r else {}
    ev = series.get("eval_reward") or []
    return ArmResult(
        name=s.name, group=s.group, method=s.method, state=a.state, attempts=a.attempts,
        error=a.error, backend=a.backend, returncode=r.returncode if r else None,
        seconds=r.seconds if r else None, image=r.image if r else None, gpu=r.gpu if r else None,
        config=ConfigInfo(name=s.main, text=s.files.get(s.main) if s.main else None,
                          reads=s.reads, ignores=s.ignores, commands=s.commands),
        series=series, per_task=per_task, mean_task_reward=_mean(list(per_task.values())),
        final_eval_reward=ev[-1][1] if ev else None,
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


def _delta(runs: list[ArmResult], base: list[ArmResult], baseline: str, draws: int,
           seed: int) -> Delta:
    ta, tb = _group_tasks(runs), _group_tasks(base)
    ma = [m for a in runs if (m := _run_mean(a)) is not None]
    mb = [m for a in base if (m := _run_mean(a)) is not None]
    band = stats.noise_band(ma, mb) if ma and mb else None
    common: dict[str, Any] = {"baseline": baseline, "draws": draws, "seed": seed,
                              "noise_band": band.band if band else None}
    if not ta or not tb:
        a, b = _mean(ma), _mean(mb)
        d = a - b if a is not None and b is not None else None
        return Delta(**common, mean_a=a, mean_b=b, delta=d, ci95=None, p_value=None, n_tasks=0,
                     paired=False, within_noise=None if band is None or d is None
                     else abs(d) <= band.band, verdict="insufficient data",
                     warnings=["no per-task rewards: only the final eval rewards are compared"])
    res = stats.compare(ta, tb, draws=draws, seed=seed)

    def num(x: float) -> float | None:
        return None if x != x else x  # NaN → null (JSON has no NaN)

    return Delta(**common, mean_a=num(res.mean_a), mean_b=num(res.mean_b), delta=num(res.delta),
                 ci95=res.ci95, p_value=res.p_value, n_tasks=res.n_tasks, paired=res.paired,
                 within_noise=None if band is None else abs(res.delta) <= band.band,
                 verdict=stats.verdict(res.delta, res.ci95, band, res.p_value), warnings=list(res.warnings))


def build(
    manifest: Manifest | str | Path,
    *,
    baseline: str | None = None,
    draws: int = stats.DRAWS,
    seed: int = stats.SEED,
    extra_versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The results document (validated against the Results model) as a dict."""
    m = manifest if isinstance(manifest, Manifest) else load_manifest(manifest)
    arms = {n: _arm(a) for n, a in m.arms.items()}
    warnings: list[str] = []
    for a in arms.values():
        if a.state != "done":
            why = f": {a.error.splitlines()[0]}" if a.error else ""
            warnings.append(f"arm {a.name} is {a.state}{why}; left out of the comparison")
    done: dict[str, list[ArmResult]] = {}
    for a in arms.values():
        if a.state == "done":
            done.setdefault(a.group, []).append(a)
    base = _baseline(arms, baseline)
    if base is None:
        warnings.append(f"no GRPO arm: no deltas ({RULE_17})")
    elif base not in done:
        warnings.append(f"the baseline {base!r} has no finished run: no deltas ({RULE_17})")
    vs: dict[str, Delta] = {}
    if base is not None and base in done:
        for g, runs in sorted(done.items()):
            if g != base:
                vs[g] = _delta(runs, done[base], base, draws, seed)
        for a in arms.values():
            a.delta = vs.get(a.group) if a.state == "done" else None
    noise = {}
    for g, runs in sorted(done.items()):
        means = [v for a in runs if (v := _run_mean(a)) is not None]
        noise[g] = GroupNoise(runs=[a.name for a in runs], run_means=means,
                              run_std=statistics.stdev(means) if len(means) > 1 else None)
    meta = dict(m.meta)
    top = {k: meta.pop(k, None) for k in ("student", "teacher", "taskset", "holdout", "steps")}
    vers = versions({**(meta.pop("versions", None) or {}), **(extra_versions or {})})
    res = Results(tag=m.tag, **top, versions=vers,
                  meta=meta, baseline=base, arms=arms, noise=noise, vs_grpo=vs, warnings=warnings)
    return res.model_dump(mode="json")


def write_results(path: str | Path, results: Mapping[str, Any]) -> Path:
    """Validate and write results.json atomically."""
    Results.model_validate(results)
    p = Path(path)
    atomic_write_text(p, json.dumps(results, indent=1) + "\n")
    return p
