"""HTML case studies and view reports on the hand-populated workspace (populate() of
test_failures_export.py) and the suite's store: every element is in the file, hostile text stays
text, the charts' coordinates follow the series, and the view's matrix is `report --json`'s.

What a browser shows of these files is tested in tests/browser/test_html_report.py."""

from __future__ import annotations

import html
import json
import re
from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.exports import svg_charts
from fintrade_tui.exports.html_report import answer_parts, write_case_html
from fintrade_tui.store.db import connect
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.unit.test_failures_export import AUDIT_R02, EXPECTED, RUNS, populate

HOSTILE = (
    "<script>window.__pwned = 1</script></div></section><b>bold?</b> [b]markup[/b] "
    '\x1b[31mred\x1b[0m & <img src=x onerror="window.__pwned=2">'
)


def add_hostile_run(ws: duckdb.DuckDBPyConnection) -> None:
    """r09: a RAG answer to F1 whose answer and passage hold markup, a script and ANSI."""
    runs = RunStore(ws)
    runs.start(
        {
            "id": "r09",
            "question_id": "F1",
            "condition": "rag",
            "model": "gamma",
            "model_string": "script/gamma",
            "params": {},
            "level": "L3",
            "as_of": date(2024, 11, 1),
            "prompt": "prompt",
            "prompt_hash": "def456",
            "evidence_ids": ["chunk:hostile"],
            "evidence": {
                "condition": "rag",
                "items": [
                    {
                        "id": "chunk:hostile",
                        "track": "filing",
                        "text": "Passage says: " + HOSTILE,
                        "title": "AAPL 10-K filed 2024-11-01, Item 1A",
                        "ticker": "AAPL",
                        "available_from": "2024-11-01",
                        "meta": {"accession": "0000320193-24-000123", "section": "Item 1A"},
                    }
                ],
                "notes": [],
            },
            "started_at": datetime(2025, 1, 3, 9, 0, 0),
        }
    )
    runs.finish("r09", status="completed", answer="Answer: " + HOSTILE, ttft=0.5, duration=2.0,
                tokens_in=1000, tokens_out=80, retries=0)  # fmt: skip
    ScoreStore(ws).save(
        Score("r09", "llm", "judge", 1, 1, 1, 1, detail={"justifications": {"accuracy": HOSTILE}})
    )


@pytest.fixture
def case_cfg(built_store: Config, tmp_path: Path) -> Config:
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = tmp_path / "workspace.duckdb"
    con = open_workspace(cfg.workspace)
    populate(con)
    add_hostile_run(con)
    con.close()
    return cfg


