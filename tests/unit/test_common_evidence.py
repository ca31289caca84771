"""The `common` judging protocol: the question's canonical evidence (Oracle + a fixed hybrid
retrieval) shown to the judge identically for every condition; scores labelled by protocol,
the latest version kept per protocol, the two never mixed by the read helpers."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, load_config
from fintrade_tui.errors import UserError
from fintrade_tui.judging import common_evidence
from fintrade_tui.judging.common_evidence import ORACLE_ONLY, build_common
from fintrade_tui.judging.session import agreement_pairs, judge_runs
from fintrade_tui.models import llm, providers
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.reports.accuracy import score_rows
from fintrade_tui.runs.prompts import defang
from fintrade_tui.runs.runner import Runner, RunSpec, drain
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.score_reader import mean_by_run
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.conftest import needs_bundle, write_config
from tests.unit.test_conditions import INDEX_SETTINGS, small_index

# the same figures in both answers: their audits agree, the answers' wording does not
ANSWER_A = "Apple's ROE was 1.6 and its RSI was 55, so it looks healthy."
ANSWER_B = "Per the 10-K [E1], ROE stood at 1.6; RSI 55. Verdict: healthy."
JUDGEMENT = json.dumps(
    {
        **{d: {"score": 4, "justification": "ok"} for d in ("accuracy", "completeness")},
        **{d: {"score": 3, "justification": "ok"} for d in ("relevance", "clarity")},
        "metrics_used": ["ROE", "RSI"],
        "fundamental_integration": 3,
        "trading_signal_integration": 3,
        "reasoning_depth": 2,
    }
)


class Recorder:
    """A litellm provider (`recorder/...`) that records each judge call's messages."""

    calls: list[list[dict]] = []

    @classmethod
    def install(cls) -> None:
        from litellm import CustomLLM, ModelResponse

        class Provider(CustomLLM):
            async def acompletion(self, model: str, messages: list, **_):
                cls.calls.append(messages)
                return ModelResponse(
                    model=model,
                    choices=[{"index": 0, "message": {"role": "assistant", "content": JUDGEMENT}}],
                )

        llm.litellm()
        providers.register_provider("recorder", Provider())


def _question(qid: str, ticker: str) -> Question:
    return Question(
        id=qid,
        source="test",
        category="FT",
        text="How do Apple's RSI, ROA and ROE look after its latest annual report?",
        tickers=[ticker],
        scope="company",
        as_of=date(2024, 11, 1),
        window_start=date(2024, 8, 1),
        window_end=date(2024, 11, 1),
        golden=["roa", "roe", "rsi_14"],
        reference_answer="ROE about 1.6, RSI near 55: healthy.",
        status=RESOLVED,
    )


@pytest.fixture(scope="module")
def setup(built_store: Config, tmp_path_factory) -> tuple[Config, Path, dict[str, Question]]:
    """A config with a small AAPL index (three filings around the 10-K of 2024-11-01, the one
    test_conditions builds: `small_index`), two mock answerers and the recording judge; AAPL
    and MSFT questions in the workspace."""
    index = small_index(built_store, tmp_path_factory)
    folder = index.parent
    mock = "    model: openai/gpt-4o-mini\n    extra: {{mock_response: {!r}}}\n"
    extra = (
        f"workspace: {folder / 'ws.duckdb'}\n"
        f"retrieval:\n  index: {index}\n{INDEX_SETTINGS}"
        "models:\n  ans-a:\n"
        + mock.format(ANSWER_A)
        + "  ans-b:\n"
        + mock.format(ANSWER_B)
        + "  rec:\n    model: recorder/judge\njudging:\n  model: rec\n"
    )
    path = write_config(folder, built_store.bundle, built_store.store, extra)
    cfg = load_config(path)
    with duckdb.connect(str(cfg.store), read_only=True) as con:
        r = Resolver(con, cfg.questions.reference_date)
        qs = {
            q.id: r.evidence(q) for q in (_question("C-AAPL", "AAPL"), _question("C-MSFT", "MSFT"))
        }
    with open_workspace(cfg.workspace) as ws:
        save_questions(ws, qs.values())
    Recorder.install()
    return cfg, path, qs


def _answer_free(messages: list[dict], answer: str) -> list[dict]:
    """The messages with the answer (as the prompt shows it) taken out."""
    shown = defang(answer, "answer")
    assert sum(m["content"].count(shown) for m in messages) == 1
    return [m | {"content": m["content"].replace(shown, "<ANSWER>")} for m in messages]


