"""FinQA, ConvFinQA and TAT-QA files import as published: the committed real samples
(tests/data/external/{finqa,convfinqa,tatqa}) read through `questions import`'s reader, checked
field by field against the same files read independently with json.load; gold facts mark the
supplied evidence; bad files give one line; a FinQA question resolves to its filer and the day
its report was filed (the bundle's own CSV says when), or says why not."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.questions.importers import detect_format, read_questions
from fintrade_tui.questions.supplied import supplied_evidence
from fintrade_tui.workspace.questions import RESOLVED, UNRESOLVED, Question

DATA = Path(__file__).resolve().parents[1] / "data" / "external"
FINQA = DATA / "finqa" / "train_sample.json"
CONV = DATA / "convfinqa" / "train_sample.json"
CONV_TEST = DATA / "convfinqa" / "test_sample.json"
TATQA = DATA / "tatqa" / "dev_sample.json"


def _load(path: Path) -> list:
    return json.loads(path.read_text(encoding="utf-8"))


def _where(gold: dict) -> str:
    table = any(k.startswith("table") for k in gold)
    text = any(k.startswith("text") for k in gold)
    return {(True, True): "table+text", (True, False): "table", (False, True): "text"}.get(
        (table, text), "unknown"
    )


@pytest.mark.parametrize(
    ("path", "fmt"), [(FINQA, "finqa"), (CONV, "convfinqa"), (CONV_TEST, "convfinqa"),
                      (TATQA, "tatqa")],
)  # fmt: skip
def test_each_published_file_is_recognised(path: Path, fmt: str) -> None:
    assert detect_format(path) == fmt


def test_finqa_items_import_field_by_field() -> None:
    items = _load(FINQA)
    qs = read_questions(FINQA)  # detected, as `questions import` does without --format
    assert len(qs) == len(items) == 25
    for item, q in zip(items, qs, strict=True):
        qa = item["qa"]
        assert q.id == "FINQA-" + item["id"] and q.source == "finqa"
        assert q.text == qa["question"].strip()
        assert q.extra["published_id"] == item["id"]
        assert q.extra["table_rows"] == item["table_ori"]
        assert q.extra["table_norm"] == item["table"]
        assert q.extra["passages"] == item["pre_text"] + item["post_text"]
        assert q.extra["gold_inds"] == qa["gold_inds"]
        assert q.extra["program"] == qa["program"]
        assert q.extra["exe_ans"] == qa["exe_ans"] and q.extra["answer_text"] == qa["answer"]
        numeric = isinstance(qa["exe_ans"], float | int)
        assert q.reference_answer == (str(qa["exe_ans"]) if numeric else qa["answer"])
        ticker, year, page = item["filename"].split("/")
        assert (q.extra["ticker"], q.extra["fiscal_year"]) == (ticker, int(year))
        assert q.extra["page"] == int(page.removeprefix("page_").removesuffix(".pdf"))
        assert q.category == _where(qa["gold_inds"])
        assert q.extra["question_kind"] == "document_qa"
    assert {q.category for q in qs} == {"table", "text", "table+text"}
    yes_no = [q for q in qs if q.reference_answer in ("yes", "no")]
    assert len(yes_no) == 3  # VNO (yes), AAPL and ADBE (no): exe_ans is the word itself


def test_convfinqa_conversations_import_one_question_per_turn() -> None:
    items = _load(CONV)
    qs = read_questions(CONV)
    turns = [(item, t) for item in items for t in range(len(item["annotation"]["dialogue_break"]))]
    assert len(qs) == len(turns) == 9
    for (item, t), q in zip(turns, qs, strict=True):
        ann = item["annotation"]
        assert q.id == f"CONVFINQA-{item['id']}-t{t}" and q.source == "convfinqa"
        assert q.text.endswith(ann["dialogue_break"][t])
        assert q.extra["dialogue"] == ann["dialogue_break"][: t + 1]
        assert q.extra["program"] == ann["turn_program"][t]
        assert q.extra["exe_ans"] == ann["exe_ans_list"][t]
        assert q.reference_answer == str(ann["exe_ans_list"][t])
        assert q.extra["gold_inds"] == item["qa"]["gold_inds"]  # Type I: the one FinQA question
        assert q.extra["table_rows"] == item["table_ori"]
    later = qs[1]  # "what about in 2008?" needs the turn before it
    assert later.text.splitlines()[0] == "Q1: " + items[0]["annotation"]["dialogue_break"][0]


def test_convfinqa_test_split_imports_without_references() -> None:
    items = _load(CONV_TEST)
    qs = read_questions(CONV_TEST, "convfinqa")
    assert len(qs) == sum(len(i["annotation"]["dialogue_break"]) for i in items) == 7
    assert all(q.reference_answer is None and q.extra["program"] is None for q in qs)
    assert all(q.category == "unknown" for q in qs)  # published without gold facts
    assert [q.id for q in qs if "Double_" in q.id][0] == "CONVFINQA-Double_UNP/2007/page_25.pdf-t0"


def test_a_turn_file_entry_gives_the_same_question_as_its_conversation(tmp_path: Path) -> None:
    # no turn file is published anywhere searchable: this entry is built from a real
    # conversation by the README's definition of the turn files (id "<conversation>_<turn>",
    # cur_dial, cur_program, exe_ans, turn_ind)
    item = _load(CONV)[0]
    ann = item["annotation"]
    turn = dict(item, id=item["id"] + "_2")
    turn["annotation"] = dict(
        ann, cur_dial=ann["dialogue_break"][:3], cur_program=ann["turn_program"][2],
        exe_ans=ann["exe_ans_list"][2], turn_ind=2,
    )  # fmt: skip
    path = tmp_path / "train_turn.json"
    path.write_text(json.dumps([turn]), encoding="utf-8")
    (got,) = read_questions(path)
    want = read_questions(CONV)[2]
    assert (got.id, got.text, got.reference_answer) == (want.id, want.text, want.reference_answer)
    assert got.extra["program"] == want.extra["program"] and got.extra["turn"] == 2


def test_tatqa_questions_import_with_answer_type_scale_and_source() -> None:
    blocks = _load(TATQA)
    qs = read_questions(TATQA)
    pairs = [(b, q) for b in blocks for q in b["questions"]]
    assert len(qs) == len(pairs) == 42
    for (block, pub), q in zip(pairs, qs, strict=True):
        assert q.id == "TATQA-" + pub["uid"] and q.text == pub["question"].strip()
        assert q.extra["answer"] == pub["answer"]  # exactly as published
        answer = pub["answer"]
        joined = ", ".join(map(str, answer)) if isinstance(answer, list) else str(answer)
        assert q.reference_answer == joined
        for key in ("scale", "answer_type", "answer_from", "derivation"):
            assert q.extra[key] == pub[key]
        assert q.category == pub["answer_from"].replace("table-text", "table+text")
        assert q.extra["table_rows"] == q.extra["table_norm"] == block["table"]["table"]
        paragraphs = sorted(block["paragraphs"], key=lambda p: p["order"])
        assert q.extra["passages"] == [p["text"] for p in paragraphs]
        orders = [p["order"] for p in paragraphs]
        want = {f"text_{orders.index(int(r))}" for r in pub["rel_paragraphs"]}
        if pub["answer_from"] in ("table", "table-text"):
            want.add("table")
        assert set(q.extra["gold_inds"]) == want
        assert q.extra["program"] is None
    assert {q.extra["scale"] for q in qs} == {"", "thousand", "million", "billion", "percent"}
    assert {q.category for q in qs} == {"table", "text", "table+text"}


def test_supplied_evidence_gives_the_table_with_its_rows_and_marks_the_gold_facts() -> None:
    items = {i["id"]: i for i in _load(FINQA)}
    q = next(q for q in read_questions(FINQA) if q.id == "FINQA-DVN/2014/page_88.pdf-1")
    item = items["DVN/2014/page_88.pdf-1"]
    ev = supplied_evidence(q)
    table = ev["table"]
    assert table["kind"] == "table" and table["label"] == "table" and table["gold"] is True
    assert table["rows"] == item["table_ori"]
    lines = table["value"].splitlines()
    assert len(lines) == len(item["table_ori"]) + 1  # header, rule, one line per row
    assert lines[0] == "| " + " | ".join(item["table_ori"][0]) + " |"
    assert lines[1] == "|---|---|"
    passages = item["pre_text"] + item["post_text"]
    texts = {k: v for k, v in ev.items() if k != "table"}
    assert all(v["kind"] == "context" and v["label"] == k for k, v in texts.items())
    assert all(v["value"] == passages[int(k.split("_")[1])] for k, v in texts.items())
    gold = {k for k, v in ev.items() if v["gold"]}
    assert gold == {"table"} | {k for k in item["qa"]["gold_inds"] if k.startswith("text")}
    text_only = next(q for q in read_questions(FINQA) if q.category == "text")
    assert supplied_evidence(text_only)["table"]["gold"] is False


def test_tatqa_evidence_marks_the_related_paragraphs() -> None:
    q = next(q for q in read_questions(TATQA) if q.extra["answer_from"] == "text")
    ev = supplied_evidence(q)
    assert ev["table"]["gold"] is False and ev["table"]["rows"] == q.extra["table_rows"]
    gold = sorted(k for k, v in ev.items() if v["gold"])
    assert gold == sorted(f"text_{int(r) - 1}" for r in q.extra["rel_paragraphs"])


@pytest.mark.parametrize(
    ("fmt", "doc", "where", "problem"),
    [
        ("finqa", {"a": 1}, "finqa.json", "is not a JSON list"),
        ("finqa", [{"id": "X/2020/page_1.pdf-1", "table": []}], "item 1 (X/2020/page_1.pdf-1)",
         'needs a "qa" object'),
        ("finqa", [{"id": "X-1", "table": [], "qa": {"question": " "}}], "item 1 (X-1)",
         "no qa.question"),
        ("finqa", [{"id": "X-1", "table": "a|b", "qa": {"question": "q?"}}], "item 1 (X-1)",
         '"table" must be a list of rows'),
        ("convfinqa", [{"id": "C-1", "table": [], "annotation": {}}], "item 1 (C-1)",
         "dialogue_break"),
        ("tatqa", [{"table": {"table": []}, "paragraphs": [], "questions": [{"uid": "u"}]}],
         "item 1 question 1", "needs a uid and a question"),
    ],
)  # fmt: skip
def test_bad_files_give_one_line_naming_file_item_and_fix(
    tmp_path: Path, fmt: str, doc: object, where: str, problem: str
) -> None:
    path = tmp_path / f"{fmt}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UserError) as err:
        read_questions(path, fmt)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and where in msg and problem in msg
    assert "(fix: " in msg


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "train.json"
    path.write_text('[\n{"id": "a",\n "qa": }\n]', encoding="utf-8")
    with pytest.raises(UserError, match=r"train.json line 3: is not valid JSON"):
        read_questions(path, "finqa")


def test_duplicate_items_are_refused(tmp_path: Path) -> None:
    item = _load(FINQA)[0]
    path = tmp_path / "dup.json"
    path.write_text(json.dumps([item, item]), encoding="utf-8")
    with pytest.raises(UserError, match=r"item 2 .*duplicate question id FINQA-"):
        read_questions(path)


def _finqa(pid: str) -> Question:
    return next(q for q in read_questions(FINQA) if q.extra["published_id"] == pid)


def _bundle_filed(ticker: str, period_end: str) -> date:
    rows = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fundamentals-sec"
    for line in (rows / f"{ticker}.csv").read_text().splitlines()[1:]:
        cells = line.split(",")
        if cells[1] == period_end:
            return date.fromisoformat(cells[2])
    raise AssertionError(f"{ticker} {period_end} not in the bundle")


def test_a_finqa_question_resolves_to_its_filer_and_report_filing(built_store, con) -> None:
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.runs.conditions import ConditionContext, build_evidence

    r = Resolver(con, built_store.questions.reference_date)
    amat = r.evidence(r.resolve(_finqa("AMAT/2016/page_32.pdf-1")))
    # Applied Materials' fiscal 2016 ended 2016-10-30; the bundle dates its 10-K 2016-12-15
    assert amat.status == RESOLVED and amat.tickers == ["AMAT"]
    assert amat.as_of == _bundle_filed("AMAT", "2016-10-30") == date(2016, 12, 15)
    assert amat.extra["as_of_basis"]["kind"] == "filing"
    assert "AMAT fiscal 2016 report" in amat.extra["as_of_basis"]["detail"]
    supplied = amat.oracle["supplied"]
    assert supplied["table"]["available_from"] == "2016-12-15"
    assert supplied["table"]["document"]["ticker"] == "AMAT"
    ev = build_evidence("oracle", amat, ConditionContext(built_store, con))
    table = next(i for i in ev.items if i.meta.get("kind") == "table")
    assert table.meta["rows"] == amat.extra["table_rows"] and table.available_from == amat.as_of

    # a report the store does not date: its fiscal year's end + the 90-day lag, said estimated
    aapl = r.resolve(_finqa("AAPL/2007/page_117.pdf-2"))  # before the bundle's filings (2009 on)
    end = date.fromisoformat(aapl.extra["fiscal_periods"][0]["end"])
    assert aapl.status == RESOLVED and aapl.tickers == ["AAPL"]
    assert (end.year, end.month) == (2007, 9)  # Apple's fiscal year ends in late September
    assert aapl.as_of == end + timedelta(days=90)
    assert aapl.extra["as_of_basis"]["kind"] == "estimated"
    assert any("knows no filing" in why and "date estimated" in why for why in aapl.reasons)
    etr = r.resolve(_finqa("ETR/2009/page_107.pdf-2"))  # Entergy: not a NASDAQ-100 filer
    assert etr.status == RESOLVED and etr.tickers == ["ETR"]
    assert etr.as_of == date(2010, 3, 31)  # 2009-12-31 + 90 days
    assert any("no data for ETR in the store" in why for why in etr.reasons)
    for q in (aapl, etr):  # opens and runs on what it comes with
        opened = r.evidence(q)
        assert opened.oracle["supplied"]["table"]["rows"] == q.extra["table_rows"]
    tatqa = r.resolve(read_questions(TATQA)[0])
    assert tatqa.status == UNRESOLVED and tatqa.scope is None
    assert any("names no company or report" in why for why in tatqa.reasons)


def test_the_cli_imports_each_format_into_its_own_workspace(built_store, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fintrade_tui.cli import main
    from tests.conftest import write_config

    config = write_config(tmp_path / "ws", built_store.bundle, built_store.store)

    def cli(*args: str):
        return CliRunner().invoke(main, ["--config", str(config), *args])

    for path, fmt, n in ((FINQA, "finqa", 25), (CONV, None, 9), (TATQA, "tatqa", 42)):
        res = cli("questions", "import", str(path), "--json", *(["--format", fmt] if fmt else []))
        assert res.exit_code == 0, res.output
        assert json.loads(res.output)["questions"] == n
    listed = json.loads(cli("questions", "list", "--json", "--source", "finqa").output)
    assert len(listed) == 25
    resolved = {q["id"] for q in listed if q["status"] == RESOLVED}
    assert "FINQA-AMAT/2016/page_32.pdf-1" in resolved
    assert "FINQA-ETR/2009/page_107.pdf-2" in resolved  # on an estimated date
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "X-1", "table": []}]), encoding="utf-8")
    res = cli("questions", "import", str(bad), "--format", "finqa")
    assert res.exit_code == 2 and "\n" not in res.output.strip()
    assert f"{bad} item 1 (X-1)" in res.output
