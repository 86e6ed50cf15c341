"""What every figure of one report shares: a scheduler's colour and marker, the time axis, how files are saved.

A reader follows a scheduler across figures by its colour, so colours are
given once per report (`Palette`), in a fixed order of scheduler names
(the baseline first, in black), never by the order a figure happens to plot.
Times are shown in hours (days past three days) from the evaluation
window's start, the instant the paper's figures count from. Every figure is
written twice: a PNG at FIGURE_DPI for the HTML page and an SVG beside it
for a paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FIGURE_DPI = 150
# The one palette of the report, by name: figures draw with these and captions name them, so that a
# caption's "vermilion" is the legend's. Colour-blind-safe (Okabe & Ito, without the yellow that vanishes
# on white), then tab10's for more schedulers; no grey among the schedulers' colours, since grey draws the
# other schedulers behind a panel's own and the "cores held for a file" curve.
NAMED = {"blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "vermilion": "#D55E00",
         "reddish purple": "#CC79A7", "sky blue": "#56B4E9", "ochre": "#a6761d", "brown": "#8c564b",
         "pink": "#e377c2", "olive": "#bcbd22", "cyan": "#17becf", "violet": "#9467bd",
         "light blue": "#9ecae1", "grey": "#777777", "black": "#000000"}
_COLOURS = [NAMED[n] for n in ("blue", "orange", "green", "vermilion", "reddish purple", "sky blue", "ochre",
                               "brown", "pink", "olive", "cyan", "violet")]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p"]
BASELINE_COLOUR = NAMED["black"]
# Whole panels per row in small multiples; above SMALL_MULTIPLES_FROM series one axis is spaghetti.
PANEL_COLUMNS = 4
SMALL_MULTIPLES_FROM = 4
# matplotlib's SVG embeds every point of a line: keep under this many per step curve.
MAX_STEP_POINTS = 4000

plt.rcParams.update({"svg.fonttype": "none", "axes.spines.top": False, "axes.spines.right": False,
                     "figure.dpi": FIGURE_DPI})


@dataclass(frozen=True)
class Look:
    colour: str
    marker: str


class Palette:
    """Scheduler name → Look, the same in every figure of a report."""

    def __init__(self, schedulers, baseline: str | None = None):
        names = sorted(set(schedulers) - {baseline})
        self._looks = {}
        if baseline is not None:
            self._looks[baseline] = Look(BASELINE_COLOUR, "o")
        for i, name in enumerate(names):
            self._looks[name] = Look(_COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)])
        self.baseline = baseline

    def __getitem__(self, scheduler: str) -> Look:
        if scheduler not in self._looks:  # a figure drew a name the report did not announce
            self._looks[scheduler] = Look(_COLOURS[len(self._looks) % len(_COLOURS)],
                                          _MARKERS[len(self._looks) % len(_MARKERS)])
        return self._looks[scheduler]

    def order(self, schedulers) -> list[str]:
        """The schedulers in the report's order: the baseline first, then by name."""
        present = set(schedulers)
        return [s for s in self._looks if s in present] + sorted(present - set(self._looks))


@dataclass(frozen=True)
class TimeAxis:
    """Seconds of simulated time → hours or days from `origin` (the evaluation window's start)."""

    origin: float
    unit: str = "h"

    @staticmethod
    def for_span(origin: float, begin: float, end: float) -> TimeAxis:
        origin = origin if math.isfinite(origin) else (begin if math.isfinite(begin) else 0.0)
        span = end - begin if math.isfinite(end - begin) else 0.0
        return TimeAxis(origin, "days" if span > 3 * 86400 else "h")

    @property
    def seconds(self) -> float:
        return 86400.0 if self.unit == "days" else 3600.0

    def __call__(self, t):
        return (np.asarray(t, dtype=float) - self.origin) / self.seconds

    @property
    def label(self) -> str:
        return f"time from the evaluation window's start ({self.unit})"


