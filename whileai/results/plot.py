"""One PNG: eval reward per arm against each chosen x (step, rollouts, tokens, GPU-hours), and
every comparison's delta with its CI and noise band.

    plot(results, "results.png", xs=("step", "rollouts"))

Repeated runs of an arm draw their mean with a band from their lowest to highest value; a run
with a health finding gets a mark where it starts (red x: collapse; orange: instability);
budget warnings and stand-in (tiny) models are written on the figure. Budget axes spread each
arm's total evenly over its steps (total x step / steps). matplotlib (the
`results` extra) is imported inside `plot`, on the Agg backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# x name -> (budget quantity, scale, label); "step" is the step itself
AXES: dict[str, tuple[str | None, float, str]] = {
    "step": (None, 1.0, "step"),
    "rollouts": ("rollouts", 1.0, "rollouts sampled"),
    "tokens": ("sampled_tokens", 1.0, "sampled tokens"),
    "gpu-hours": ("device_seconds", 1 / 3600, "GPU-hours"),
}
COLLAPSE, UNSTABLE = "tab:red", "tab:orange"


def x_of(arm: Mapping[str, Any], x: str, step: int) -> float | None:
    quantity, scale, _ = AXES[x]
    if quantity is None:
        return float(step)
    b = arm.get("budget") or {}
    total, steps = (b.get(quantity) or {}).get("value"), b.get("steps")
    return None if total is None or not steps else total * scale * step / steps


def _label(results: Mapping[str, Any], x: str) -> str:
    quantity, _, label = AXES[x]
    if quantity is None:
        return label
    budgets = [a["budget"] for a in results["arms"].values() if a.get("budget")]
    sources = sorted({b[quantity]["source"] for b in budgets})
    if x == "gpu-hours" and budgets and all(b.get("device") == "cpu" for b in budgets):
        label = "CPU-hours (offline run)"
    return f"{label} ({'/'.join(sources) or 'unknown'})"


def _curves(ax: Any, results: Mapping[str, Any], x: str) -> None:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for _, arm in sorted(results["arms"].items()):
        groups.setdefault(arm["group"], []).append(arm)
    for i, (group, runs) in enumerate(sorted(groups.items())):
        color = f"C{i}"
        by_step: dict[int, list[float]] = {}
        for arm in runs:
            for s, v in arm["series"].get("eval_reward") or []:
                if v is not None:
                    by_step.setdefault(s, []).append(v)
        pts = [(xv, vals) for s, vals in sorted(by_step.items())
               if (xv := x_of(runs[0], x, s)) is not None]
        if not pts:
            continue
        xs, means = [p[0] for p in pts], [sum(v) / len(v) for _, v in pts]
        style = "--" if runs[0]["method"] == "grpo" else "-"
        kind = [runs[0]["method"]] if runs[0]["method"] != group else []
        label = group + (f" ({', '.join(kind + ([f'{len(runs)} runs'] if len(runs) > 1 else []))})"
                         if kind or len(runs) > 1 else "")
        ax.plot(xs, means, style, marker="o", ms=3, color=color, label=label)
        if len(runs) > 1:
            ax.fill_between(xs, [min(v) for _, v in pts], [max(v) for _, v in pts], color=color,
                            alpha=0.15, lw=0)
        for arm in runs:
            ev = dict(arm["series"].get("eval_reward") or [])
            for h in arm.get("health", []):
                xv = x_of(arm, x, h["step"]) if h.get("step") is not None else None
                if xv is None:
                    continue
                y = ev.get(h["step"]) if ev.get(h["step"]) is not None else means[-1]
                ax.plot([xv], [y], "x", ms=10, mew=2, color=COLLAPSE if h["collapse"] else UNSTABLE)
                ax.annotate(h["id"], (xv, y), xytext=(4, -12), textcoords="offset points",
                            fontsize=7, color=COLLAPSE if h["collapse"] else UNSTABLE)


def delta_label(deltas: Sequence[Mapping[str, Any]]) -> str:
    """The x label says "paired" only when every comparison paired its arms by task."""
    paired = {bool(d.get("paired")) for d in deltas}
    if paired == {False}:
        return "unpaired delta of mean eval reward (95% CI)"
    if paired == {True}:
        return "paired per-task delta in eval reward (95% CI)"
    return "delta in eval reward (95% CI; paired for some comparisons: see results.json)"


def _deltas(ax: Any, results: Mapping[str, Any]) -> None:
    deltas = [d for d in results.get("comparisons") or results["vs_grpo"].values()
              if d["delta"] is not None]
    for i, d in enumerate(deltas):
        ci = d["ci95"]
        # a CI can miss its own mean by rounding (every difference equal): clamp at 0
        err = [[max(0.0, d["delta"] - ci[0])], [max(0.0, ci[1] - d["delta"])]] if ci else None
        color = {"better": "tab:green", "worse": "tab:red", "collapsed": "tab:purple",
                 "baseline collapsed": "tab:purple"}.get(d["verdict"], "tab:gray")
        ax.errorbar([d["delta"]], [i], xerr=err, fmt="o", color=color, capsize=4)
        if d["noise_band"] is not None:
            ax.fill_betweenx([i - 0.3, i + 0.3], -d["noise_band"], d["noise_band"],
                             color="tab:gray", alpha=0.25)
        p = f", p {d['p_text'].split(' (')[0]}" if d.get("p_text") else ""
        ax.annotate(f"{d['verdict']}{p}", (d["delta"], i), xytext=(0, 8),
                    textcoords="offset points", ha="center", fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(deltas)), [f"{d.get('arm') or '?'} vs {d['baseline']}" for d in deltas])
    ax.set_ylim(-0.7, max(len(deltas), 1) - 0.3)
    ax.set_xlabel(delta_label(deltas))
    has_band = any(d["noise_band"] is not None for d in deltas)
    ax.set_title("gray: noise band from repeated runs" if has_band else
                 "no repeats: no noise band (--repeats N)", fontsize=9)


def plot(results: Mapping[str, Any], path: str | Path, xs: Sequence[str] = ("step",)) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    unknown = [x for x in xs if x not in AXES]
    if unknown or not xs:
        raise ValueError(f"unknown x {unknown}; choose from {', '.join(AXES)}")
    n = len(xs)
    fig, axes = plt.subplots(1, n + 1, figsize=(5.2 * n + 4.5, 4.8),
                             gridspec_kw={"width_ratios": [3] * n + [2.4]})
    holdout = results.get("holdout") or "the holdout"
    metric = results.get("metric") or "the taskset's reward"
    for ax, x in zip(axes[:n], xs, strict=True):
        _curves(ax, results, x)
        ax.set_xlabel(_label(results, x))
        ax.set_ylabel(f"eval reward: {metric}\non {holdout}", fontsize=8)
        if ax.lines:
            ax.legend(fontsize=7)
        else:
            why = "no eval series" if x == "step" else f"no arm knows its {x} (see budget)"
            ax.text(0.5, 0.5, why, ha="center", transform=ax.transAxes)
    _deltas(axes[n], results)
    lines = [f"{results['tag']}: eval reward on {holdout}"]
    if results.get("models"):
        lines.append(f"stand-in models: {results['models']}")
    fig.suptitle("\n".join(lines), fontsize=10)
    notes = list((results.get("budget") or {}).get("warnings") or [])
    matched = (results.get("budget") or {}).get("matched")
    if matched:
        notes.insert(0, f"budget matched: every arm's steps set to spend {matched}")
    if notes:
        fig.text(0.01, 0.01, "\n".join(notes[:4]), fontsize=7, va="bottom",
                 color="black" if not (results.get("budget") or {}).get("warnings") else COLLAPSE)
    fig.tight_layout(rect=(0, 0.03 * min(len(notes), 4) + 0.01 * bool(notes), 1, 1))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out


__all__ = ["AXES", "plot", "x_of"]
