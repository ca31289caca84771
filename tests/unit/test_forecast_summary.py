"""Forecast-summary on the real store: the T2 prompt shows nothing after its as_of, its last
close is the store's, and every forecast equals statsforecast's own AutoETS on the same series
(and, for ETS(A,N,N) and ETS(A,A,N), the textbook formulas)."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import date, timedelta

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, percentileofscore

from fintrade_tui.config import Config
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.runs.conditions import ConditionContext, build_evidence
from fintrade_tui.runs.forecast_summary import WINDOW
from fintrade_tui.runs.prompts import build_prompt
from fintrade_tui.workspace.evidence import CONDITIONS, LABELS
from fintrade_tui.workspace.questions import Question
from tests.conftest import BUNDLE, needs_bundle

pytestmark = needs_bundle
SEEDS = BUNDLE / "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"
ISO = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
LAST = re.compile(r"^Last close (\d{4}-\d{2}-\d{2}): ([\d.]+) \(adjusted ([\d.]+)\)\.$", re.M)


@pytest.fixture(scope="module")
def ctx(built_store: Config) -> ConditionContext:
    con = duckdb.connect(str(built_store.store), read_only=True)
    yield ConditionContext(built_store, con)
    con.close()


@pytest.fixture(scope="module")
def t2(ctx: ConditionContext) -> Question:
    r = Resolver(ctx.con, ctx.cfg.questions.reference_date)
    (q,) = [r.evidence(r.resolve(q)) for q in read_questions(SEEDS) if q.id == "T2"]
    assert q.as_of == date(2025, 9, 12) and len(q.tickers) > 20
    return q


@pytest.fixture(scope="module")
def t2_evidence(ctx, t2):
    return build_evidence("forecast_summary", t2, ctx)


def _series(con, ticker: str, as_of: date) -> pd.DataFrame:
    """The test's own read: every price row of `ticker` to as_of, the last WINDOW of them."""
    df = con.execute(
        "SELECT date, close, adj_close FROM prices WHERE ticker = ? ORDER BY date", [ticker]
    ).df()
    df["date"] = pd.to_datetime(df["date"]).dt.date
    return df[df["date"] <= as_of].tail(WINDOW).reset_index(drop=True)


def test_registered() -> None:
    assert {"long_context", "forecast_summary"} <= set(CONDITIONS)
    assert LABELS["forecast_summary"] == "Forecast-summary"


def test_t2_prompt_shows_nothing_after_as_of(ctx, t2, t2_evidence) -> None:
    ev = t2_evidence
    prompt = build_prompt(t2, ev, "L5", ctx.cfg.runs.context_tokens)
    assert prompt.evidence_ids == ev.ids  # the builder's budget is the prompt's
    later = ctx.con.execute(
        "SELECT count(*) FROM prices WHERE ticker = ? AND date > ?", [t2.tickers[0], t2.as_of]
    ).fetchone()[0]
    assert later > 20  # the store does hold the future: the test can catch a leak
    dates = ISO.findall(prompt.text)
    assert dates and max(dates) <= t2.as_of.isoformat()
    last = LAST.findall(prompt.text)
    assert len(last) == len(ev.items) >= 5
    for item, (day, close, adj) in zip(ev.items, last, strict=True):
        assert item.track == "forecast" and "model forecast, not data" in item.text
        want = ctx.con.execute(
            "SELECT date, close, adj_close FROM prices WHERE ticker = ? AND date <= ?"
            " ORDER BY date DESC LIMIT 1",
            [item.ticker, t2.as_of],
        ).fetchone()
        assert date.fromisoformat(day) == want[0] == item.available_from <= t2.as_of
        assert float(close) == round(want[1], 2) and float(adj) == round(want[2], 2)
        own = _series(ctx.con, item.ticker, t2.as_of)
        assert item.meta["first_date"] == own["date"].iloc[0]
        assert item.meta["days"] == len(own) == WINDOW


