"""Chart widgets for the Company screen (textual-plotext).

Each chart draws one panel of a `chart_series` dict (fintrade_tui.store.company): the price
with its MA/EMA overlays, volume with OBV, MACD with its signal line, RSI with 30/70 bands.
Every widget draws with its own `self.plt` (never the global plotext module), and only on the
UI thread: `set_series` is called from a worker-result handler, never from a worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from textual_plotext import PlotextPlot

DATE_FORM = "Y-m-d"


def _pairs(dates: Sequence[date], values: Sequence[float | None]) -> tuple[list[str], list[float]]:
    """Date strings and values where the value is defined (signals start undefined)."""
    xs, ys = [], []
    for d, v in zip(dates, values, strict=True):
        if v is not None:
            xs.append(d.isoformat())
            ys.append(v)
    return xs, ys


class SeriesChart(PlotextPlot):
    """A plot of some fields of a chart series; subclasses say which and how."""

    DEFAULT_CSS = """
    SeriesChart { height: 1fr; width: 1fr; }
    """
    heading = ""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: dict[str, Any] | None = None
        self.message = "loading…"

    @property
    def points(self) -> int:
        """How many days the chart shows (0 before data arrives or for an empty window)."""
        return len(self.series["dates"]) if self.series else 0

    def set_series(self, series: dict[str, Any] | None, message: str = "") -> None:
        """Show `series` (UI thread only); None clears the chart and shows `message`."""
        self.series = series
        self.message = message or ("no prices in this window" if series else "")
        self.redraw()

    def redraw(self) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.date_form(DATE_FORM)
        series = self.series
        if series is not None and self.points:
            ticker = series["ticker"]
            plt.title(f"{ticker} {self.heading}")
            self.draw(plt, series)
        else:
            plt.title(f"{self.heading}: {self.message}")
        self.refresh()

    def draw(self, plt: Any, s: dict[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def line(self, plt: Any, s: dict[str, Any], field: str, **kw: Any) -> None:
        xs, ys = _pairs(s["dates"], s[field])
        if xs:
            plt.plot(xs, ys, **kw)


class PriceChart(SeriesChart):
    """Adjusted close with the 20-day moving average and EMA overlaid."""

    heading = "adj. close · MA 20 · EMA 20"

    def draw(self, plt: Any, s: dict[str, Any]) -> None:
        self.line(plt, s, "adj_close", label="adj close", color="cyan")
        self.line(plt, s, "ma_20", label="MA 20", color="orange")
        self.line(plt, s, "ema_20", label="EMA 20", color="magenta")


class VolumeChart(SeriesChart):
    """Daily volume (filled, left axis) with on-balance volume (line, right axis), each in a
    unit that keeps the tick labels short."""

    heading = "volume · OBV (right axis)"

    def draw(self, plt: Any, s: dict[str, Any]) -> None:
        for field, side, style in (("volume", "left", "blue"), ("obv", "right", "green")):
            xs, ys = _pairs(s["dates"], s[field])
            if not xs:
                continue
            div, unit = _unit(max(abs(y) for y in ys))
            label = f"{'volume' if field == 'volume' else 'OBV'}{unit}"
            ys = [y / div for y in ys]
            plt.plot(xs, ys, label=label, color=style, yside=side, fillx=field == "volume")


def _unit(peak: float) -> tuple[float, str]:
    for div, unit in ((1e9, " (bn)"), (1e6, " (M)"), (1e3, " (k)")):
        if peak >= div:
            return div, unit
    return 1.0, ""


class MacdChart(SeriesChart):
    """MACD (EMA 12 - EMA 26) with its 9-day signal line and the zero line."""

    heading = "MACD · signal"

    def draw(self, plt: Any, s: dict[str, Any]) -> None:
        plt.hline(0, color="gray")
        self.line(plt, s, "macd", label="MACD", color="cyan")
        self.line(plt, s, "macd_signal", label="signal", color="orange")


class RsiChart(SeriesChart):
    """RSI 14 (the paper's simple-mean form) with the 30 and 70 bands."""

    heading = "RSI 14 · 30/70 bands"

    def draw(self, plt: Any, s: dict[str, Any]) -> None:
        plt.ylim(0, 100)
        plt.hline(70, color="red")
        plt.hline(30, color="green")
        self.line(plt, s, "rsi_14", label="RSI 14", color="cyan")


CHARTS = (PriceChart, VolumeChart, MacdChart, RsiChart)
