"""Evidence conditions and Tool-Use tools on the real store: point-in-time, oracle = snapshot,
Indicator-RAG independent of the golden list, tools clamp and never raise, the router."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import date
from pathlib import Path

import duckdb
import pytest
from filelock import FileLock

from fintrade_tui.config import Config, load_config
from fintrade_tui.errors import UserError
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.indicators import KIND
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.retrieval.index import Index
from fintrade_tui.runs.conditions import ConditionContext, build_evidence
from fintrade_tui.runs.indicator_rag import TABLE6
from fintrade_tui.runs.prompts import build_prompt
from fintrade_tui.runs.router import route
from fintrade_tui.runs.tools import MAX_CALLS, TOOL_SPECS, call_tool, long_label, tool_item
from fintrade_tui.store.queries import signals_between, snapshot
from fintrade_tui.workspace.evidence import CONDITIONS, approx_tokens
from fintrade_tui.workspace.questions import RESOLVED, Question
from tests.conftest import BUNDLE, needs_bundle, shared_folder, write_config

pytestmark = needs_bundle
SEEDS = BUNDLE / "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"
ISO = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
TEN_K = "0000320193-24-000123"  # AAPL's 10-K filed 2024-11-01
KEPT = ["0000320193-24-000081", TEN_K, "0000320193-25-000008"]


def _hand(qid: str, as_of: date, start: date, golden: list[str], text: str = "") -> Question:
    return Question(
        id=qid,
        source="test",
        category="FT",
        text=text or "How do Apple's RSI, momentum, ROA and ROE look after its latest filing?",
        tickers=["AAPL"],
        scope="company",
        as_of=as_of,
        window_start=start,
        window_end=as_of,
        golden=golden,
        status=RESOLVED,
    )


# large chunks, each embedded from its first 64 tokens (the default 256 costs 3x the CPU): these
# tests check what retrieval may return (dates, tracks, budgets, notes), not how well it ranks
INDEX_SETTINGS = "  child_tokens: 1000\n  embed_tokens: 64\n  market_since: 2024-06-01\n"


def small_index(built_store: Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of a small AAPL retrieval index (`INDEX_SETTINGS`): three filings around the 10-K
    of 2024-11-01 (one before, one after), built once per run for this module and
    test_common_evidence (under a lock with pytest-xdist, as `built_store` is); each caller
    gets its own copy, as each worker has its own store."""
    shared = shared_folder(tmp_path_factory, "aapl-index")
    with FileLock(shared.parent / "aapl-index.lock"):
        if not (shared / "lancedb" / "manifest.json").is_file():  # written last by a build
            cfg = load_config(
                write_config(
                    shared,
                    built_store.bundle,
                    built_store.store,
                    f"retrieval:\n  index: {shared / 'lancedb'}\n{INDEX_SETTINGS}",
                )
            )
            some = duckdb.connect()  # the store through views, with only the chosen filings
            some.execute("ATTACH ? AS s (READ_ONLY)", [str(cfg.store)])
            tables = some.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 's'"
            ).fetchall()
            for (t,) in tables:
                if t == "filings":
                    some.execute(
                        "CREATE TABLE filings AS SELECT * FROM s.filings"
                        " WHERE list_contains(?, accession)",
                        [KEPT],
                    )
                else:
                    some.execute(f"CREATE VIEW {t} AS SELECT * FROM s.{t}")
            Index(cfg).build(some, tickers=["AAPL"])
            some.close()
    folder = tmp_path_factory.mktemp("aapl_index")
    shutil.copytree(shared / "lancedb", folder / "lancedb")
    return folder / "lancedb"


@pytest.fixture(scope="module")
def ctx(built_store: Config, tmp_path_factory) -> ConditionContext:
    """The shared store and the small AAPL retrieval index (`small_index`)."""
    index = small_index(built_store, tmp_path_factory)
    cfg = load_config(
        write_config(
            index.parent,
            built_store.bundle,
            built_store.store,
            f"retrieval:\n  index: {index}\n{INDEX_SETTINGS}",
        )
    )
    con = duckdb.connect(str(cfg.store), read_only=True)
    yield ConditionContext(cfg, con)
    con.close()


@pytest.fixture(scope="module")
def questions(ctx: ConditionContext) -> dict[str, Question]:
    """Seeds F1 (AAPL), F2 (MSFT + GOOG), F23 (semiconductor scan), T2 (one-week scan), and
    AAPL by hand around its 10-K of 2024-11-01: the day before, the day, a one-day window."""
    r = Resolver(ctx.con, ctx.cfg.questions.reference_date)
    wanted = ("F1", "F2", "F23", "T2")
    qs = {q.id: r.evidence(r.resolve(q)) for q in read_questions(SEEDS) if q.id in wanted}
    gold = ["roa", "roe", "rsi_14", "momentum_20d"]
    hand = [
        _hand("H-before", date(2024, 10, 31), date(2024, 8, 1), gold),
        _hand("H-day", date(2024, 11, 1), date(2024, 8, 1), gold),
        _hand("H-one-day", date(2024, 11, 1), date(2024, 11, 1), ["earnings_price", "obv"]),
    ]
    return qs | {q.id: r.evidence(q) for q in hand}


