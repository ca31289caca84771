"""The fatal-flaw screen: each deterministic check catches its crafted answer and stays quiet on
clean ones; the LLM check (a mock_response) turns flagged verdicts into flags; screenings are
append-only with the latest counting; `screen` round-trips through the CLI; the failure
browser's `fatal_flaw` filter lists the flagged run with its flags as the reason."""

from __future__ import annotations

import asyncio
import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import ModelConfig, load_config
from fintrade_tui.errors import UserError
from fintrade_tui.judging import flaws
from fintrade_tui.judging.flaws import deterministic_flags, llm_flags
from fintrade_tui.reports.failures import FILTERS, failure_cases
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.screenings import Flag, FlagStore
from tests.conftest import BUNDLE, write_config

AS_OF = date(2025, 6, 30)
APPLE = Question(
    "F1", "fintradebench", "F", "As of June 30, 2025, is Apple's ROE high?",
    tickers=["AAPL"], as_of=AS_OF, status=RESOLVED,
)  # fmt: skip
PAIR = Question(
    "FT1", "fintradebench", "FT", "As of June 30, 2025, compare Apple and Microsoft.",
    tickers=["AAPL", "MSFT"], as_of=AS_OF, status=RESOLVED,
)  # fmt: skip
WINDOW = Question(
    "T1", "fintradebench", "T", "Over the past 3 months to June 30, 2025, how did Apple trade?",
    tickers=["AAPL"], as_of=AS_OF, window_start=date(2025, 4, 1), window_end=AS_OF,
    status=RESOLVED,
)  # fmt: skip
QUESTIONS = {"apple": APPLE, "pair": PAIR, "window": WINDOW}

# (question, answer, extra run fields, [(flag, span, start)]) — spans and offsets by hand
CRAFTED = [
    ("apple", "Nvidia's ROE of 80% makes NVDA the pick.", {}, [("wrong_entity", "Nvidia", 0)]),
    ("apple", "Apple closed at $210 on 2025-09-30.", {}, [("wrong_period", "2025-09-30", 24)]),
    ("apple", "Apple's Q3 2025 revenue rose 8%.", {}, [("wrong_period", "Q3 2025", 8)]),
    ("apple", "Apple's FY2026 guidance is strong.", {}, [("wrong_period", "FY2026", 8)]),
    ("apple", "By September 2025 the RSI was 71.", {}, [("wrong_period", "September 2025", 3)]),
    ("window", "Apple fell 9% in March 2024.", {}, [("wrong_period", "March 2024", 17)]),
    (
        "apple",
        "Apple's ROE is high.",
        {"extra": {"finish_reason": "length"}},
        [("truncated", "Apple's ROE is high.", 0)],
    ),
    (
        "apple",
        "Apple's ROE is high.",
        {"params": {"max_tokens": 64}, "tokens_out": 64},
        [("truncated", "Apple's ROE is high.", 0)],
    ),
    (
        "apple",
        "Apple's ROE is high, and the",
        {},
        [("truncated", "Apple's ROE is high, and the", 0)],
    ),
    ("pair", "Apple's ROE of 150% is strong.", {}, [("incomplete", "Apple", 0)]),
]
CLEAN = [
    ("apple", "Apple's ROE was 150% in FY2024 and the RSI was 55 on 2025-06-30.", {}),
    ("apple", "In March 2025 and Q1 2025 Apple's margins held; 2024 was stronger.", {}),
    ("apple", "Apple's margin beats Microsoft's and Nvidia's.", {}),  # names the asked company
    ("pair", "Apple's ROE of 150% beats Microsoft's 35%.", {}),
    ("window", "Apple rose 4% from April 2025 to June 30, 2025.", {}),
    ("apple", "Apple looks strong:\n\n- ROE: 150%\n- Verdict: Buy", {}),  # a list, no full stop
    ("apple", "| Ticker | ROE |\n|---|---|\n| AAPL | 150% |", {}),
    ("apple", "Apple's ROE is high.", {"params": {"max_tokens": 64}, "tokens_out": 40}),
]


def _run(answer: str, **extra: Any) -> dict[str, Any]:
    return {"id": "r1", "answer": answer, "as_of": AS_OF, "status": COMPLETED} | extra


@pytest.mark.parametrize(("q", "answer", "extra", "want"), CRAFTED)
def test_each_check_catches_its_crafted_answer(q, answer, extra, want) -> None:
    got = deterministic_flags(_run(answer, **extra), QUESTIONS[q])
    assert [(f.flag, f.span, f.start) for f in got] == want
    assert all(f.check == "deterministic" and f.reason for f in got)


@pytest.mark.parametrize(("q", "answer", "extra"), CLEAN)
def test_clean_answers_raise_nothing(q, answer, extra) -> None:
    assert deterministic_flags(_run(answer, **extra), QUESTIONS[q]) == []