@pytest.mark.long  # RAG on the embedder, judged under both protocols
@needs_bundle
def test_no_rag_and_rag_judged_under_both_protocols(setup, monkeypatch) -> None:
    cfg, path, qs = setup
    q = qs["C-AAPL"]
    # the small index already holds what this test retrieves: no indexing of the rest
    monkeypatch.setattr("fintrade_tui.retrieval.indexing.ensure_index", lambda *a, **k: None)
    built = []
    real = common_evidence.build_common
    monkeypatch.setattr(
        common_evidence, "build_common", lambda *a: built.append(a[1].id) or real(*a)
    )
    with open_workspace(cfg.workspace) as ws:
        runner = Runner(cfg, RunStore(ws))
        specs = [RunSpec(q, "no_rag", "ans-a"), RunSpec(q, "rag", "ans-b")]
        for s in specs:
            asyncio.run(drain(runner.stream(s), lambda ev: None))
        runs = {r["condition"]: r for r in RunStore(ws).list(status=COMPLETED)}
        assert runs["no_rag"]["answer"] == ANSWER_A and runs["rag"]["answer"] == ANSWER_B
        rag_ids = [i["id"] for i in runs["rag"]["evidence"]["items"]]
        assert rag_ids and not runs["no_rag"]["evidence"]["items"]

        Recorder.calls.clear()
        per = asyncio.run(judge_runs(cfg, ws, list(runs.values()), judge="rec"))
        per_calls = list(Recorder.calls)
        Recorder.calls.clear()
        com = asyncio.run(judge_runs(cfg, ws, list(runs.values()), judge="rec", protocol="common"))
        com_calls = list(Recorder.calls)
        assert built == ["C-AAPL"]  # once per question per session, not once per run

        # both sets stored and labelled
        assert {r["protocol"] for r in per} == {"per_condition"}
        assert {r["protocol"] for r in com} == {"common"}
        store = ScoreStore(ws)
        assert {s["protocol"] for s in store.history()} == {"per_condition", "common"}
        assert len(store.latest(kind="llm")) == 2  # the default read: per-condition only
        assert {s["protocol"] for s in store.latest(kind="llm")} == {"per_condition"}
        assert {s["protocol"] for s in store.latest(kind="llm", protocol="common")} == {"common"}
        assert len(store.latest(kind="llm", protocol=None)) == 4

        # the common evidence: the oracle's golden values, then the fixed retrieval's passages
        ce = [r["detail"]["common_evidence"] for r in com]
        assert ce[0] == ce[1]
        oracle_ids = [f"oracle:AAPL:{g}" for g in q.golden]
        # the fixed retrieval (k 8, 3000 tokens, hybrid) is what RAG gives at these defaults
        assert ce[0]["ids"] == oracle_ids + rag_ids
        assert not any(ORACLE_ONLY in n for n in ce[0]["notes"])
        assert "common_evidence" not in per[0]["detail"]

        # the two conditions' common prompts differ in the answer only
        def by_answer(calls: list[list[dict]], answer: str) -> list[dict]:
            (hit,) = [c for c in calls if any(answer in m["content"] for m in c)]
            return hit

        a, b = by_answer(com_calls, ANSWER_A), by_answer(com_calls, ANSWER_B)
        assert a != b
        assert _answer_free(a, ANSWER_A) == _answer_free(b, ANSWER_B)
        assert "<evidence>" in a[1]["content"]
        assert "ROA" in a[1]["content"] or "return on assets" in a[1]["content"].lower()
        # per condition: today's prompt, no evidence block
        pa = by_answer(per_calls, ANSWER_A)
        assert "<evidence>" not in pa[1]["content"] and "<evidence>" not in pa[0]["content"]

        # a new common version never replaces the per-condition latest, and vice versa
        rid = runs["rag"]["id"]
        store.save(Score(rid, "llm", "rec", accuracy=1, protocol="common"))
        latest_per = {s["run_id"]: s for s in store.latest(kind="llm")}
        latest_com = {s["run_id"]: s for s in store.latest(kind="llm", protocol="common")}
        assert latest_per[rid]["accuracy"] == 4 and latest_com[rid]["accuracy"] == 1
        assert latest_com[rid]["version"] > latest_per[rid]["version"]

        rows = {r["condition"]: r for r in score_rows(ws, "llm", protocol="common")}
        assert rows["rag"]["score"] == 1 and rows["no_rag"]["score"] == 4
        assert {r["protocol"] for r in rows.values()} == {"common"}
        assert {r["score"] for r in score_rows(ws, "llm")} == {4}
        store.save(Score(rid, accuracy=2, completeness=2, relevance=2, clarity=2))
        agree = {p["dimension"]: p["judge"] for p in agreement_pairs(ws, protocol="common")}
        assert agree["accuracy"] == 1 and {p["judge"] for p in agreement_pairs(ws)} >= {4}

    # the CLI: already judged under common -> nothing to do; the option is checked
    def cli(*args: str):
        return CliRunner().invoke(main, ["--config", str(path), *args])

    res = cli("judge", "--protocol", "common", "--json")
    assert res.exit_code == 0 and json.loads(res.output) == []
    res = cli("judge", "--protocol", "common", "--json", "--force", "--runs", rid)
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.output)
    assert row["protocol"] == "common" and row["run"] == rid and row["accu"] == 4
    res = cli("judge", "--protocol", "common", "--panel")
    assert res.exit_code != 0 and "--panel" in res.output and "Traceback" not in res.output


