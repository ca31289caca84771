"""SVG chart geometry room: the Company screen's panels (price with MA/EMA 20, MACD with its
signal line, RSI 14 with its 30/70 bands) turned into coordinates for vector graphics, from the
same `chart_series` dict the TUI charts draw (fintrade_tui.store.company).

Only numbers come out of here; the template (templates/_charts.html.j2) writes the SVG, so
every label passes through the template engine's escaping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from typing import Any

WIDTH, HEIGHT = 720, 210
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 64, 36, 36, 26

# name, series field, colour, dashed
PANELS: dict[str, dict[str, Any]] = {
    "price": {
        "title": "Adjusted close with MA 20 and EMA 20",
        "lines": [
            ("Adj. close", "adj_close", "#1f77b4", False),
            ("MA 20", "ma_20", "#ff7f0e", False),
            ("EMA 20", "ema_20", "#2ca02c", True),
        ],
        "bands": [],
    },
    "macd": {
        "title": "MACD (12, 26) with its 9-day signal",
        "lines": [
            ("MACD", "macd", "#9467bd", False),
            ("Signal", "macd_signal", "#d62728", True),
        ],
        "bands": [0.0],
    },
    "rsi": {
        "title": "RSI 14 with 30 / 70 bands",
        "lines": [("RSI 14", "rsi_14", "#8c564b", False)],
        "bands": [30.0, 70.0],
        "range": (0.0, 100.0),
    },
}


@dataclass
class Line:
    name: str
    colour: str
    dashed: bool
    segments: list[str]  # "x,y x,y ..." polylines, split where the signal is undefined
    last: float | None  # the last defined value, for the legend


@dataclass
class Panel:
    key: str
    title: str
    ticker: str
    width: int = WIDTH
    height: int = HEIGHT
    lines: list[Line] = field(default_factory=list)
    bands: list[tuple[float, str]] = field(default_factory=list)  # (y, label)
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    x_ticks: list[tuple[float, str]] = field(default_factory=list)
    first: str = ""
    last: str = ""
    plot: tuple[float, float, float, float] = (0, 0, 0, 0)  # left, top, right, bottom


def _nice_ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About `n` round values between lo and hi (1, 2, 5 × a power of ten apart)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _label(v: float) -> str:
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.1f}B"
    if a >= 1e6:
        return f"{v / 1e6:.1f}M"
    if a >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}".rstrip("0").rstrip(".") if a else "0"


def panel(series: dict[str, Any], key: str) -> Panel | None:
    """One panel of `series` as coordinates; None when the window has no defined value."""
    spec = PANELS[key]
    dates: list[date] = series["dates"]
    values = {f: series[f] for _, f, _, _ in spec["lines"]}
    defined = [v for vs in values.values() for v in vs if v is not None]
    if not dates or not defined:
        return None
    lo, hi = spec.get("range") or (min(defined + spec["bands"]), max(defined + spec["bands"]))
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    margin = 0 if "range" in spec else (hi - lo) * 0.05
    lo, hi = lo - margin, hi + margin
    left, top = PAD_LEFT, PAD_TOP
    right, bottom = WIDTH - PAD_RIGHT, HEIGHT - PAD_BOTTOM
    n = len(dates)

    def x(i: int) -> float:
        return left + (right - left) * (i / (n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return bottom - (bottom - top) * (v - lo) / (hi - lo)

    out = Panel(key, spec["title"], series["ticker"], plot=(left, top, right, bottom))
    for name, f, colour, dashed in spec["lines"]:
        segments: list[str] = []
        current: list[str] = []
        for i, v in enumerate(values[f]):
            if v is None:
                if current:
                    segments.append(" ".join(current))
                current = []
            else:
                current.append(f"{x(i):.1f},{y(v):.1f}")
        if current:
            segments.append(" ".join(current))
        last = next((v for v in reversed(values[f]) if v is not None), None)
        out.lines.append(Line(name, colour, dashed, segments, last))
    out.bands = [(round(y(b), 1), _label(b)) for b in spec["bands"]]
    out.y_ticks = [(round(y(t), 1), _label(t)) for t in _nice_ticks(lo, hi)]
    step = max(1, n // 5)
    out.x_ticks = [(round(x(i), 1), dates[i].isoformat()) for i in range(0, n, step)]
    out.first, out.last = dates[0].isoformat(), dates[-1].isoformat()
    return out


def panels(series: dict[str, Any] | None) -> list[Panel]:
    """The price, MACD and RSI panels of a chart series (those with data)."""
    if not series:
        return []
    return [p for p in (panel(series, k) for k in PANELS) if p is not None]