def test_reasons_name_the_date_the_company_and_the_cause() -> None:
    (period,) = flaws.wrong_period(_run("Apple closed at $210 on 2025-09-30."), APPLE)
    assert period.reason == "2025-09-30 after as-of 2025-06-30"
    (entity,) = flaws.wrong_entity(_run("Nvidia's ROE of 80% makes NVDA the pick."), APPLE)
    assert entity.reason == "about NVDA, not the question's AAPL"
    (window,) = flaws.wrong_period(_run("Apple fell 9% in March 2024."), WINDOW)
    assert window.reason == "March 2024 outside the question's period 2025-04-01 to 2025-06-30"
    (cut,) = flaws.truncated(_run("x.", extra={"stop_reason": "max_tokens"}), APPLE)
    assert cut.reason == "finish reason max_tokens"
    assert flaws.flag_line(period.to_dict()) == "⚑ wrong_period: 2025-09-30 after as-of 2025-06-30"


SEPTEMBER = Question(
    "F1", "fintradebench", "F", "As of September 2025, is Apple really as profitable as it seems?",
    tickers=["AAPL"], as_of=date(2025, 9, 30), window_start=date(2025, 9, 1),
    window_end=date(2025, 9, 30), status=RESOLVED,
)  # fmt: skip
LATEST_QUARTER = "Apple's ROE for the quarter ended 2025-06-28 was 0.356 (10-Q filed 2025-08-01)."
OLDER_QUARTER = "It was 0.41 for the quarter ended 2024-12-28."


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        # the latest quarter and filing known in September: what the answer should use
        (LATEST_QUARTER, []),
        ("In June 2025 the ROA was 0.07.", []),
        ("Apple's fiscal 2024 annual report shows ROE of 1.6.", []),  # the latest 10-K's year
        # older than the latest reported: flagged, unless the evidence gave it
        (OLDER_QUARTER, ["2024-12-28"]),
        ("Apple's 2023 ROE was 1.5.", ["2023"]),
        ("By October 2025 it will have risen.", ["October 2025"]),  # after as-of: always
    ],
)
def test_a_window_question_accepts_the_periods_known_in_the_window(answer, flagged) -> None:
    got = flaws.wrong_period(_run(answer), SEPTEMBER)
    assert [f.span for f in got] == flagged


def test_a_period_the_evidence_named_is_not_the_answers_mistake() -> None:
    """A trend question's Oracle gives the quarters before the latest: citing them is right;
    the same answer without that evidence is flagged."""
    prior = {
        "id": "oracle:AAPL:roe:2024-12-28",
        "title": "AAPL ROE = 0.41",
        "text": "AAPL ROE 0.41 for the quarter ended 2024-12-28, from the 10-Q filed 2025-01-31",
    }
    given = {"evidence": {"condition": "oracle", "items": [prior]}}
    assert flaws.wrong_period(_run(OLDER_QUARTER, **given), SEPTEMBER) == []
    (flag,) = flaws.wrong_period(_run(OLDER_QUARTER), SEPTEMBER)
    assert flag.reason == "2024-12-28 outside the question's period 2025-09-01 to 2025-09-30"
    # evidence is point-in-time: a later date in it is the filing's own (a plan's end, a
    # fiscal label), so an answer repeating it has not looked ahead; one of its own has
    plan = "may sell up to 1,900 shares over a period ending on November 17, 2025"
    later = {"evidence": {"items": [prior | {"text": f"The trading plan {plan}."}]}}
    answer = "An executive's plan ends November 17, 2025; a recovery came in October 2025."
    (after,) = flaws.wrong_period(_run(answer, **later), SEPTEMBER)
    assert after.reason == "October 2025 after as-of 2025-09-30"
    # Microsoft's fiscal label, read as a calendar quarter, would be after the as-of
    label = "MSFT ROE 0.0793 for the quarter ended 2025-06-30, known from 2025-07-30 (FY2025 Q4)"
    msft = {"evidence": {"items": [{"title": "MSFT ROE = 0.0793", "text": label}]}}
    assert flaws.wrong_period(_run("Its ROE in FY2025 Q4 was 0.0793.", **msft), SEPTEMBER) == []
    assert [f.span for f in flaws.wrong_period(_run("Its ROE in FY2025 Q4 was 0.0793."),
                                                SEPTEMBER)] == ["FY2025 Q4"]  # fmt: skip


def _mock_cfg(tmp_path: Path, reply: Any) -> Any:
    config = write_config(tmp_path / "cfg", BUNDLE, extra=f"workspace: {tmp_path / 'ws.duckdb'}\n")
    cfg = load_config(config)
    text = reply if isinstance(reply, str) else json.dumps(reply)
    mock = ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": text})
    cfg.models = {"screen": mock}
    cfg.judging = cfg.judging.model_copy(update={"retries": 0})
    return cfg


VERDICTS = {
    "unsupported_claims": {
        "reason": "the 12% buyback yield is in no evidence item",
        "span": "a 12% buyback yield",
        "flagged": True,
    },
    "inconsistent_conclusion": {"reason": "follows from the ROE", "span": "", "flagged": False},
}


