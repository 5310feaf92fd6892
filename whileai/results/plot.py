"""One PNG: eval reward per arm over steps (left), each group's delta vs GRPO with its CI (right).

matplotlib (the `results` extra) is imported inside `plot`, on the Agg backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot(results: Mapping[str, Any], path: str | Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    for name, arm in sorted(results["arms"].items()):
        pts = arm["series"].get("eval_reward") or []
        if pts:
            style = "--" if arm["method"] == "grpo" else "-"
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=3,
                     label=f"{name} ({arm['method']})")
    ax1.set_xlabel("step")
    ax1.set_ylabel("eval reward")
    ax1.set_title(f"{results['tag']}: eval reward on {results.get('holdout') or 'the holdout'}")
    if ax1.lines:
        ax1.legend(fontsize=8)
    else:
        ax1.text(0.5, 0.5, "no eval series", ha="center", transform=ax1.transAxes)

    deltas = sorted((g, d) for g, d in results["vs_grpo"].items() if d["delta"] is not None)
    for i, (_, d) in enumerate(deltas):
        ci = d["ci95"]
        err = [[d["delta"] - ci[0]], [ci[1] - d["delta"]]] if ci else None
        color = {"better": "tab:green", "worse": "tab:red"}.get(d["verdict"], "tab:gray")
        ax2.errorbar([d["delta"]], [i], xerr=err, fmt="o", color=color, capsize=4)
        if d["noise_band"] is not None:
            ax2.fill_betweenx([i - 0.3, i + 0.3], -d["noise_band"], d["noise_band"],
                              color="tab:gray", alpha=0.2)
        p = f", p={d['p_value']:.3g}" if d["p_value"] is not None else ""
        ax2.annotate(f"{d['verdict']}{p}", (d["delta"], i), xytext=(0, 8),
                     textcoords="offset points", ha="center", fontsize=8)
    ax2.axvline(0, color="black", lw=0.8)
    ax2.set_yticks(range(len(deltas)), [g for g, _ in deltas])
    ax2.set_ylim(-0.7, max(len(deltas), 1) - 0.3)
    ax2.set_xlabel(f"delta vs {results.get('baseline') or 'GRPO'} (95% CI)")
    ax2.set_title("paired per-task delta (gray: noise band)")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return out