def step_points(times, values, max_points: int = MAX_STEP_POINTS):
    """A step curve thinned to at most ~max_points, keeping each bin's highest level.

    A week of 150 000 jobs changes the running cores 300 000 times; no page
    shows more than a few thousand columns, and a peak must not vanish."""
    times, values = np.asarray(times, dtype=float), np.asarray(values, dtype=float)
    if len(times) <= max_points:
        return times, values
    edges = np.linspace(times[0], times[-1], max_points // 2 + 1)
    bins = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, len(edges) - 2)
    first = np.r_[0, np.flatnonzero(np.diff(bins)) + 1]
    peaks = np.maximum.reduceat(values, first)
    lows = np.minimum.reduceat(values, first)
    # each occupied bin becomes its low and its peak, so both the dips and the tops survive
    t = np.repeat(times[first], 2)
    t[1::2] = t[0::2] + np.diff(np.r_[times[first], times[-1]]) / 2
    return t, np.column_stack([lows, peaks]).ravel()


def panel_grid(n: int, width: float = 3.2, height: float = 2.4, sharey=True):
    """n small panels on a grid of up to PANEL_COLUMNS columns; unused panels hidden."""
    cols = min(PANEL_COLUMNS, max(1, n))
    rows = math.ceil(n / cols)
    # constrained: the figure's title and shared axis labels get their own room instead of
    # overprinting the panels' titles and tick labels
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), sharex=True, sharey=sharey,
                             squeeze=False, layout="constrained")
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    for ax in flat[max(0, n - cols):n]:   # the lowest panel of each column shows the x axis' labels
        ax.xaxis.set_tick_params(labelbottom=True)
    return fig, flat[:n]


CONTEXT_LINE = {"color": "#cccccc", "linewidth": 0.8}  # the other schedulers behind a panel's own


def _plot(ax, xy, steps: bool, **kw):
    if steps:
        ax.step(*xy, where="post", **kw)
    else:
        ax.plot(*xy, markevery=max(1, len(xy[0]) // 30), markersize=3, **kw)


def lines(series: dict, palette: Palette, title: str, xlabel: str, ylabel: str, steps: bool = True,
          size=(7, 3.5)):
    """(fig, axes): one axis with a line per scheduler for a few of them; past SMALL_MULTIPLES_FROM,
    a panel per scheduler, its line in its colour over the others' in grey. series: name → (x, y)."""
    names = palette.order(series)

    def look(s):
        return {"color": palette[s].colour, **({} if steps else {"marker": palette[s].marker})}

    if len(names) < SMALL_MULTIPLES_FROM:
        fig, ax = plt.subplots(figsize=size)
        for s in names:
            _plot(ax, series[s], steps, label=s, **look(s))
        if names:
            ax.legend(fontsize="small")
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        return fig, [ax]
    fig, axes = panel_grid(len(names))
    for ax, s in zip(axes, names):
        for other in names:
            if other != s:
                _plot(ax, series[other], True, **CONTEXT_LINE)
        _plot(ax, series[s], steps, linewidth=1.4, **look(s))
        ax.set_title(s, fontsize="medium", color=palette[s].colour)
    fig.suptitle(f"{title} (grey: the others)")
    fig.supxlabel(xlabel, fontsize="medium")
    fig.supylabel(ylabel, fontsize="medium")
    return fig, axes


def save(fig, path) -> Path:
    """Write `path` (a .png) at FIGURE_DPI and the same figure as .svg beside it; return the PNG's path."""
    path = Path(path).with_suffix(".png")
    # the tight box once for both files: bbox_inches="tight" would lay the figure out again for each;
    # measured after the layout engine (if any) has placed the axes
    if fig.get_layout_engine() is not None:
        fig.draw_without_rendering()
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
    fig.savefig(path, dpi=FIGURE_DPI, bbox_inches=box)
    fig.savefig(path.with_suffix(".svg"), bbox_inches=box)
    plt.close(fig)
    return path
