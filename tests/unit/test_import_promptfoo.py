"""promptfoo reader against files the real promptfoo wrote (0.121.20: results v3, plus a rating
saved through its web viewer's API; 0.91.3: results v2 with the table), see make_fixtures.sh,
and hand-written nasty ones. Expectations come from the files themselves, read with json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.imports import formats, promptfoo
from fintrade_tui.imports.record import CORRECT, INCORRECT

DATA = Path(__file__).resolve().parents[1] / "data" / "external" / "promptfoo"
V3, RATED, V2 = DATA / "eval_v3.json", DATA / "eval_v3_rated.json", DATA / "eval_v2.json"
HEAD = 64 * 1024


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def sniffed(path: Path) -> bool:
    return promptfoo.sniff(path, path.read_bytes()[:HEAD])


def label(passed: bool) -> str:
    return CORRECT if passed else INCORRECT


def write(tmp_path: Path, doc: object, name: str = "out.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def test_sniff_tells_promptfoo_outputs_from_others(tmp_path: Path) -> None:
    for p in (V3, RATED, V2, *DATA.glob("nasty_*.json")):
        if p.name != "nasty_not_promptfoo.json":
            assert sniffed(p), p.name
    assert not sniffed(DATA / "nasty_not_promptfoo.json")
    assert not sniffed(DATA / "make_fixtures.sh")
    # evalId comes first, so a file whose prompts fill the head is still recognised
    doc = load(V3)
    doc["results"]["prompts"][0]["raw"] = "x" * 100_000
    assert sniffed(write(tmp_path, doc))
    # without evalId: results.version and the results list (or the v2 table) decide
    no_id = {"results": {"version": 2, "timestamp": "t", "table": {"head": {}, "body": []}}}
    assert sniffed(write(tmp_path, no_id))
    for other in (
        {"results": {"version": 3, "scores": []}},
        {"results": {"fin_qa": {"acc,none": 0.5}}, "configs": {}},
        [{"evalId": "x"}],
        {"question_id": "q1", "model": "m", "answer": "a"},
    ):
        assert not sniffed(write(tmp_path, other)), other
    assert not promptfoo.sniff(tmp_path / "x.json", b"not json at all")


def test_formats_detect_picks_this_reader() -> None:
    for p in (V3, RATED, V2):
        assert formats.detect(p) == "promptfoo"


def test_v3_results_as_the_file_gives_them() -> None:
    doc = load(V3)
    rows = doc["results"]["results"]
    runs = list(promptfoo.read(V3))
    assert len(runs) == len(rows) == 8  # 4 tests x 1 prompt x 2 providers
    for i, (run, res) in enumerate(zip(runs, rows, strict=True)):
        v, resp = res["vars"], res.get("response") or {}
        assert run.locator == f"result {i}"
        assert run.model == res["provider"]["label"]
        assert run.extra["provider_id"] == res["provider"]["id"]
        assert run.question_id == v["question_id"]
        assert (run.question, run.condition_label, run.ticker) == (
            v["question"],
            v["condition"],
            v["ticker"],
        )
        assert (run.as_of, run.category, run.reference_answer) == (
            v["as_of"],
            v["category"],
            v["expected"],
        )
        assert run.prompt == res["prompt"]["raw"]
        assert run.answer == resp.get("output", "")
        assert run.latency_s == pytest.approx(res["latencyMs"] / 1000)
        assert run.cost == pytest.approx(res["cost"])
        usage = resp.get("tokenUsage") or res["tokenUsage"]
        assert (run.tokens_in, run.tokens_out) == (usage["prompt"], usage["completion"])
        assert run.benchmark == doc["config"]["description"] == "fintrade-mini NASDAQ facts"
        assert run.extra["eval_id"] == doc["evalId"]
        assert run.extra["result_id"] == res["id"]
        assert run.extra["test_idx"] == res["testIdx"]
        assert run.extra["promptfoo_version"] == doc["metadata"]["promptfooVersion"]
        assert "warnings" not in run.extra
        if res["failureReason"] == 2:  # the provider failed: no verdict, status error
            assert (run.status, run.error, run.judgments) == ("error", res["error"], [])
            continue
        # promptfoo also puts a failed assertion's reason in "error": that is no error
        assert (run.status, run.error) == ("completed", None)
        g = res["gradingResult"]
        (j,) = run.judgments
        assert (j.annotator, j.label, j.value, j.note) == (
            "promptfoo:assert",
            label(g["pass"]),
            g["score"],
            g["reason"],
        )
        assert j.detail["componentResults"] == g["componentResults"]
        assert j.kind == "human"  # contains / icontains are rules, not a model's grading
    # what promptfoo printed for finbot-rag: "163 (... 131 prompt, 32 completion)"
    rag = [r for r in runs if r.model == "finbot-rag"]
    assert sum(r.tokens_in or 0 for r in rag) == 131
    assert sum(r.tokens_out or 0 for r in rag) == 32
    errors = [r for r in runs if r.status == "error"]
    assert [(r.model, r.question_id) for r in errors] == [("finbot-rag", "tsla-deliv-q3-2024")]
    assert errors[0].error == "upstream 503: retrieval index unavailable"
    assert errors[0].answer == ""
    # the tool's own summary: 3 passed, 4 failed, 1 error
    verdicts = [j.label for r in runs for j in r.judgments]
    assert (verdicts.count(CORRECT), verdicts.count(INCORRECT)) == (3, 4)


def test_v3_human_rating_from_the_web_viewer() -> None:
    doc = load(RATED)
    rated = [
        (i, res)
        for i, res in enumerate(doc["results"]["results"])
        if any(
            (c.get("assertion") or {}).get("type") == "human"
            for c in (res.get("gradingResult") or {}).get("componentResults", [])
        )
    ]
    assert len(rated) == 1
    i, res = rated[0]
    g = res["gradingResult"]
    human = next(c for c in g["componentResults"] if c["assertion"]["type"] == "human")
    rules = [c for c in g["componentResults"] if c is not human]
    runs = list(promptfoo.read(RATED))
    run = runs[i]
    assert run.extra["result_id"] == res["id"]
    by = {j.annotator: j for j in run.judgments}
    assert set(by) == {"promptfoo:assert", "promptfoo:human"}
    h = by["promptfoo:human"]
    assert (h.label, h.value, h.note) == (label(human["pass"]), human["score"], human["comment"])
    assert h.note == "Echoes the question; no figure given."
    assert h.detail["reason"] == human["reason"]
    # the top level now carries the rating; the assertions keep their own verdict
    a = by["promptfoo:assert"]
    assert a.label == label(all(c["pass"] for c in rules)) == CORRECT
    assert a.value == pytest.approx(sum(c["score"] for c in rules) / len(rules))
    assert a.detail["overridden_by_human"] is True
    assert (a.detail["file_pass"], a.detail["file_score"]) == (g["pass"], g["score"])
    assert a.detail["componentResults"] == rules
    # every other result reads as in the file before the rating
    plain = {r.extra["result_id"]: r for r in promptfoo.read(V3)}
    for r in runs:
        if r is not run:
            before = plain[r.extra["result_id"]]
            assert [(j.annotator, j.label, j.value) for j in r.judgments] == [
                (j.annotator, j.label, j.value) for j in before.judgments
            ]
            assert r.answer == before.answer


def test_v2_table_rows_and_outputs() -> None:
    doc = load(V2)
    table = doc["results"]["table"]
    assert doc["results"]["version"] == 2
    # the v2 list holds each answer clean (the table text carries the failure reason)
    clean = {
        (res["provider"]["label"], res["vars"]["question_id"]): res
        for res in doc["results"]["results"]
    }
    runs = list(promptfoo.read(V2))
    assert len(runs) == sum(len(row["outputs"]) for row in table["body"]) == 8
    it = iter(runs)
    for r, row in enumerate(table["body"]):
        for c, out in enumerate(row["outputs"]):
            run = next(it)
            res = clean[(out["provider"], row["test"]["vars"]["question_id"])]
            assert run.locator == f"row {r} output {c}"
            assert run.model == table["head"]["prompts"][c]["provider"] == out["provider"]
            assert run.question_id == row["test"]["vars"]["question_id"]
            assert run.condition_label == row["test"]["vars"]["condition"]
            assert run.prompt == out["prompt"] == res["prompt"]["raw"]
            assert run.answer == res["response"].get("output", "")
            assert run.extra["prompt_template"] == table["head"]["prompts"][c]["raw"]
            assert run.benchmark == doc["config"]["description"]
            if "gradingResult" not in out:
                assert (run.status, run.error, run.judgments) == ("error", res["error"], [])
                continue
            assert run.status == "completed"
            (j,) = run.judgments
            assert (j.label, j.value) == (label(out["pass"]), out["score"])
            assert j.note == out["gradingResult"]["reason"]
    # the same benchmark through v3 gives the same verdicts and the deterministic answers
    v3 = {(r.model, r.question_id): r for r in promptfoo.read(V3)}
    for run in runs:
        other = v3[(run.model, run.question_id)]
        assert (run.answer, run.status) == (other.answer, other.status)
        assert [j.label for j in run.judgments] == [j.label for j in other.judgments]


def test_v2_table_rating_and_comment(tmp_path: Path) -> None:
    # a hand edit of a COPY: promptfoo 0.91.3's viewer saved ratings into the table like this
    doc = load(V2)
    body = doc["results"]["table"]["body"]
    out = body[0]["outputs"][1]
    g = out["gradingResult"]
    g["componentResults"].append(
        {
            "pass": False,
            "score": 0,
            "reason": "Manual result (overrides all other grading results)",
            "comment": "figure is GAAP, question asked non-GAAP",
            "assertion": {"type": "human"},
        }
    )
    g.update({"pass": False, "score": 0, "reason": g["componentResults"][-1]["reason"]})
    out.update({"pass": False, "score": 0})
    body[1]["outputs"][1]["gradingResult"]["comment"] = "check the 10-Q"
    runs = list(promptfoo.read(write(tmp_path, doc)))
    rated = next(r for r in runs if r.locator == "row 0 output 1")
    human = next(j for j in rated.judgments if j.annotator == "promptfoo:human")
    assert (human.label, human.value) == (INCORRECT, 0)
    assert human.note == "figure is GAAP, question asked non-GAAP"
    assert rated.answer == "AAPL reported net income of $14.7 billion in fiscal Q4 2024."
    rules = next(j for j in rated.judgments if j.annotator == "promptfoo:assert")
    assert (rules.label, rules.detail["file_pass"]) == (CORRECT, False)
    noted = next(r for r in runs if r.locator == "row 1 output 1")
    comment = next(j for j in noted.judgments if j.annotator == "promptfoo:human")
    assert (comment.label, comment.note, comment.detail) == (
        None,
        "check the 10-Q",
        {"comment_only": True},
    )


def test_missing_fields_fall_back_then_a_result_without_provider_fails() -> None:
    p = DATA / "nasty_missing_fields.json"
    runs = promptfoo.read(p)
    first = next(runs)
    assert (first.question_id, first.model, first.ticker) == ("test-5", "echo", "AMZN")
    assert first.answer == "AMZN operating income was $17.4 billion."
    assert (first.tokens_in, first.tokens_out, first.latency_s, first.cost) == (None,) * 4
    assert (first.judgments, first.benchmark, first.status) == ([], "promptfoo", "completed")
    with pytest.raises(UserError) as err:
        next(runs)
    assert f"{p} result 1:" in str(err.value) and "provider" in str(err.value)


def test_number_and_object_answers_become_text() -> None:
    doc = load(DATA / "nasty_number_answer.json")
    runs = list(promptfoo.read(DATA / "nasty_number_answer.json"))
    outputs = [res["response"]["output"] for res in doc["results"]["results"]]
    assert [r.answer for r in runs] == ["6", json.dumps(outputs[1]), "74.6", json.dumps(outputs[3])]
    assert json.loads(runs[1].answer) == {"net_income_usd_bn": 14.7, "quarter": "Q4 FY2024"}
    assert runs[0].judgments[0].label == CORRECT


def test_non_utf8_bytes_are_replaced_and_noted() -> None:
    p = DATA / "nasty_non_utf8.json"
    assert b"\xff" in p.read_bytes()
    (run,) = promptfoo.read(p)
    assert run.answer == "Revenue: $62.0 billion \ufffd (caf\ufffd estimate)"
    assert run.extra["warnings"] == ["non-UTF-8 bytes replaced with U+FFFD"]
    assert (run.question_id, run.benchmark) == ("msft-rev-q2-2024", "fintrade latin1")


def test_duplicate_results_are_both_yielded_for_the_loader() -> None:
    a, b = promptfoo.read(DATA / "nasty_duplicate.json")
    assert (a.locator, b.locator) == ("result 0", "result 1")
    assert (a.question_id, a.model, a.answer) == (b.question_id, b.model, b.answer)
    assert a.extra["result_id"] == b.extra["result_id"] == "0b7c3e1a-dup"


def test_unknown_condition_is_kept_verbatim_with_the_other_vars() -> None:
    (run,) = promptfoo.read(DATA / "nasty_unknown_condition.json")
    assert (run.condition_label, run.variant, run.company) == (
        "Moon Phase",
        "context-last",
        "Microsoft Corporation",
    )
    assert (run.reference_answer, run.as_of) == ("$62.0 billion", "2024-02-01")
    assert run.extra["vars"] == {"analyst": "jd"}


def test_truncated_file_fails_before_any_run() -> None:
    p = DATA / "nasty_truncated.json"
    runs = promptfoo.read(p)
    with pytest.raises(UserError) as err:
        next(runs)  # the first pass finds the cut: no half import
    assert str(err.value).startswith(f"{p} result 1: ends early (truncated)")
    assert "\n" not in str(err.value)


def test_not_promptfoo_json_is_refused() -> None:
    p = DATA / "nasty_not_promptfoo.json"
    with pytest.raises(UserError) as err:
        list(promptfoo.read(p))
    assert str(err.value).startswith(f"{p}: is not a promptfoo output")


def test_bad_values_name_the_result(tmp_path: Path) -> None:
    p = DATA / "nasty_bad_result.json"
    runs = promptfoo.read(p)
    assert next(runs).latency_s == pytest.approx(0.012)
    with pytest.raises(UserError, match=r"result 1: latencyMs 'fast' is not a number") as err:
        next(runs)
    assert str(p) in str(err.value)
    doc = load(p)
    doc["results"]["results"][1]["latencyMs"] = 3
    with pytest.raises(UserError, match=r"out\.json result 2: is not an object"):
        list(promptfoo.read(write(tmp_path, doc)))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["results"].update(results={}), r"out\.json: has no results\.results list"),
        (lambda d: d["results"]["results"][0].update(vars=["AAPL"]), r"result 0: vars is not"),
        (
            lambda d: d["results"]["results"][1]["response"]["tokenUsage"].update(prompt=-4),
            r"result 1: tokenUsage\.prompt -4 is not a count",
        ),
        (
            lambda d: d["results"]["results"][2].update(gradingResult="pass"),
            r"result 2: gradingResult is not an object",
        ),
        (
            lambda d: d["results"]["results"][3].update(testIdx=None, vars={}, testCase={}),
            r"result 3: has no question_id",
        ),
    ],
)
def test_broken_v3_documents(tmp_path: Path, change, message: str) -> None:
    doc = load(V3)
    change(doc)
    with pytest.raises(UserError, match=message):
        list(promptfoo.read(write(tmp_path, doc)))


def test_broken_v2_rows_and_non_json(tmp_path: Path) -> None:
    doc = load(V2)
    del doc["results"]["table"]["body"][2]["outputs"]
    runs = promptfoo.read(write(tmp_path, doc))
    with pytest.raises(UserError, match=r"out\.json row 2: is not a table row with outputs"):
        list(runs)
    bad = tmp_path / "bad.json"
    text = '{"evalId": "e", "results": {"version": 3, "results": [{"a": 1}, {"b": nope}]}}'
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=r"bad\.json result 1: is not JSON: lexical error"):
        list(promptfoo.read(bad))
    with pytest.raises(UserError, match=r"list\.json: is not a JSON object"):
        list(promptfoo.read(write(tmp_path, [1, 2], "list.json")))