def test_oracle_is_exactly_the_golden_values(ctx, questions) -> None:
    for qid in ("F1", "H-before", "H-day", "H-one-day"):
        q = questions[qid]
        ev = build_evidence("oracle", q, ctx)
        assert ev.ids == [f"oracle:{t}:{g}" for t in q.tickers for g in q.golden], qid
        snap = snapshot(ctx.con, "AAPL", q.as_of)
        for item in ev.items:
            name = item.meta["indicator"]
            want = (
                snap["fundamentals"][name]["value"]
                if KIND[name] == "ratio"
                else snap["signals"][name]
            )
            assert item.meta["value"] == want, (qid, name)
            head = f"{item.ticker} {long_label(name)} "
            assert item.text.startswith(head), item.text
            shown = float(item.text.removeprefix(head).split()[0].replace(",", ""))
            assert item.track == "oracle" and shown == pytest.approx(want, rel=1e-5)
    assert questions["F1"].golden == ["roa", "roe", "earnings_price"]
    roa = build_evidence("oracle", questions["F1"], ctx).items[0]
    assert "accession 0000320193-" in roa.text and "filed 2025-" in roa.text
    # the 10-K filed on 2024-11-01 is visible on that day and not the day before
    day = {i.id: i for i in build_evidence("oracle", questions["H-day"], ctx).items}
    before = {i.id: i for i in build_evidence("oracle", questions["H-before"], ctx).items}
    assert day["oracle:AAPL:roa"].meta["accession"] == TEN_K
    assert before["oracle:AAPL:roa"].meta["accession"] != TEN_K


def test_oracle_states_each_figure_once_with_its_period_and_filing_date(ctx, questions) -> None:
    """One statement per figure: the value once, its period and the day it became known in one
    phrase, and the prompt adds no second date (a small model read "available from D" beside
    "period ended P" as two periods)."""
    q = questions["H-day"]  # AAPL as of 2024-11-01, the day its FY2024 10-K was filed
    items = {i.meta["indicator"]: i for i in build_evidence("oracle", q, ctx).items}
    for name in ("roa", "roe"):
        i = items[name]
        value = f"{i.meta['value']:.6g}"
        assert i.title == f"AAPL {long_label(name)} = {value}"  # the evidence panel's line
        assert i.text == (
            f"AAPL {long_label(name)} {value} for the quarter ended 2024-09-28, from the 10-K"
            f" filed 2024-11-01 (FY2024 Q4; accession {TEN_K})"
        )
    rsi = items["rsi_14"]
    assert rsi.text.startswith(f"AAPL {long_label('rsi_14')} {rsi.meta['value']:.6g}")
    assert "at the close of 2024-11-01 (source: " in rsi.text
    block = build_prompt(q, build_evidence("oracle", q, ctx), "L5").messages[1]["content"]
    evidence = block.split("<evidence>")[1].split("</evidence>")[0]
    assert "available from" not in evidence
    assert evidence.count("[E1] AAPL ") == 1 and "=" not in evidence  # the text alone
    for i in items.values():  # each figure and each date once in the prompt
        assert evidence.count(f"{i.meta['value']:.6g}") == 1
    ratios = [i for i in items.values() if i.meta.get("period_end")]
    assert len(ratios) == 2 and evidence.count("2024-09-28") == 2  # each ratio's period once


def test_oracle_supplied_context_becomes_context_items(ctx) -> None:
    q = replace(
        _hand("H-ctx", date(2024, 11, 1), date(2024, 11, 1), []),
        oracle={"supplied": {"context1": {"value": "Revenue was $391bn.", "source": "secque"}}},
    )
    ev = build_evidence("oracle", q, ctx)
    assert [(i.id, i.track, i.text) for i in ev.items] == [
        ("context:context1", "context", "Revenue was $391bn.")
    ]


@pytest.mark.parametrize("condition", CONDITIONS)
def test_nothing_after_as_of(ctx, questions, condition: str) -> None:
    for qid, q in questions.items():
        ev = build_evidence(condition, q, ctx)
        for item in ev.items:
            assert item.available_from is not None and item.available_from <= q.as_of, item.id
            shown = item.text + " " + item.title + " " + str(item.meta.get("parent_text", ""))
            late = [d for d in ISO.findall(shown) if d > q.as_of.isoformat()]
            assert not late, (qid, condition, item.id, late)
            assert TEN_K not in item.text or q.as_of >= date(2024, 11, 1), (qid, item.id)
        if condition in ("no_rag", "tool_use"):
            assert ev.items == []


