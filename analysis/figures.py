"""Report figures (PNG + SVG, matplotlib Agg), shaped like the paper's.

- improvement boxplots per scheduler on a log scale (a ratio of 2 and of 1/2
  are as far from 1), box [25 %, 75 %], whiskers at 12.5 / 87.5 %, median
  line, mean triangle, dotted line at 1 (Figs. 8, 10);
- ECDF of improvements (Fig. 9), small multiples past a few schedulers;
- faster / slower / equal session counts with the mean improvement of the
  faster and the slower ones above the bars (Figs. 2, 7);
- cluster usage over time: running cores below, queued cores above, loading
  cores, evaluated jobs in red, evaluation window in orange (Figs. 3, 6).
Colours and markers come from the report's Palette, times from its TimeAxis.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from .style import Palette, TimeAxis, lines, plt, save, step_points
from .usage import Usage

WHISKERS = (12.5, 87.5)


def _names_on_x(ax, positions, names) -> None:
    """Scheduler names under the x axis, slanted and ending at their tick when there are many."""
    names = list(names)
    if len(names) > 6 or max((len(n) for n in names), default=0) > 12:
        ax.set_xticks(positions, names, rotation=30, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(positions, names)


def _ratio_axis(axis) -> None:
    """A log axis of ratios labelled 0.5, 1, 2, 5 … rather than 10^k; evenly spaced labels on a narrow one.

    Call it once the data is drawn: the choice depends on the axis' limits."""
    ax = axis.axes
    lo, hi = ax.get_ylim() if axis is ax.yaxis else ax.get_xlim()   # brings the limits up to date with the data
    if lo > 0 and hi / lo < 4:   # within a factor of 4, 1-2-5 steps would label one tick or none
        axis.set_major_locator(MaxNLocator(5))
    else:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def improvement_boxplot(improvements: pd.DataFrame, path, title: str, palette: Palette):
    schedulers = palette.order(improvements["scheduler"])
    data = [improvements.loc[improvements["scheduler"] == s, "improvement"].to_numpy(dtype=float) for s in schedulers]
    data = [d[np.isfinite(d) & (d > 0)] for d in data]  # a log axis: a zero or infinite ratio cannot be drawn
    fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(schedulers) + 2), 4))
    if any(len(d) for d in data):
        boxes = ax.boxplot(data, whis=WHISKERS, showmeans=True, showfliers=False, patch_artist=True,
                           meanprops={"marker": "^", "markerfacecolor": "black", "markeredgecolor": "black"},
                           medianprops={"color": "black"})
        for box, s in zip(boxes["boxes"], schedulers):
            box.set(facecolor=palette[s].colour, alpha=0.55, edgecolor="black")
        _names_on_x(ax, range(1, len(schedulers) + 1), schedulers)
        ax.set_yscale("log")
        _ratio_axis(ax.yaxis)
    ax.axhline(1.0, color="black", linestyle=":", linewidth=1)
    ax.set_ylabel("session stretch improvement\n(baseline / scheduler, log scale)")
    ax.set_title(title)
    return save(fig, path)


def _ecdf(values):
    x = np.sort(values[np.isfinite(values) & (values > 0)])
    return x, np.arange(1, len(x) + 1) / max(1, len(x))


def improvement_ecdf(improvements: pd.DataFrame, path, title: str, palette: Palette):
    series = {s: _ecdf(improvements.loc[improvements["scheduler"] == s, "improvement"].to_numpy(dtype=float))
              for s in palette.order(improvements["scheduler"])}
    fig, axes = lines(series, palette, title, "session stretch improvement (baseline / scheduler, log scale)",
                      "fraction of sessions", size=(6, 4))
    for ax in axes:
        ax.axvline(1.0, color="black", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        _ratio_axis(ax.xaxis)
    return save(fig, path)


def faster_slower_bars(per_run: pd.DataFrame, path, title: str):
    """per_run: rows with scheduler, faster, slower, equal, mean_improvement_faster/slower (pooled by the caller)."""
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(per_run) + 2), 4))
    x = np.arange(len(per_run))
    width = 0.27
    for k, (col, color) in enumerate([("faster", "#009E73"), ("equal", "#999999"), ("slower", "#D55E00")]):
        bars = ax.bar(x + (k - 1) * width, per_run[col], width, label=col, color=color)
        if col in ("faster", "slower"):
            means = per_run[f"mean_improvement_{col}"].to_numpy()
            for bar, m in zip(bars, means):
                if np.isfinite(m):
                    ax.annotate(f"×{m:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                                ha="center", va="bottom", fontsize="x-small")
    _names_on_x(ax, x, per_run["scheduler"])
    ax.set_ylabel("user sessions")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return save(fig, path)


def _plot_step(ax, s, axis: TimeAxis, **kw):
    t, v = step_points(s.times, s.values)
    ax.step(axis(t), v, where="post", **kw)


def cluster_usage(usage: Usage, path, title: str, axis: TimeAxis, total_cores: float | None = None,
                  xlim=None, ylim=None):
    """xlim (in the axis' unit) and ylim (queued, running) shared by a group's runs, so their figures compare."""
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 4.5), gridspec_kw={"hspace": 0.08})
    _plot_step(top, usage.queued, axis, color="#0072B2", label="all jobs")
    _plot_step(top, usage.queued_evaluated, axis, color="#D55E00", label="evaluated jobs")
    _plot_step(bottom, usage.running, axis, color="#0072B2", label="all jobs")
    _plot_step(bottom, usage.running_evaluated, axis, color="#D55E00", label="evaluated jobs")
    _plot_step(bottom, usage.loading, axis, color="#777777", label="loading or waiting for a file")
    if total_cores:
        bottom.axhline(total_cores, color="black", linewidth=0.8, linestyle="--", label="cores of the platform")
    top.set_ylabel("cores queued")
    bottom.set_ylabel("cores held")
    for ax in (top, bottom):
        for edge in usage.window:
            if np.isfinite(edge):
                ax.axvline(float(axis(edge)), color="#E69F00", linewidth=1.2)
    if xlim is not None:
        bottom.set_xlim(*xlim)
    if ylim is not None:
        top.set_ylim(0, max(1.0, ylim[0]) * 1.05)
        bottom.set_ylim(0, max(1.0, ylim[1], total_cores or 0) * 1.05)   # the platform's line stays in sight
    top.legend(loc="upper right", fontsize="x-small")
    bottom.legend(loc="upper right", fontsize="x-small")
    bottom.set_xlabel(axis.label + "; orange: evaluation window")
    top.set_title(title)
    return save(fig, path)
