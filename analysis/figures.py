"""Report figures (PNG, matplotlib Agg), shaped like the paper's.

- improvement boxplots per scheduler, box [25 %, 75 %], whiskers at 12.5 /
  87.5 %, median line, mean triangle, dotted line at 1 (Figs. 8, 10);
- ECDF of improvements (Fig. 9);
- faster / slower / equal session counts with the mean improvement of the
  faster and the slower ones above the bars (Figs. 2, 7);
- cluster usage over time: running cores below, queued cores above, loading
  cores, evaluated jobs in red, evaluation window in orange (Figs. 3, 6).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .usage import Usage  # noqa: E402

WHISKERS = (12.5, 87.5)


def _save(fig, path) -> Path:
    path = Path(path)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def improvement_boxplot(improvements: pd.DataFrame, path, title: str) -> Path:
    schedulers = list(dict.fromkeys(improvements["scheduler"]))
    data = [improvements.loc[improvements["scheduler"] == s, "improvement"].to_numpy() for s in schedulers]
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(schedulers) + 2), 4))
    if schedulers:
        ax.boxplot(data, whis=WHISKERS, showmeans=True, showfliers=False,
                   meanprops={"marker": "^", "markerfacecolor": "black", "markeredgecolor": "black"},
                   medianprops={"color": "black"})
        ax.set_xticks(range(1, len(schedulers) + 1), schedulers)
    ax.axhline(1.0, color="black", linestyle=":", linewidth=1)
    ax.set_ylabel("stretch improvement\n(baseline / scheduler)")
    ax.set_title(title)
    return _save(fig, path)


def improvement_ecdf(improvements: pd.DataFrame, path, title: str) -> Path:
    fig, ax = plt.subplots(figsize=(6, 4))
    for sched, g in improvements.groupby("scheduler", sort=False):
        x = np.sort(g["improvement"].to_numpy())
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=sched)
    ax.axvline(1.0, color="black", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("session stretch improvement (baseline / scheduler)")
    ax.set_ylabel("cumulative probability")
    ax.set_title(title)
    if len(improvements):
        ax.legend()
    return _save(fig, path)


def faster_slower_bars(per_run: pd.DataFrame, path, title: str) -> Path:
    """per_run: rows with scheduler, faster, slower, equal, mean_improvement_faster/slower (pooled by the caller)."""
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(per_run) + 2), 4))
    x = np.arange(len(per_run))
    width = 0.27
    for k, (col, color) in enumerate([("faster", "tab:green"), ("equal", "tab:gray"), ("slower", "tab:red")]):
        bars = ax.bar(x + (k - 1) * width, per_run[col], width, label=col, color=color)
        if col in ("faster", "slower"):
            means = per_run[f"mean_improvement_{col}"].to_numpy()
            for bar, m in zip(bars, means):
                if np.isfinite(m):
                    ax.annotate(f"×{m:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                                ha="center", va="bottom", fontsize="small")
    ax.set_xticks(x, per_run["scheduler"])
    ax.set_ylabel("user sessions")
    ax.set_title(title)
    ax.legend()
    return _save(fig, path)


def _plot_step(ax, s, sign, **kw):
    ax.step(s.times, sign * s.values, where="post", **kw)


def cluster_usage(usage: Usage, path, title: str, total_cores: float | None = None) -> Path:
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 5), gridspec_kw={"hspace": 0.05})
    _plot_step(top, usage.queued, 1, color="tab:blue", label="all jobs")
    _plot_step(top, usage.queued_evaluated, 1, color="tab:red", label="evaluated jobs")
    _plot_step(bottom, usage.running, 1, color="tab:blue", label="all jobs")
    _plot_step(bottom, usage.running_evaluated, 1, color="tab:red", label="evaluated jobs")
    _plot_step(bottom, usage.loading, 1, color="tab:gray", label="loading")
    if total_cores:
        bottom.axhline(total_cores, color="black", linewidth=0.8, linestyle="--")
    top.set_ylabel("cores in queue")
    bottom.set_ylabel("cores running")
    for ax in (top, bottom):
        for edge in usage.window:
            if np.isfinite(edge):
                ax.axvline(edge, color="tab:orange", linewidth=1.2)
    top.legend(loc="upper right", fontsize="small")
    bottom.legend(loc="lower right", fontsize="small")
    bottom.set_xlabel("time (s)")
    top.set_title(title)
    return _save(fig, path)
