"""Report figures (PNG + SVG, matplotlib Agg), shaped like the paper's.

- improvement boxplots per scheduler on a log scale (a ratio of 2 and of 1/2
  are as far from 1), box [25 %, 75 %], whiskers at 12.5 / 87.5 %, median
  line, mean triangle, dotted line at 1 (Figs. 8, 10);
- ECDF of improvements (Fig. 9), small multiples past a few schedulers;
- faster / slower / equal session counts with the mean improvement of the
  faster and the slower ones above the bars (Figs. 2, 7);
- cluster usage over time: running cores below, queued cores above, loading
  cores, evaluated jobs in vermilion, evaluation window in orange (Figs. 3, 6);
- ECDF of the error of predicted start times per scheduler, first prediction
  solid, last one dashed, on a symmetric log axis when the tails dominate.
Colours and markers come from the report's Palette, times from its TimeAxis.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator

from .style import NAMED, Palette, TimeAxis, lines, plt, save, step_points
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
    vertical = axis is ax.yaxis
    lo, hi = ax.get_ylim() if vertical else ax.get_xlim()   # brings the limits up to date with the data
    box = ax.get_position()
    # how many labels fit side by side: about 0.35 inch each ("0.05") along x, 0.3 along y
    room = max(3.0, box.height * ax.figure.get_figheight() / 0.3 if vertical
               else box.width * ax.figure.get_figwidth() / 0.35)
    if lo > 0 and hi / lo < 4:   # within a factor of 4, 1-2-5 steps would label one tick or none
        axis.set_major_locator(MaxNLocator(5))
    elif lo > 0 and 3 * math.log10(hi / lo) > room:   # too many decades for 1-2-5: decades only
        axis.set_major_locator(LogLocator(base=10, subs=(1.0,), numticks=int(room)))
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
    for k, (col, color) in enumerate([("faster", NAMED["green"]), ("equal", NAMED["grey"]),
                                      ("slower", NAMED["vermilion"])]):
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
    _plot_step(top, usage.queued, axis, color=NAMED["blue"], label="all jobs")
    _plot_step(top, usage.queued_evaluated, axis, color=NAMED["vermilion"], label="evaluated jobs")
    _plot_step(bottom, usage.running, axis, color=NAMED["blue"], label="all jobs")
    _plot_step(bottom, usage.running_evaluated, axis, color=NAMED["vermilion"], label="evaluated jobs")
    _plot_step(bottom, usage.loading, axis, color=NAMED["grey"], label="loading or waiting for a file")
    if total_cores:
        bottom.axhline(total_cores, color="black", linewidth=0.8, linestyle="--", label="cores of the platform")
    top.set_ylabel("cores queued")
    bottom.set_ylabel("cores held")
    for ax in (top, bottom):
        for edge in usage.window:
            if np.isfinite(edge):
                ax.axvline(float(axis(edge)), color=NAMED["orange"], linewidth=1.2)
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


# An ECDF drawn with more points than this is thinned to evenly spaced fractions (1/ECDF_POINTS apart at most).
ECDF_POINTS = 2000


def _signed_ecdf(values, max_points: int = ECDF_POINTS):
    """(x, fraction of values ≤ x) of finite values, any sign, at most ~max_points steps."""
    x = np.sort(values[np.isfinite(values)])
    y = np.arange(1, len(x) + 1) / max(1, len(x))
    if len(x) > max_points:
        keep = np.unique(np.r_[np.linspace(0, len(x) - 1, max_points).round().astype(int),
                               np.searchsorted(x, 0.0, side="left") - 1, np.searchsorted(x, 0.0, side="right") - 1])
        keep = keep[keep >= 0]
        x, y = x[keep], y[keep]
    # from 0 at the smallest value: the curve rises there rather than starting in mid-air
    return np.r_[x[:1], x], np.r_[[0.0][:len(x)], y]


def symlog_threshold(values) -> float | None:
    """The linear half-width of a symmetric log axis for these values, or None when a linear axis shows them.

    A log scale pays when the tails dominate: the largest |value| is more than
    10 times the 75th percentile of the non-zero ones. Its linear part then
    reaches the power of ten below their 25th percentile, so most errors lie
    on the log part."""
    a = np.abs(np.asarray(values, dtype=float))
    a = a[np.isfinite(a) & (a > 0)]
    if not len(a) or a.max() <= 10 * np.percentile(a, 75):
        return None
    return float(10 ** np.floor(np.log10(np.percentile(a, 25))))


def _symlog_ticks(axis, linthresh: float, label_inches: float = 0.45) -> None:
    """A tick at 0 and at each ±10^k beyond the linear part (±linthresh itself would crowd 0); labels on
    every decade, or every other one (ticks kept, so that they still show a log scale) when
    labels would come closer than label_inches on the figure."""
    ax = axis.axes
    lo, hi = ax.get_xlim()
    top = max(abs(lo), abs(hi))
    decades = [linthresh * 10 ** k for k in range(1, 1 + max(0, int(np.ceil(np.log10(top / linthresh)))))]
    ticks = [-d for d in decades if -d >= lo][::-1] + [0.0] + [d for d in decades if d <= hi]
    inches = ax.transData.transform(np.column_stack([ticks, np.zeros(len(ticks))]))[:, 0] / ax.figure.dpi
    zero = ticks.index(0.0)
    step = 1
    while step < len(ticks):
        kept = [x for i, x in enumerate(inches) if (i - zero) % step == 0]
        if len(kept) < 2 or np.min(np.diff(kept)) >= label_inches:
            break
        step += 1
    shown = {t for i, t in enumerate(ticks) if (i - zero) % step == 0}
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}".replace("-", "\u2212") if v in shown else ""))
    axis.set_minor_locator(NullLocator())


def prediction_error_ecdf(first: dict, last: dict, path, title: str, palette: Palette):
    """first, last: scheduler → errors (h) of its first and last predictions; returns (PNG path, symlog threshold)."""
    series = {s: _signed_ecdf(np.asarray(v, dtype=float)) for s, v in first.items()}
    pooled = np.concatenate([np.asarray(v, dtype=float) for v in list(first.values()) + list(last.values())] or [[]])
    linthresh = symlog_threshold(pooled)
    xlabel = "actual start − predicted start (h" + (", symmetric log scale)" if linthresh is not None else ")")
    fig, axes = lines(series, palette, title, xlabel, "fraction of jobs", size=(7, 4))
    panels = palette.order(series)
    for i, ax in enumerate(axes):
        own = panels if len(axes) == 1 else [panels[i]]
        for s in own:
            if s in last:
                ax.step(*_signed_ecdf(np.asarray(last[s], dtype=float)), where="post", color=palette[s].colour,
                        linestyle="--", linewidth=1.2)
        ax.axvline(0.0, color="black", linestyle=":", linewidth=1)
        ax.set_ylim(0, 1.02)
        if linthresh is not None:
            ax.set_xscale("symlog", linthresh=linthresh, linscale=0.5)
    if linthresh is not None:   # the axes share x: set the ticks once, from the limits of all the data
        _symlog_ticks(axes[0].xaxis, linthresh)
    styles = [plt.Line2D([], [], color="grey", linestyle="-", label="at first placement"),
              plt.Line2D([], [], color="grey", linestyle="--", label="last before its start")]
    # an ECDF leaves its lower right empty
    if len(axes) == 1:
        axes[0].legend(handles=axes[0].get_legend_handles_labels()[0] + styles, fontsize="small", loc="lower right")
    else:
        axes[0].legend(handles=styles, fontsize="x-small", loc="lower right")
    return save(fig, path), linthresh
