"""`judge --rescore` on a small hand-built workspace (no store, no model): every selected run
gets a new `match` score and the old versions stay; the verdicts are answer_match's on the
same answer/reference pairs, written out here; litellm is never called; a failure part-way
leaves the scores table as it was; the selectors, the JSON fields, and the report's matrix
of the matcher's verdicts."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, load_config
from fintrade_tui.errors import UserError
from fintrade_tui.judging import rescore as rs
from fintrade_tui.reports.failures import latest_audits
from fintrade_tui.scoring.answer_match import match
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question, save_questions
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.conftest import BUNDLE, write_config

FINQA_REF = {"exe_ans": 0.125}
TATQA_REF = {"answer": 25.5, "answer_type": "arithmetic", "scale": "million"}
QUESTIONS = [
    Question("FQ1", "finqa", "arith", "What share of revenue was R&D?", "12.5%", extra=FINQA_REF),
    Question("TQ1", "tatqa", "arithmetic", "What was the change?", "25.5", extra=TATQA_REF),
    Question("GQ1", "byo", "numeric", "What was net income?", "$5.7 billion"),
    Question("NQ1", "byo", "judgement", "Is the trend up?"),  # no reference
]
# id, question, condition, model, batch, status, answer, expected label (written by hand for
# the finqa and tolerance pairs; the tatqa pair is left to the independent match() below)
RUNS = [
    ("a1", "FQ1", "no_rag", "alpha", "b1", "completed", "The answer is 12.5%.", "correct"),
    ("a2", "FQ1", "rag", "alpha", "b1", "completed", "answer: 0.13", "incorrect"),
    ("a3", "GQ1", "no_rag", "alpha", "b2", "completed", "Net income reached $5.68 billion.",
     "correct"),
    ("a4", "GQ1", "rag", "alpha", "b2", "completed", "Net income was $6.2 billion.", "incorrect"),
    # no figure read: unread, not wrong (the judge or a person decides)
    ("a5", "GQ1", "rag", "beta", "b2", "completed", "It went up a lot.", None),
    ("a6", "NQ1", "no_rag", "beta", "b2", "completed", "Yes, up 4%.", None),
    ("a7", "TQ1", "no_rag", "beta", "b2", "completed", "The change was 25.5 million.", "?"),
    ("a8", "GQ1", "reference", "reference", None, "completed", "Net income was $5.7 billion.",
     "correct"),
    ("a9", "GQ1", "no_rag", "beta", "b2", "error", "", None),
]  # fmt: skip
SELECTED = ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]  # completed, not the reference answer


def _reference(qid: str):
    """The reference each benchmark scores against, written out (not via answer_checks)."""
    return {"FQ1": (0.125, "finqa"), "TQ1": (TATQA_REF, "tatqa"), "GQ1": (None, "tolerance")}[qid]


@pytest.fixture
def cfg_path(tmp_path: Path) -> Path:
    path = write_config(tmp_path, BUNDLE, tmp_path / "absent.duckdb",
                        f"workspace: {tmp_path / 'ws.duckdb'}\n")  # fmt: skip
    ws = open_workspace(tmp_path / "ws.duckdb")
    try:
        populate(ws)
    finally:
        ws.close()
    return path


@pytest.fixture
def cfg(cfg_path: Path) -> Config:
    return load_config(cfg_path)


def populate(ws: duckdb.DuckDBPyConnection) -> None:
    save_questions(ws, QUESTIONS)
    runs = RunStore(ws)
    for i, (rid, qid, cond, model, batch, status, answer, _) in enumerate(RUNS):
        runs.start({"id": rid, "question_id": qid, "condition": cond, "model": model,
                    "batch": batch, "started_at": datetime(2025, 1, 2, 10, 0, i)})  # fmt: skip
        runs.finish(rid, status=status, answer=answer)
    # an LLM judge's score with its audit, which re-scoring must leave alone
    ScoreStore(ws).save(Score("a1", "llm", "local", accuracy=4, detail={"audit": {"old": 1}}))


def cli(cfg_path: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["--config", str(cfg_path), *args])
    return res.exit_code, res.output


def rescore_json(cfg_path: Path, *args: str) -> dict:
    code, out = cli(cfg_path, "judge", "--rescore", *args, "--json")
    assert code == 0, out
    return json.loads(out)


def scores(cfg: Config) -> list[tuple]:
    con = duckdb.connect(str(cfg.workspace), read_only=True)
    try:
        return con.execute("SELECT * FROM scores ORDER BY id").fetchall()
    finally:
        con.close()


def test_scores_append_and_the_latest_version_is_read(cfg_path: Path, cfg: Config) -> None:
    first = rescore_json(cfg_path, "--mode", "benchmark")
    assert sorted(r["run_id"] for r in first["results"]) == SELECTED
    assert {r["version"] for r in first["results"]} == {1}
    before = scores(cfg)
    second = rescore_json(cfg_path, "--mode", "tolerance")
    assert {r["version"] for r in second["results"]} == {2}
    after = scores(cfg)
    assert set(before) <= set(after) and len(after) == len(before) + len(SELECTED)
    with open_workspace(cfg.workspace) as ws:
        store = ScoreStore(ws)
        latest = {s["run_id"]: s for s in store.latest(kind="match")}
        history = [s for s in store.history("a1") if s["kind"] == "match"]
        llm = store.latest(kind="llm")
    assert [s["version"] for s in history] == [1, 2]
    assert [s["detail"]["mode"] for s in history] == ["finqa", "tolerance"]
    assert latest["a1"]["version"] == 2 and latest["a1"]["detail"]["mode"] == "tolerance"
    assert (llm[0]["run_id"], llm[0]["accuracy"], llm[0]["version"]) == ("a1", 4, 1)


def test_verdicts_are_the_matchers_on_the_same_pairs(cfg_path: Path, cfg: Config) -> None:
    out = {r["run_id"]: r for r in rescore_json(cfg_path, "--mode", "benchmark")["results"]}
    by_id = {r[0]: r for r in RUNS}
    for rid in SELECTED:
        _, qid, *_, answer, hand = by_id[rid]
        got = out[rid]
        if qid == "NQ1":
            assert (got["verdict"], got["label"]) == ("no_reference", None)
            continue
        ref, mode = _reference(qid)
        q = next(q for q in QUESTIONS if q.id == qid)
        expected = match(answer, q.reference_answer if ref is None else ref, mode, cfg=cfg)
        assert (got["mode"], got["verdict"], got["reason"]) == (
            mode,
            expected.verdict,
            expected.reason,
        )
        label = {"equal": "correct", "no_number": None}.get(expected.verdict, "incorrect")
        assert got["label"] == label
        if hand != "?":
            assert got["label"] == hand, (rid, got["reason"])


def test_a_forced_mode_scores_every_answer_under_it(cfg_path: Path, cfg: Config) -> None:
    out = {r["run_id"]: r for r in rescore_json(cfg_path, "--mode", "finqa")["results"]}
    assert {r["mode"] for r in out.values()} == {"finqa"}
    # FinQA's rule on the tolerance set's pair: $5.68bn is not 5.7bn rounded to 5 places
    expected = match("Net income reached $5.68 billion.", QUESTIONS[2].reference_answer, "finqa")
    assert (out["a3"]["verdict"], out["a3"]["label"]) == (expected.verdict, "incorrect")


def test_no_model_is_called(cfg_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    def boom(*a, **k):
        raise AssertionError("a model was called")

    for name in ("completion", "acompletion", "text_completion", "atext_completion"):
        monkeypatch.setattr(litellm, name, boom)
    monkeypatch.setattr("fintrade_tui.judging.judge.judge_run", boom)
    monkeypatch.setattr("fintrade_tui.judging.session.judge_run", boom)
    got = rescore_json(cfg_path)
    assert got["runs"] == len(SELECTED) and got["llm"] is None


def test_with_llm_also_judges_every_selected_run(
    cfg_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    async def fake_judge(cfg, j, judge):
        seen.append(j.run["id"])
        return Score(j.run["id"], "llm", judge.name, accuracy=3)  # judge: the resolved Model

    monkeypatch.setattr("fintrade_tui.judging.session.judge_run", fake_judge)
    got = rescore_json(cfg_path, "--with-llm", "--batch", "b1")
    assert sorted(seen) == ["a1", "a2"]  # a1 again, although the judge scored it already
    assert got["llm"] == {"judge": "local", "protocol": "per_condition", "panel": False,
                          "judged": 2, "failures": 0}  # fmt: skip


@pytest.mark.parametrize("stop", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_a_failure_part_way_leaves_the_scores_as_they_were(
    cfg: Config, monkeypatch: pytest.MonkeyPatch, stop: BaseException
) -> None:
    before = scores(cfg)
    real = rs.append_scores
    calls = []

    def second_fails(cur, batch):
        calls.append(len(batch))
        if len(calls) == 2:  # the first chunk is already inserted in the transaction
            raise stop
        return real(cur, batch)

    monkeypatch.setattr(rs, "append_scores", second_fails)
    with open_workspace(cfg.workspace) as ws:
        sel = rs.select_runs(ws)
        with pytest.raises(type(stop)):
            rs.rescore(cfg, ws, sel, chunk=3)
    assert calls == [3, 3] and scores(cfg) == before


def test_selectors(cfg_path: Path) -> None:
    def ids(*args: str) -> list[str]:
        return sorted(r["run_id"] for r in rescore_json(cfg_path, *args)["results"])

    assert ids("--batch", "b1") == ["a1", "a2"]
    assert ids("--runs", "a3,a4") == ["a3", "a4"]
    assert ids("--runs", "a8") == ["a8"]  # a reference answer named by id
    assert ids("--source", "finqa") == ["a1", "a2"]
    assert ids("--source", "byo") == ["a3", "a4", "a5", "a6"]
    assert ids("--with-reference") == sorted([*SELECTED, "a8"])


@pytest.mark.parametrize(
    "args, line",
    [
        (["--rescore", "--runs", "zz"], "--runs zz: matches no completed run"),
        (["--rescore", "--batch", "b9"], "no completed run in batch b9"),
        (["--rescore", "--source", "nope"], "--source nope: is no question set here"),
        (["--mode", "finqa"], "--mode: is for re-scoring"),
        (["--source", "byo"], "--source: is for re-scoring"),
        (["--rescore", "--panel"], "--panel: is an LLM judge"),
        (["--rescore", "--with-llm", "-m", "nobody"], "model 'nobody'"),
    ],
)
def test_bad_input_is_one_line(cfg_path: Path, cfg: Config, args: list[str], line: str) -> None:
    before = scores(cfg)
    code, out = cli(cfg_path, "judge", *args)
    assert code == 2 and line in out and len(out.strip().splitlines()) == 1, out
    assert "Traceback" not in out and scores(cfg) == before


def test_json_fields(cfg_path: Path) -> None:
    got = rescore_json(cfg_path)
    assert set(got) == {"runs", "scored", "correct", "incorrect", "refusal", "no_reference",
                        "accuracy", "verdicts", "modes", "audited", "contradicted", "store",
                        "against_corrected", "seconds", "mode", "llm", "results"}  # fmt: skip
    assert got["against_corrected"] == 0  # no disputed reference here: tests/unit/test_disputes.py
    labels = [r["label"] for r in got["results"]]
    assert got["runs"] == len(SELECTED) == len(labels)
    assert got["correct"] == labels.count("correct")
    assert got["incorrect"] == labels.count("incorrect")
    assert got["refusal"] == labels.count("refusal")
    total = got["correct"] + got["incorrect"] + got["refusal"]
    assert got["scored"] == total == len(SELECTED) - 2  # a6 has no reference, a5 no figure
    assert got["no_reference"] == 1 and labels.count(None) == 2
    assert got["accuracy"] == round(got["correct"] / got["scored"], 4)
    assert got["modes"] == {"tolerance": 7}  # the default: read as a person reads
    assert sum(got["verdicts"].values()) == len(SELECTED)
    assert got["store"] is False and got["mode"] == "tolerance"
    # audited against the reference (no store here): not a6, whose question has none
    audited = {r["run_id"] for r in got["results"] if r["audit"] is not None}
    assert got["audited"] == len(audited) and audited == set(SELECTED) - {"a6"}
    row = next(r for r in got["results"] if r["run_id"] == "a4")
    assert set(row) == {"run_id", "question_id", "model", "condition", "score_id", "version",
                        "mode", "verdict", "label", "reason", "audit"}  # fmt: skip
    assert (row["question_id"], row["model"], row["condition"]) == ("GQ1", "alpha", "rag")
    assert set(row["audit"]) == {"SUPPORTED", "CONTRADICTED", "NOT_FOUND"}


def test_the_audit_is_kept_where_the_failure_filters_read_it(cfg_path: Path, cfg: Config) -> None:
    rescore_json(cfg_path)
    with open_workspace(cfg.workspace) as ws:
        store = ScoreStore(ws)
        audits = latest_audits(store)
        match_rows = {s["run_id"]: s for s in store.latest(kind="match")}
    # the newer record's audit wins: a1's re-run audit replaces the judge's older one
    assert audits["a1"] == match_rows["a1"]["detail"]["audit"] != {"old": 1}
    assert audits["a4"] == match_rows["a4"]["detail"]["audit"]


def test_report_rolls_up_the_matchers_verdicts(cfg_path: Path) -> None:
    results = rescore_json(cfg_path)["results"]
    code, out = cli(cfg_path, "report", "--scores", "match", "--json", "--resamples", "200")
    assert code == 0, out
    rep = json.loads(out)
    assert rep["scores"] == "match"
    cells = {(c["model"], c["condition"], c["category"]): c for c in rep["accuracy"]}
    for (model, cond), want in _shares(results).items():
        assert cells[(model, cond, "overall")]["accuracy"] == pytest.approx(100 * want)


def _shares(results: list[dict]) -> dict[tuple[str, str], float]:
    """Share labelled correct per model × condition, one question at a time (averaged)."""
    per_q: dict[tuple[str, str], dict[str, list[int]]] = {}
    for r in results:
        if r["label"] is not None:
            key = (r["model"], r["condition"])
            per_q.setdefault(key, {}).setdefault(r["question_id"], []).append(
                r["label"] == "correct"
            )
    return {k: sum(sum(v) / len(v) for v in qs.values()) / len(qs) for k, qs in per_q.items()}


def test_select_runs_says_when_the_workspace_has_none(tmp_path: Path) -> None:
    with open_workspace(tmp_path / "empty.duckdb") as ws, pytest.raises(UserError) as err:
        rs.select_runs(ws)
    assert "no completed run" in str(err.value)