def visible(page: str) -> str:
    """The page's text as a reader sees it: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _write(cfg: Config, ids: list[str], path: Path) -> str:
    with connect(cfg.store, read_only=True) as store, open_workspace(cfg.workspace) as ws:
        write_case_html(cfg, ws, ids, path, store_con=store)
    return path.read_text(encoding="utf-8")


def test_answer_parts_cut_the_answer_at_the_audit_spans() -> None:
    answer = dict(RUNS_BY_ID["r02"])["answer"]
    parts = answer_parts(answer, AUDIT_R02)
    assert "".join(p["text"] for p in parts) == answer
    marked = [(p["text"], p["claim"]["verdict"]) for p in parts if p["claim"]]
    assert marked == [("0.90", "CONTRADICTED"), ("1.87", "SUPPORTED")]
    # a span past the end of an edited answer marks nothing and loses no text
    assert answer_parts("short", AUDIT_R02) == [{"text": "short", "claim": None}]


RUNS_BY_ID = {r[0]: {"answer": r[5]} for r in RUNS}


def test_a_case_study_holds_every_pane_evidence_score_audit_and_the_company(
    case_cfg: Config, tmp_path: Path
) -> None:
    page = _write(case_cfg, ["r01", "r02", "r08", "r09"], tmp_path / "case.html")
    for rid in ("r01", "r02", "r08", "r09"):
        assert f'id="run-{rid}"' in page
    assert "Apple's ROE is 0.90 and its D/E is 1.87." in visible(page)
    # the audit's marks on the figures and its table
    assert re.search(r'<mark class="audit bad" title="CONTRADICTED: [^"]*">0\.90</mark>', page)
    assert re.search(r'<mark class="audit ok" title="SUPPORTED: [^"]*">1\.87</mark>', page)
    assert "ROE 0.9 but the store has 1.606, off by 44% (filing)" in page
    # scores: the latest judge version of r01 (4, not the superseded 1), the human's note
    assert "accuracy reasoning for r01" in page and "ana" in page and "paper:human" in page
    # evidence with its filing and section
    assert "AAPL 10-K filed 2024-11-01, Item 1A" in page and "0000320193-24-000123" in page
    # the company at the question's as_of: AAPL's quarter filed by 2024-11-01 and three charts
    assert "FY2024 Q4" in page and "Debt/Equity" in page
    assert len(re.findall(r'<svg class="chart chart-(price|macd|rsi)"', page)) == 3
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page


def test_hostile_answers_passages_and_reasons_stay_text(case_cfg: Config, tmp_path: Path) -> None:
    page = _write(case_cfg, ["r09"], tmp_path / "hostile.html")
    # the attribute as text: its quote escaped by jinja (&#34;) or by the Markdown renderer
    quoted = page.replace("onerror=&#34;", "").replace("onerror=&quot;", "")
    assert "<script" not in page and "onerror=" not in quoted
    assert "<img src=x" not in page and "<b>bold?</b>" not in page
    shown = "<script>window.__pwned = 1</script></div></section><b>bold?</b>"
    assert visible(page).count(shown) == 3  # the answer, the passage, the judge's reason
    assert "\x1b" not in page and "␛[31mred␛[0m" in page
    assert "[b]markup[/b]" in page


def test_chart_coordinates_follow_the_series() -> None:
    days = [date(2024, 1, d) for d in range(1, 6)]
    series = {
        "ticker": "TEST",
        "dates": days,
        "adj_close": [10.0, 12.0, None, 14.0, 20.0],
        "ma_20": [None] * 5,
        "ema_20": [None] * 5,
        "macd": [None] * 5,
        "macd_signal": [None] * 5,
        "rsi_14": [None, None, 30.0, 70.0, 50.0],
    }
    price = svg_charts.panel(series, "price")
    left, top, right, bottom = price.plot
    close = price.lines[0]
    assert len(close.segments) == 2  # the undefined day splits the line
    first, second = close.segments
    # 10..20 with a 5% margin: lo 9.5, hi 20.5; x spreads the 5 days over the plot width
    span = right - left
    assert first.split()[0] == f"{left:.1f},{bottom - (bottom - top) * 0.5 / 11:.1f}"
    assert second.split()[-1] == f"{right:.1f},{bottom - (bottom - top) * 10.5 / 11:.1f}"
    assert second.split()[0].startswith(f"{left + span * 3 / 4:.1f},")
    assert close.last == 20.0 and not price.lines[1].segments  # MA undefined: no line
    rsi = svg_charts.panel(series, "rsi")
    assert rsi.bands == [
        (round(bottom - (bottom - top) * 0.3, 1), "30"),
        (round(bottom - (bottom - top) * 0.7, 1), "70"),
    ]
    assert svg_charts.panel(series, "macd") is None  # nothing defined: no panel


def _report_json(cfg: Config, *args: str) -> dict:
    res = CliRunner().invoke(
        main, ["--config", str(cfg.source_file), "report", "--json", *args], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def written_config(cfg: Config, tmp_path: Path) -> Config:
    from tests.conftest import write_config

    path = write_config(tmp_path, cfg.bundle, cfg.store, extra=f"workspace: {cfg.workspace}\n")
    from fintrade_tui.config import load_config

    return load_config(str(path))


def test_the_view_report_matrix_is_report_json(case_cfg: Config, tmp_path: Path) -> None:
    cfg = written_config(case_cfg, tmp_path)
    out = tmp_path / "view.html"
    res = CliRunner().invoke(
        main,
        ["--config", str(cfg.source_file), "export", "html", "--view", "--resamples", "500",
         "-o", str(out), "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["path"] == str(out)
    page = out.read_text(encoding="utf-8")
    cells = {
        (m, c, k): (float(a) if a else None, float(d) if d else None)
        for m, c, k, a, d in re.findall(
            r'data-model="([^"]*)" data-condition="([^"]*)" data-category="([^"]*)"\s+'
            r'data-n="\d+" data-accuracy="([^"]*)"\s+data-delta="([^"]*)"',
            page,
        )
    }
    report = {
        (c["model"], c["condition"], c["category"]): (c["accuracy"], c["delta_pct"])
        for c in _report_json(cfg, "--resamples", "500")["accuracy"]
    }
    scored = {k for k, (acc, _) in report.items() if acc is not None}
    assert cells and all(cells[k] == report[k] for k in cells)  # the same numbers
    # every scored cell is shown (a model's empty conditions get no row, as on the screen)
    assert scored <= set(cells)
    # every failure case is listed, each linking to its question's section
    # populate()'s cases, and r09 (completed, judged, nobody rated it yet)
    assert page.count('<tr class="case">') == sum(map(len, EXPECTED.values())) + 1
    for qid in ("F1", "T2", "FT3"):
        assert f'href="#q-{qid}"' in page and f'id="q-{qid}"' in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "export: names no case (fix: give RUN_ID..., --question QID or --view)"),
        (["r01", "-q", "F1"], "both name the case"),
        (["--view", "r01"], "--view: takes no RUN_ID or --question"),
        (["--view", "--filter", "nope"], "--filter nope: is unknown"),
        (["zz"], "run 'zz': not found"),
        (["-q", "X9"], "question 'X9': has no runs"),
    ],
)
def test_bad_export_requests_are_one_line(
    case_cfg: Config, tmp_path: Path, args: list[str], message: str
) -> None:
    cfg = written_config(case_cfg, tmp_path)
    res = CliRunner().invoke(
        main, ["--config", str(cfg.source_file), "export", "html", "--no-screenshots", *args]
    )
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert not list(tmp_path.rglob("*.html"))


REFERENCE_MD = (
    "### Why\n\nApple's ROE is **very high** (about 1.6):\n\n- buybacks shrink equity\n"
    "- <script>window.__pwned = 3</script> [x](javascript:alert(1))\n"
)


def test_markdown_is_drawn_as_html_and_raw_html_in_it_stays_text() -> None:
    from fintrade_tui.exports.markdown_html import markdown_html, marked_markdown_html

    html = str(markdown_html(REFERENCE_MD))
    assert "<h3>Why</h3>" in html and "<strong>very high</strong>" in html
    assert html.count("<li>") == 2
    assert "<script" not in html and "&lt;script&gt;window.__pwned = 3&lt;/script&gt;" in html
    assert "javascript:" not in html.replace("[x](javascript:alert(1))", "")  # no such link
    assert "\ue000" not in str(markdown_html("a \ue000 0\ue001 b\ue002"))  # no fences from text
    # the audit's marks inside Markdown: a bold figure in a list item keeps both
    parts = [
        {"text": "- ROE was **", "claim": None},
        {"text": "0.90", "claim": {"verdict": "CONTRADICTED", "why": 'store "1.6"'}, "cls": "bad"},
        {"text": "** in FY2024", "claim": None},
    ]
    marked = str(marked_markdown_html(parts))
    assert marked == (
        '<ul>\n<li>ROE was <strong><mark class="audit bad" title="CONTRADICTED: store'
        ' &quot;1.6&quot;">0.90</mark></strong> in FY2024</li>\n</ul>\n'
    )
