"""Tables for people: numbers in human units with the unit in the header, split to fit a page.

summary.csv keeps seconds and bytes for programs; the HTML report shows
hours, TB and core-hours, never `61651200000000.00`. A table wider than a
page is cut into several tables that repeat its key columns, so nothing
runs off a 1 400 px window.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from dataclasses import dataclass

import pandas as pd

HOUR = 3600.0
TB = 1e12
# Width a table may take, in px: a 1 400 px window less the page's margins.
PAGE_WIDTH = 1240
_CHAR_PX, _CELL_PAD_PX = 7.2, 14
HEADER_CHARS = 14  # headers are broken into lines this long: a column is as wide as its numbers, not its title
_WRAP_CHARS = 40  # longer text wraps (overflow-wrap: anywhere), numbers are never that long
_NNBSP = "\u202f"  # thousands separator that never breaks a number across lines


def number(v, integer: bool = False) -> str:
    """A value at a precision a reader can use: 23 622, 23.6, 2.43, 0.0123; – for missing."""
    if v is None or isinstance(v, str):
        return "–" if v in (None, "") else v
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if integer or v == 0:
        return _group(f"{v:,.0f}")
    a = abs(v)
    if a >= 100:
        text = f"{v:,.0f}"
    elif a >= 10:
        text = f"{v:.1f}"
    elif a >= 1:
        text = f"{v:.2f}"
    elif a >= 1e-6:
        text = f"{v:.{2 - math.floor(math.log10(a))}f}"
    else:
        return "< 0.000001" if v > 0 else "> −0.000001"
    return _group(text)


def fixed(v, digits: int) -> str:
    """v with `digits` decimals (percentages of the paper's tables), – for missing."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(v):
        return "–"
    text = f"{v:,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        text = text.lstrip("-")   # a tiny negative rounded to zero is 0.000, not −0.000
    return _group(text)


def _group(text: str) -> str:
    return text.replace(",", _NNBSP).replace("-", "−")


def change(value, base, counts: bool = False) -> str:
    """value against base: a signed difference for counts, a signed percentage otherwise."""
    try:
        value, base = float(value), float(base)
    except (TypeError, ValueError):
        return ""
    if math.isnan(value) or math.isnan(base):
        return ""
    if counts:
        d = value - base
        return "±0" if d == 0 else ("+" if d > 0 else "") + number(d, integer=True)
    if base == 0:
        return "±0 %" if value == 0 else ""
    pct = 100.0 * (value - base) / abs(base)
    if abs(pct) < 0.05:
        return "±0 %"
    return ("+" if pct > 0 else "") + _group(f"{pct:.1f}") + " %"


@dataclass(frozen=True)
class Column:
    """A summary key shown under `header` (which names the unit), multiplied by `scale`."""

    key: str
    header: str
    scale: float = 1.0
    integer: bool = False

    def show(self, v) -> str:
        try:
            return number(float(v) * self.scale, self.integer)
        except (TypeError, ValueError):
            return number(v)


def frame(rows, columns: list[Column], keys: list[tuple[str, str]]) -> pd.DataFrame:
    """rows: dicts; keys: (field, header) shown as text first; then the columns, formatted."""
    out = {header: [str(r.get(field, "")) for r in rows] for field, header in keys}
    for c in columns:
        out[c.header] = [c.show(r.get(c.key)) for r in rows]
    return pd.DataFrame(out, columns=[h for _, h in keys] + [c.header for c in columns])


def _lines(cell: str) -> list[str]:
    """The lines a cell shows: split at <br>, tags dropped, entities read."""
    return [html.unescape(re.sub(r"<[^>]+>", "", part)) for part in re.split(r"<br\s*/?>", cell)]


def header_lines(header) -> list[str]:
    """A header broken between words (or after hyphens) into lines of at most HEADER_CHARS; a longer word stays whole."""
    return textwrap.wrap(str(header), HEADER_CHARS, break_long_words=False) or [""]


def _width(df: pd.DataFrame, col) -> float:
    """Estimated px of a column: its header's longest line, or its widest cell line."""
    chars = max(len(line) for line in header_lines(col))
    for v in df[col]:
        chars = max([chars] + [min(len(t), _WRAP_CHARS) for t in _lines(str(v))])
    return chars * _CHAR_PX + _CELL_PAD_PX


def split(df: pd.DataFrame, keep: int = 1, width: float = PAGE_WIDTH) -> list[pd.DataFrame]:
    """df cut into column chunks no wider than `width`, each repeating the first `keep` columns."""
    cols = list(df.columns)
    key, rest = cols[:keep], cols[keep:]
    base = sum(_width(df, c) for c in key)
    chunks, current, used = [], [], base
    for c in rest:
        w = _width(df, c)
        if current and used + w > width:
            chunks.append(current)
            current, used = [], base
        current.append(c)
        used += w
    if current or not chunks:
        chunks.append(current)
    return [df[key + chunk] for chunk in chunks]


def to_html(df: pd.DataFrame, keep: int = 1, raw: bool = False, css: str = "") -> str:
    """The table, split to fit the page. raw: cells are HTML already (else they are escaped)."""
    if df is None or df.empty:
        return "<p><em>nothing to show</em></p>"
    parts = []
    for chunk in split(df, keep):
        head = "".join(("<th class='key'>" if i < keep else "<th>") + "<br>".join(html.escape(x) for x in header_lines(c))
                       + "</th>" for i, c in enumerate(chunk.columns))
        body = []
        for row in chunk.itertuples(index=False):
            cells = []
            for i, v in enumerate(row):
                text = str(v) if raw else html.escape(str(v))
                cells.append(f"<td class='key'>{text}</td>" if i < keep else f"<td>{text}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        parts.append(f"<table class='{css}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    return "\n".join(parts)