def test_forecast_equals_statsforecast(ctx, t2, t2_evidence) -> None:
    from statsforecast.models import AutoETS

    for item in t2_evidence.items[:6]:
        y = np.log(_series(ctx.con, item.ticker, t2.as_of)["adj_close"].to_numpy())
        model = AutoETS(model="AZN").fit(y)
        fit = model.model_
        fc = model.predict(h=20, level=[80, 95])
        kind = fit["components"]
        alpha, beta = fit["par"][0], fit["par"][1]
        level, trend = (fit["states"][-1][0], fit["states"][-1][1] if kind[1] != "N" else 0.0)
        name = {"ANNN": "ETS(A,N,N)", "AANN": "ETS(A,A,N)", "AAND": "ETS(A,Ad,N)"}[kind]
        assert item.meta["model"] == name and f"{name} chosen by AICc" in item.text
        assert item.meta["trend"] == pytest.approx(trend, rel=1e-9)
        assert item.meta["params"]["sigma2"] == pytest.approx(fit["sigma2"], rel=1e-12)
        for h in (5, 20):
            got = item.meta["forecast"][str(h)]
            assert got["mean"] == pytest.approx(math.exp(fc["mean"][h - 1]), rel=1e-9)
            for lv in (80, 95):
                for side in ("lo", "hi"):
                    want = math.exp(fc[f"{side}-{lv}"][h - 1])
                    assert got[f"{side}{lv}"] == pytest.approx(want, rel=1e-9)
            if kind in ("ANNN", "AANN"):  # the textbook formulas (Hyndman & Athanasopoulos 8.7)
                assert fc["mean"][h - 1] == pytest.approx(level + h * trend, rel=1e-12)
                b = beta if kind == "AANN" else 0.0
                sd = math.sqrt(fit["sigma2"] * (1 + sum((alpha + b * j) ** 2 for j in range(1, h))))
                for lv in (80, 95):
                    z = norm.ppf(0.5 + lv / 200)
                    assert got[f"lo{lv}"] == pytest.approx(math.exp(level + h * trend - z * sd))
                    assert got[f"hi{lv}"] == pytest.approx(math.exp(level + h * trend + z * sd))
            # the text shows the same numbers, rounded to cents
            line = f"In {h} trading days: {got['mean']:.2f} (80%: {got['lo80']:.2f} to"
            assert line in item.text
        if kind == "ANNN":
            assert "Fitted trend: none" in item.text and got["mean"] == pytest.approx(
                math.exp(level), rel=1e-12
            )
        else:
            yearly = math.expm1(252 * trend)
            assert f"({100 * yearly:+.1f}% per year annualised" in item.text


def test_volatility_regime_is_the_signals_percentile(ctx, t2, t2_evidence) -> None:
    for item in t2_evidence.items[:4]:
        vols = ctx.con.execute(
            "SELECT realized_vol_20d FROM signals WHERE ticker = ? AND date <= ?"
            " AND realized_vol_20d IS NOT NULL ORDER BY date DESC LIMIT 252",
            [item.ticker, item.available_from],
        ).df()["realized_vol_20d"]
        now = vols.iloc[0]
        pct = percentileofscore(vols, now, kind="weak")
        regime = "low" if pct < 20 else "high" if pct > 80 else "normal"
        m = item.meta
        assert m["vol"] == now and m["vol_percentile"] == pytest.approx(pct, rel=1e-12)
        assert f"Volatility regime: {regime}; 20-day realized volatility {100 * now:.1f}%" in (
            item.text
        )
        assert f"percentile {pct:.0f} of its last 252" in item.text


def test_budget_and_short_history(ctx, t2) -> None:
    small = ConditionContext(ctx.cfg, ctx.con, budget_tokens=300)
    ev = build_evidence("forecast_summary", t2, small)
    assert 1 <= len(ev.items) < len(t2.tickers)
    assert ev.ids[0] == f"forecast:{t2.tickers[0]}:2025-09-12"
    note = next(n for n in ev.notes if n.startswith("forecasts left out"))
    assert t2.tickers[len(ev.items)] in note
    first = ctx.con.execute("SELECT min(date) FROM prices WHERE ticker = 'AAPL'").fetchone()[0]
    early = replace(t2, tickers=["AAPL"], as_of=first + timedelta(days=30))
    ev = build_evidence("forecast_summary", early, ctx)
    assert ev.items == [] and any("fewer than 60 closes" in n and "AAPL" in n for n in ev.notes)