def test_rag_items_and_missing_tickers(ctx, questions) -> None:
    ev = build_evidence("rag", questions["H-day"], ctx)
    assert ev.items and {i.track for i in ev.items} <= {"filing", "market"}
    assert sum(approx_tokens(i.text) for i in ev.items) <= ctx.cfg.runs.context_tokens
    for i in ev.items:
        if i.track == "filing":
            assert re.match(r"AAPL 10-[KQ] filed \d{4}-\d{2}-\d{2}", i.title)
            assert i.available_from == date.fromisoformat(i.title.split()[3])
            assert {"scores", "section", "accession", "parent_text"} <= set(i.meta)
        else:
            assert re.match(r"AAPL market \S+ \(\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\)", i.title)
    # MSFT and GOOG are in the store but not in this AAPL-only index: a note, not a crash
    ev = build_evidence("rag", questions["F2"], ctx)
    assert ev.items == [] and any("MSFT" in n and "GOOG" in n for n in ev.notes)
    never = replace(ctx, cfg=ctx.cfg.model_copy(deep=True))
    never.cfg.retrieval.index = ctx.cfg.retrieval.index.parent / "none"
    ev = build_evidence("rag", questions["H-day"], never)
    assert ev.items == [] and "never built" in ev.notes[0]


def test_rag_over_the_universe_leaves_out_unindexed_tickers_in_one_search(
    ctx, questions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan names ~100 tickers, this index holds AAPL alone: one search, over AAPL, and one
    note naming the rest (asking retrieval with each in turn cost a search per ticker)."""
    from fintrade_tui.retrieval import search

    scan = questions["T2"]
    assert "AAPL" in scan.tickers and len(scan.tickers) > 50
    searched: list[list[str]] = []
    real = search.retrieve

    def counted(cfg, text, tickers, *args, **kwargs):
        searched.append(list(tickers))
        return real(cfg, text, tickers, *args, **kwargs)

    monkeypatch.setattr(search, "retrieve", counted)
    ev = build_evidence("rag", scan, ctx)
    assert searched == [["AAPL"]]
    assert ev.items and {i.ticker for i in ev.items} == {"AAPL"}
    (note,) = [n for n in ev.notes if n.startswith("not in the retrieval index, left out: ")]
    others = [t for t in scan.tickers if t != "AAPL"]
    assert note.endswith(f"{', '.join(others[:20])} and {len(others) - 20} more")


def test_indicator_rag_ignores_golden_and_fits_budget(ctx, questions) -> None:
    q = questions["H-day"]
    a = build_evidence("indicator_rag", q, ctx)
    b = build_evidence("indicator_rag", replace(q, golden=["obv"], oracle={}), ctx)
    assert [(i.id, i.text) for i in a.items] == [(i.id, i.text) for i in b.items]
    assert a.ids == [
        "store:AAPL:fundamentals:2024-11-01",
        "store:AAPL:signals:2024-08-01..2024-11-01",
    ]
    header = a.items[1].text.splitlines()[1]
    assert all(f" {name} " in header for name in ["adj_close", *TABLE6])
    assert f"| {TEN_K}" in a.items[0].text or TEN_K in a.items[0].text
    one_day = build_evidence("indicator_rag", questions["H-one-day"], ctx)
    assert len(one_day.items[1].text.splitlines()) == 3 + 5  # head, header, rule, 5 days
    scan = build_evidence("indicator_rag", questions["T2"], ctx)
    assert scan.ids == ["store:scan:2025-09-12"]
    assert sum(approx_tokens(i.text) for i in scan.items) <= ctx.cfg.runs.context_tokens
    small = replace(ctx, cfg=ctx.cfg.model_copy(deep=True))
    small.cfg.runs.context_tokens = 400
    cut = build_evidence("indicator_rag", questions["F2"], small)
    assert sum(approx_tokens(i.text) for i in cut.items) <= 400
    assert any("cut to fit 400 tokens" in n for n in cut.notes)


def test_unknown_condition(ctx, questions) -> None:
    with pytest.raises(UserError, match="'vibes'.*no_rag, rag, indicator_rag, tool_use, oracle"):
        build_evidence("vibes", questions["F1"], ctx)


def test_call_tool_is_point_in_time_and_never_raises(ctx) -> None:
    con, as_of = ctx.con, date(2024, 11, 1)
    snap = snapshot(con, "AAPL", as_of)
    res = call_tool(
        con, "get_signal", {"ticker": "AAPL", "name": "rsi_14", "date": "2025-06-02"}, as_of
    )
    assert res["clamped_to_as_of"] is True and res["date"] == "2024-11-01"
    assert res["value"] == snap["signals"]["rsi_14"]
    res = call_tool(con, "get_fundamental", json.dumps({"ticker": "aapl", "name": "ROE"}), as_of)
    f = snap["fundamentals"]["roe"]
    assert (res["value"], res["accession"], res["date"]) == (f["value"], TEN_K, "2024-11-01")
    assert "clamped_to_as_of" not in res
    past = call_tool(
        con, "get_signal", {"ticker": "AAPL", "name": "macd", "date": "2024-09-03"}, as_of
    )
    row = signals_between(con, "AAPL", date(2024, 9, 3), date(2024, 9, 3))[0]
    assert past["value"] == row["macd"] and past["date"] == "2024-09-03"
    win = call_tool(
        con,
        "get_price_window",
        {"ticker": "AAPL", "start": "2023-01-01", "end": "2026-01-01"},
        as_of,
    )
    assert len(win["rows"]) == 60 and win["downsampled"] and win["clamped_to_as_of"]
    assert win["rows"][-1][0] == "2024-11-01" and win["rows"][0][0] == "2023-01-03"
    scr = call_tool(con, "screen", {"indicator": "momentum_20d", "top": 5}, as_of)
    values = [r["value"] for r in scr["rows"]]
    assert len(values) == 5 and values == sorted(values, reverse=True)
    assert all(r["date"] <= "2024-11-01" for r in scr["rows"])
    top = scr["rows"][0]
    assert top["value"] == snapshot(con, top["ticker"], as_of)["signals"]["momentum_20d"]
    json.dumps([res, past, win, scr])  # small and serialisable
    for name, args in [
        ("nope", {}),
        ("get_signal", {"ticker": "ZZZZ", "name": "rsi_14"}),
        ("get_signal", {"ticker": "AAPL", "name": "roe"}),
        ("get_signal", {"ticker": "AAPL", "name": "rsi_14", "date": "2024-13-01"}),
        ("get_signal", "{not json"),
        ("get_signal", {"ticker": "AAPL", "name": "rsi_14", "when": "today"}),
        ("get_price_window", {"ticker": "AAPL", "start": "2024-10-01", "end": "2024-09-01"}),
        ("screen", {"indicator": "rsi_14", "top": -3}),
        ("get_fundamental", ["AAPL"]),
    ]:
        res = call_tool(con, name, args, as_of)
        assert set(res) == {"error"} and "\n" not in res["error"], (name, args, res)


def test_route_reads_the_text_not_the_golden(questions) -> None:
    q = _hand("H-route", date(2024, 11, 1), date(2024, 8, 1), ["obv"])
    q = replace(q, text="In MAY, is Apple's RSI high and its ROE better than Amazon's?")
    calls = route(q)
    names = [a.get("name") for _, a in calls]
    assert "rsi_14" in names and "roe" in names and "ma_20" not in names
    assert calls == route(replace(q, golden=["macd"]))
    assert all(a.get("date", "2024-11-01") == "2024-11-01" for _, a in calls)
    assert (
        "get_price_window",
        {"ticker": "AAPL", "start": "2024-08-01", "end": "2024-11-01"},
    ) in calls
    plain = route(replace(q, text="What about Apple?"))
    assert [a["name"] for n, a in plain if n != "get_price_window"] == [
        "momentum_20d",
        "rsi_14",
        "roe",
        "earnings_price",
    ]
    cued = route(replace(q, text="Is Apple as profitable as its valuation says?"))
    assert [a["name"] for n, a in cued if n != "get_price_window"][:3] == [
        "roe",
        "roa",
        "earnings_price",
    ]
    scan = route(questions["T2"])
    assert scan and all(n == "screen" for n, _ in scan) and len(scan) <= MAX_CALLS
    assert {a["indicator"] for _, a in scan} >= {"momentum_20d"}
    many = route(replace(questions["F2"], text="RSI MACD OBV EMA ROA ROE E/P B/P D/E momentum"))
    assert len(many) == MAX_CALLS


def test_tool_item_and_specs(ctx) -> None:
    args = {"ticker": "AAPL", "name": "rsi_14", "date": "2030-01-01"}
    res = call_tool(ctx.con, "get_signal", args, date(2024, 11, 1))
    item = tool_item(3, "get_signal", args, res)
    assert (item.id, item.track, item.ticker) == ("tool:3:get_signal", "tool", "AAPL")
    assert item.available_from == date(2024, 11, 1) and "2030" not in item.text
    assert item.meta["arguments"] == args
    names = {s["function"]["name"] for s in TOOL_SPECS}
    assert names == {"get_signal", "get_fundamental", "get_price_window", "screen"}
    json.dumps(TOOL_SPECS)