@needs_bundle
def test_a_ticker_the_index_lacks_gives_the_oracle_part_alone(setup) -> None:
    cfg, _, qs = setup
    q = qs["C-MSFT"]
    with duckdb.connect(str(cfg.store), read_only=True) as con:
        ce = build_common(cfg, q, con)
    assert [i.id for i in ce.items] == [f"oracle:MSFT:{g}" for g in q.golden]
    assert any("MSFT" in n and "not in the retrieval index" in n for n in ce.notes)
    assert any(ORACLE_ONLY in n for n in ce.notes)
    # and the note is stored with the score
    with open_workspace(cfg.workspace) as ws:
        rid = RunStore(ws).start({"question_id": q.id, "condition": "rag", "model": "ans-a"})
        RunStore(ws).finish(rid, status=COMPLETED, answer=ANSWER_A)
        (row,) = asyncio.run(
            judge_runs(cfg, ws, [RunStore(ws).get(rid)], judge="rec", protocol="common")
        )
    assert row["protocol"] == "common"
    assert any(ORACLE_ONLY in n for n in row["detail"]["common_evidence"]["notes"])


# --- the score store, no bundle needed ------------------------------------------------------


def test_protocol_identity_and_old_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:  # a workspace from before protocols
        from fintrade_tui.workspace.run_records import SCHEMA as RUNS

        con.execute(RUNS)
        con.execute(
            """CREATE TABLE scores (id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL, annotator VARCHAR NOT NULL, version INTEGER NOT NULL,
            created_at TIMESTAMP NOT NULL, accuracy INTEGER, completeness INTEGER,
            relevance INTEGER, clarity INTEGER, other_run VARCHAR, preference VARCHAR,
            note VARCHAR, blind BOOLEAN, status VARCHAR NOT NULL, detail VARCHAR,
            label VARCHAR, UNIQUE (run_id, kind, annotator, version))"""
        )
        con.execute(
            "INSERT INTO runs (id, question_id, condition, model, status, started_at)"
            " VALUES ('r1', 'Q', 'rag', 'm', 'completed', now())"
        )
        con.execute(
            "INSERT INTO scores VALUES ('s1', 'r1', 'llm', 'j', 1, now(), 3, 3, 3, 3,"
            " NULL, NULL, NULL, false, 'ok', NULL, NULL)"
        )
    with duckdb.connect(str(path), read_only=True) as con:
        (old,) = ScoreStore(con, read_only=True).latest(kind="llm")
        assert old["protocol"] == "per_condition" and old["accuracy"] == 3
    with duckdb.connect(str(path)) as con:
        store = ScoreStore(con)  # adds the column
        store.save(Score("r1", "llm", "j", accuracy=5, protocol="common"))
        store.save(Score("r1", accuracy=2))  # a person: no protocol
        (per,) = store.latest(kind="llm")
        (com,) = store.latest(kind="llm", protocol="common")
        assert (per["accuracy"], per["version"], com["accuracy"], com["version"]) == (3, 1, 5, 2)
        store.save(Score("r1", "llm", "j", accuracy=4))  # saved as per_condition
        assert [
            (s["accuracy"], s["protocol"]) for s in store.latest(kind="llm", protocol=None)
        ] == [
            (5, "common"),
            (4, "per_condition"),
        ]
        (human,) = store.latest(kind="human", protocol="common")
        assert human["protocol"] is None and human["accuracy"] == 2
        assert [s["protocol"] for s in store.history("r1")] == [
            None,
            "per_condition",
            "common",
            "per_condition",
        ]
        with pytest.raises(UserError, match="judge scores only"):
            store.save(Score("r1", accuracy=2, protocol="common"))
        with pytest.raises(UserError, match="unknown"):
            store.save(Score("r1", "llm", "j", accuracy=2, protocol="shared"))
        with pytest.raises(UserError, match="unknown"):
            store.latest(protocol="shared")
        both = store.latest(protocol=None)
        with pytest.raises(ValueError, match="mixed"):
            mean_by_run(both)
        # per condition: (4 judge + 2 human) / 2 on accuracy; common: (5 + 2) / 2
        assert mean_by_run(both, "per_condition")["r1"]["accuracy"] == 3.0
        assert mean_by_run(both, "common")["r1"]["accuracy"] == 3.5