def test_the_llm_check_turns_flagged_verdicts_into_flags(tmp_path: Path) -> None:
    cfg = _mock_cfg(tmp_path, VERDICTS)
    run = _run("Apple's ROE is 150% with a 12% buyback yield, so it is efficient.")
    run["evidence"] = {"items": [{"id": "E1", "title": "AAPL ROE", "text": "ROE 1.50"}]}
    got, error = asyncio.run(llm_flags(cfg, run, APPLE, "screen"))
    assert error is None
    assert got == [
        Flag(
            "unsupported_claims",
            "the 12% buyback yield is in no evidence item",
            "a 12% buyback yield",
            25,
            "screen",
        )
    ]
    assert "[AAPL ROE] ROE 1.50" in flaws.evidence_text(run, APPLE)
    bad, error = asyncio.run(llm_flags(_mock_cfg(tmp_path, "not json"), run, APPLE, "screen"))
    assert bad == [] and error.startswith("invalid judge output")


def _workspace(path: Path) -> Any:
    ws = open_workspace(path)
    save_questions(ws, [APPLE, PAIR])
    runs = RunStore(ws)
    answers = {
        "r1": ("F1", "Apple closed at $210 on 2025-09-30."),
        "r2": ("F1", "Apple's ROE of 150% is high."),
        "r3": ("FT1", "Apple's ROE of 150% is strong."),
    }
    for i, (rid, (qid, answer)) in enumerate(answers.items()):
        runs.start(
            {
                "id": rid,
                "question_id": qid,
                "condition": "no_rag",
                "model": "m",
                "as_of": AS_OF,
                "started_at": datetime(2025, 7, 1, 10, 0, i),
            }
        )
        runs.finish(rid, status=COMPLETED, answer=answer)
    return ws


def test_screenings_append_and_the_latest_counts(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws.duckdb")
    store = FlagStore(ws)
    first = store.save("r1", [Flag("wrong_period", "late", "2025-09-30", 24)], ["deterministic"])
    assert store.latest()["r1"]["flags"][0]["span"] == "2025-09-30"
    second = store.save("r1", [], ["deterministic", "screen"], "screen")
    assert (first["version"], second["version"]) == (1, 2)
    latest = store.latest(["r1"])["r1"]
    assert latest["flags"] == [] and latest["checks"] == ["deterministic", "screen"]
    (n,) = ws.execute("SELECT count(*) FROM flags").fetchone()
    assert n == 1  # the first screening's flag is kept: history
    with pytest.raises(UserError, match="not found"):
        store.save("nope", [Flag("truncated", "x")], ["deterministic"])
    assert ws.execute("SELECT count(*) FROM flag_screenings").fetchone() == (2,)  # rolled back


def test_screen_cli_round_trip_and_the_fatal_flaw_filter(tmp_path: Path) -> None:
    _workspace(tmp_path / "ws.duckdb").close()
    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        "models:\n  screen:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: '{json.dumps(VERDICTS)}'}}\n"
        "judging:\n  model: screen\n  retries: 0\n"
    )
    config = write_config(tmp_path / "cfg", BUNDLE, extra=extra)

    def cli(*args: str) -> Any:
        res = CliRunner().invoke(main, ["--config", str(config), "screen", *args])
        assert res.exit_code == 0, res.output
        return res.output

    out = json.loads(cli("--no-llm", "--json"))
    assert [(s["run_id"], [f["flag"] for f in s["flags"]]) for s in out] == [
        ("r1", ["wrong_period"]),
        ("r2", []),
        ("r3", ["incomplete"]),
    ]
    assert out[0]["checks"] == ["deterministic"] and out[0]["question_id"] == "F1"
    assert out[0]["flags"][0] | {} == {
        "flag": "wrong_period",
        "reason": "2025-09-30 after as-of 2025-06-30",
        "span": "2025-09-30",
        "start": 24,
        "check": "deterministic",
    }
    out = json.loads(cli("--run", "r2", "--json"))  # with the (mock) LLM check
    assert [f["flag"] for f in out[0]["flags"]] == ["unsupported_claims"]
    assert out[0]["checks"] == ["deterministic", "screen"] and out[0]["llm_model"] == "screen"
    text = cli("--question", "FT1", "--no-llm")
    assert "r3 ⚑ incomplete: covers only AAPL; the question also asks about MSFT" in text
    bad = CliRunner().invoke(main, ["--config", str(config), "screen", "--run", "zz"])
    assert bad.exit_code == 2 and "run 'zz'" in bad.output

    ws = open_workspace(tmp_path / "ws.duckdb")
    cases = failure_cases(ws, {"fatal_flaw"})
    assert [(c["run_ids"], c["numbers"]["flags"]) for c in cases] == [
        (["r1"], ["wrong_period"]),
        (["r2"], ["unsupported_claims"]),
        (["r3"], ["incomplete"]),
    ]
    assert cases[0]["reason"] == "wrong_period: 2025-09-30 after as-of 2025-06-30"
    assert cases[0]["filter"] == "fatal_flaw" and cases[0]["question_id"] == "F1"
    # the default lists it after the other filters; leaving it out leaves its cases out
    assert [c["filter"] for c in failure_cases(ws)][-3:] == ["fatal_flaw"] * 3
    others = set(FILTERS) - {"fatal_flaw"}
    assert all(c["filter"] != "fatal_flaw" for c in failure_cases(ws, others))
    assert FILTERS[-1] == "fatal_flaw"
    ws.close()
