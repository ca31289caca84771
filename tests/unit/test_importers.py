"""Question importers: exact parsed values per format, detection, round-trip, one-line errors."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.questions.importers import (
    FORMATS,
    detect_format,
    read_questions,
    write_jsonl,
)
from fintrade_tui.workspace.questions import Question
from tests.conftest import BUNDLE, ROOT

DATA = ROOT / "tests" / "data" / "questions"
SEED = BUNDLE / "fintradebench" / "questions" / "FinTradeBench_Golden_Seed_150.csv"
needs_seed = pytest.mark.skipif(not SEED.is_file(), reason="seed CSV not in ../shared/data")


def _error(path: Path, fmt: str | None = None) -> str:
    with pytest.raises(UserError) as info:
        read_questions(path, fmt)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    assert "(fix: " in msg, msg
    return msg


# ---- the four formats ------------------------------------------------------------------


def test_seed_csv_small() -> None:
    path = DATA / "seed_small.csv"
    assert detect_format(path) == "fintradebench"
    qs = read_questions(path)
    assert [q.id for q in qs] == ["F3", "T7", "FT12"]
    assert [q.category for q in qs] == ["F", "T", "FT"]
    assert {q.source for q in qs} == {"fintradebench"}
    assert [q.golden_raw for q in qs] == [
        ["Debt/Equity", "Debt/Assets"],
        ["Volatility", "RSI", "MA"],
        ["ROE", "Short-term momentum"],
    ]
    assert qs[0].text == "As of June 2024, is Apple more leveraged than Microsoft?"
    assert qs[0].reference_answer == (
        "Short answer: yes.\n\n### Details\nApple's \"Debt/Equity\" is 1.54, Microsoft's is 0.29."
    )
    assert qs[1].reference_answer is None  # an empty response is no reference
    assert qs[2].reference_answer == "Line one\nLine two"
    assert [q.extra for q in qs] == [{"difficulty": d} for d in ("easy", "medium", "hard")]
    # resolution is another module's job
    for q in qs:
        assert q.tickers == [] and q.as_of is None and q.golden == [] and q.status == "unresolved"


def test_generic_jsonl() -> None:
    path = DATA / "generic.jsonl"
    assert detect_format(path) == "jsonl"
    g1, g2, g3 = read_questions(path)
    assert (g1.id, g1.source, g1.category) == ("G1", "jsonl", "F")
    assert g1.as_of == date(2023, 12, 31) and g1.tickers == ["AAPL"] and g1.golden_raw == ["ROE"]
    assert g1.reference_answer == "About 1.56"
    assert (g2.source, g2.category) == ("analyst", "other")
    assert (g2.window_start, g2.window_end) == (date(2024, 1, 2), date(2024, 3, 28))
    assert g2.golden_raw == ["Short-term momentum", "RSI"]
    assert g2.extra == {"team": "desk-3"}  # unknown keys are kept, not dropped
    assert (g3.id, g3.text, g3.category, g3.golden_raw, g3.as_of) == (
        "G3",
        "Is the market frothy?",
        "other",
        [],
        None,
    )


def test_secque_jsonl() -> None:
    path = DATA / "secque_small.jsonl"
    assert detect_format(path) == "secque"
    a, b = read_questions(path)
    assert [a.id, b.id] == ["SECQUE-101", "SECQUE-102"]
    assert [a.category, b.category] == ["Information Extraction", "Analysis"]
    assert {a.source, b.source} == {"secque"}
    assert a.text == "What was Apple's total net sales in fiscal 2024?"
    assert a.reference_answer == "$391,035 million"
    assert a.extra == {
        "context": {
            "context_markdown_with_headers": "## Item 7\n\n| Net sales | 391,035 |",
            "context_html": "<td>391,035</td>",
        },
        "ticker": "AAPL",
        "company": "Apple Inc.",
        "filing_date": "2024-11-01",
        "fiscal_year": 2024,
    }
    assert b.extra == {
        "context": {
            "context_markdown_with_headers": "## Gross margin\n"
            "Gross margin percentage increased to 69.8%."
        },
        "ticker": "MSFT",
    }
    assert a.tickers == [] and a.as_of is None  # copied into extra only; resolution decides


def test_finar_json() -> None:
    path = DATA / "finar_small.json"
    assert detect_format(path) == "finar"
    fact, ind, why = read_questions(path)
    table = (
        "| Item | 2023 | 2024 |\n|---|---|---|\n| Revenue | 100 | 120 |\n| Net income | 10 | 18 |"
    )
    assert [fact.id, ind.id, why.id] == ["FINAR-ACME-1", "FINAR-ACME-2", "acme-why"]
    assert [fact.category, ind.category, why.category] == ["fact", "indicator", "reasoning"]
    assert {fact.source, ind.source, why.source} == {"finar"}
    assert fact.text == "What was ACME's revenue in 2024?"
    assert [fact.reference_answer, ind.reference_answer] == ["120", "0.15"]
    assert json.loads(why.reference_answer) == {"answer": "yes", "because": ["margin 10% -> 15%"]}
    assert fact.extra == {
        "company": "ACME",
        "year": 2024,
        "table": table,
        "task_type": "fact",
        "ground_truth": "120",
    }
    assert ind.extra["ground_truth"] == 0.15 and ind.extra["formula"] == "Net income / Revenue"
    assert why.extra["ground_truth"] == {"answer": "yes", "because": ["margin 10% -> 15%"]}


def test_finar_list_without_company_uses_the_file_stem(tmp_path: Path) -> None:
    path = tmp_path / "acme_2024.json"
    table = {"Revenue": {"2023": 100, "2024": 120}}
    path.write_text(json.dumps([{"table": table, "instances": [{"task": "Revenue?"}]}]))
    (q,) = read_questions(path)
    assert (q.id, q.category, q.reference_answer) == ("FINAR-acme_2024-1", "other", None)
    assert q.extra["table"] == table and q.extra["company"] is None


@needs_seed
def test_real_seed_file_imports_all_150() -> None:
    assert detect_format(SEED) == "fintradebench"
    qs = read_questions(SEED)
    assert len(qs) == 150 and len({q.id for q in qs}) == 150
    assert Counter(q.category for q in qs) == {"F": 50, "T": 50, "FT": 50}
    assert all(q.text and q.golden_raw and q.reference_answer for q in qs)
    f1 = qs[0]
    assert (f1.id, f1.golden_raw) == ("F1", ["ROA", "ROE", "Earnings/Price"])
    assert f1.text.startswith("As of September 2025, is Apple really as profitable")
    assert "\n### 1. Clear Goals\n" in f1.reference_answer
    assert next(q for q in qs if q.id == "T29").golden_raw == ["Medium Term Momentum"]


# ---- export round-trip -------------------------------------------------------------------


def test_write_jsonl_round_trips_every_field(tmp_path: Path) -> None:
    full = Question(
        id="FT9-s1",
        source="scaled",
        category="FT",
        text="Is MSFT's ROE \u2028 consistent with its RSI?",
        reference_answer="",
        tickers=["MSFT", "AAPL"],
        scope="compare",
        as_of=date(2024, 6, 28),
        window_start=date(2024, 1, 2),
        window_end=date(2024, 6, 28),
        golden_raw=["Return on Equity", "RSI"],
        golden=["roe", "rsi_14"],
        status="resolved",
        reasons=["as_of from text"],
        coverage="partial",
        coverage_missing=["AAPL:rsi_14: no prices"],
        oracle={"MSFT": {"roe": {"value": 0.35, "asof": "2024-03-31"}}},
        parent_id="FT9",
        extra={"context": {"k": "multi\nline"}, "n": [1, 2]},
    )
    bare = Question(id="x", source="jsonl", category="other", text="t")
    out = tmp_path / "deep" / "export.jsonl"
    write_jsonl([full, bare], out)
    first = out.read_text(encoding="utf-8").split("\n")[0]
    assert json.loads(first)["as_of"] == "2024-06-28"
    assert read_questions(out) == [full, bare]
    assert not list(out.parent.glob("*.tmp"))


def test_every_fixture_round_trips(tmp_path: Path) -> None:
    for name in ("seed_small.csv", "generic.jsonl", "secque_small.jsonl", "finar_small.json"):
        qs = read_questions(DATA / name)
        write_jsonl(qs, tmp_path / "out.jsonl")
        assert read_questions(tmp_path / "out.jsonl", "jsonl") == qs, name


@needs_seed
def test_real_seed_round_trips(tmp_path: Path) -> None:
    qs = read_questions(SEED)
    write_jsonl(qs, tmp_path / "seed.jsonl")
    assert read_questions(tmp_path / "seed.jsonl") == qs


# ---- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.txt", "question_id,question\nF1,hi\n"),
        ("other.csv", "id,prompt\n1,hi\n"),
        ("other.jsonl", '{"prompt": "hi"}\n'),
        ("other.json", '{"questions": []}'),
        ("list.json", '[{"instances": []}, {"task": "x"}]'),
    ],
)
def test_unknown_format(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(UserError) as info:
        detect_format(path)
    formats = "fintradebench|jsonl|secque|finar|finqa|convfinqa|tatqa"
    assert str(info.value) == f"{path}: unknown question format (fix: pass --format {formats})"
    assert _error(path) == str(info.value)


def test_explicit_format_overrides_the_extension(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text('{"QID": 5, "Question": "Q?"}\n')
    assert [q.id for q in read_questions(path, "secque")] == ["SECQUE-5"]
    assert "unknown question format 'csv'" in _error(path, "csv")
    assert set(FORMATS) == {
        "fintradebench",
        "jsonl",
        "secque",
        "finar",
        "finqa",
        "convfinqa",
        "tatqa",
    }


# ---- bad input: one line naming the file, the line and a fix -----------------------------

SEED_HEAD = "question_id,question,golden_indicators,response\n"
BAD = [
    (
        "bad.jsonl",
        '{"id": "a", "text": "x"}\n\n{"id": "b", "text": }\n',
        "line 3: is not valid JSON",
    ),
    ("bad.jsonl", '{"id": "a", "text": "x"}\n{"id": "b"}\n', "line 2: missing text"),
    ("bad.jsonl", '{"text": "x"}\n', "line 1: missing id"),
    ("bad.jsonl", '{"id": "a", "text": " "}\n', "line 1: missing text"),
    ("bad.jsonl", '{"id": "a", "text": "x"}\n[1, 2]\n', "line 2: is not a JSON object"),
    (
        "bad.jsonl",
        '{"id": "a", "text": "x"}\n{"id": "b", "text": "y", "as_of": "2024-13-01"}\n',
        "line 2: as_of '2024-13-01' is not a date (fix: write it as YYYY-MM-DD)",
    ),
    ("bad.jsonl", '{"id": "a", "text": "x", "window_end": 20240101}\n', "line 1: window_end 2024"),
    (
        "bad.jsonl",
        '{"id": "a", "text": "x", "tickers": "AAPL"}\n',
        "line 1: tickers must be a list",
    ),
    (
        "dup.jsonl",
        '{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n\n{"id": "a", "text": "z"}\n',
        "line 4: duplicate id a (first on line 1)",
    ),
    ("bad.jsonl", '{"QID": 1, "Question": "q"}\n{"Question": "q2"}\n', "line 2: missing QID"),
    ("bad.jsonl", '{"QID": 1, "Question": "q"}\n{"QID": "1", "Question": "r"}\n', "duplicate id"),
    (
        "bad.csv",
        "question_id,question,response\nF1,Is it?,yes\n",
        "line 1: missing column golden_indicators",
    ),
    (
        "bad.csv",
        SEED_HEAD + 'F1,"Q1",ROA,"multi\nline\nanswer"\nF2,  ,ROE,x\n',
        "line 5: empty question for F2",
    ),
    (
        "bad.csv",
        SEED_HEAD + 'F1,"Q1",ROA,"two\nlines"\n,Q2,ROE,x\n',
        "line 4: empty question_id",
    ),
    (
        "bad.csv",
        SEED_HEAD + 'F3,Q3,ROE,"b\n\nc"\nT1,Q,RSI,x\nF1,Q1,ROA,a\nF3,Q again,ROA,e\n',
        "line 7: duplicate id F3 (first on line 2)",
    ),
    ("bad.csv", SEED_HEAD + 'F1,Q1,ROA,ok\nF2,"Q2"oops,ROE,x\n', "line 3: is not valid CSV"),
    ("bad.csv", SEED_HEAD + "F1,Q1,ROA,ok\nF2,Q2, with comma,ROE,x\n", "line 3: has 5 fields"),
    ("empty.csv", "", "empty.csv: no questions"),
    ("blank.jsonl", "\n  \n\n", "blank.jsonl: no questions"),
    ("header.csv", SEED_HEAD, "header.csv: no questions"),
    ("none.json", '{"company": "X", "instances": []}', "none.json: no questions"),
    ("bad.json", '{\n  "instances": [\n    {"task": "a",}\n  ]\n}', "line 3: is not valid JSON"),
    (
        "bad.json",
        '{\n  "company": "X",\n  "instances": [\n    {"task": "a"},\n\n    {"ground_truth": 1}\n]}',
        "line 6: missing task",
    ),
    (
        "bad.json",
        '[{"company": "X", "instances": [\n {"id": "k", "task": "a"}]},\n'
        ' {"company": "Y", "instances": [\n\n {"id": "k", "task": "b"}]}]',
        "line 5: duplicate id k (first on line 2)",
    ),
    ("bad.json", '{"instances": [\n "just text"\n]}', "line 1: instance 1 is not an object"),
]


@pytest.mark.parametrize(("name", "content", "needle"), BAD)
def test_bad_input_is_one_line_with_file_and_line(
    tmp_path: Path, name: str, content: str, needle: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    msg = _error(path)
    assert needle in msg, msg


def test_csv_missing_question_column_with_explicit_format(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("question_id,golden_indicators\nF1,ROA\n")
    assert "line 1: missing column question " in _error(path, "fintradebench")


def test_crlf_and_bom_seed(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    body = SEED_HEAD.replace("\n", "\r\n") + 'F1,Q1,ROA,"a\r\nb"\r\nF1,Q2,ROE,c\r\n'
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert "line 4: duplicate id F1 (first on line 2)" in _error(path)


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    assert "file not found" in _error(tmp_path / "nope.csv")
    path = tmp_path / "latin.csv"
    path.write_bytes((SEED_HEAD + "F1,Caf\xe9?,ROA,x\n").encode("latin-1"))
    assert "line 2: is not UTF-8 text" in _error(path)
