"""Pairwise preferences: the side draw and its normalisation back to the runs, the append-only
store (newest per annotator and pair), and agreement with a scripted pairwise judge judged in
both orders — strict and directional shares hand-computed — through `prefer` / `preferences`."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.judging.preferences import verdict_row
from fintrade_tui.models import llm, providers
from fintrade_tui.stats.preference_agreement import agreement, agreement_table, comparison
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.preferences import (
    Preference,
    PreferenceStore,
    first_shown_as_b,
    shown_pair,
)
from fintrade_tui.workspace.questions import RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import RunStore, insert_runs
from tests.conftest import write_config

# run id -> (condition, model); answers name their run so the scripted judge can find them
RUNS = {
    "r-ora": ("oracle", "m"),
    "r-ind": ("indicator_rag", "m"),
    "r-nor": ("no_rag", "m"),
    "r-too": ("tool_use", "m"),
    "r-oth": ("oracle", "m"),  # a second question's run
}
# the scripted judge, per unordered pair: the run it prefers in both orders, "tie" in both
# orders, or "bias" (always "A": the two orders disagree, so the pair's verdict is a tie)
SCRIPT = {
    frozenset({"r-ora", "r-ind"}): "r-ora",
    frozenset({"r-ora", "r-nor"}): "bias",
    frozenset({"r-too", "r-ind"}): "r-ind",
    frozenset({"r-nor", "r-ind"}): "tie",
}
CALLS: list[tuple[str, str]] = []


def _verdict(content: str) -> str:
    a, b = re.findall(r"ANSWER OF (r-\w+)", content)[:2]  # shown as A, then as B
    CALLS.append((a, b))
    want = SCRIPT[frozenset({a, b})]
    winner = {"bias": "A", "tie": "tie"}.get(want) or ("A" if want == a else "B")
    return json.dumps({"winner": winner, "reason": "scripted"})


def _install_judge() -> None:
    from litellm import CustomLLM, ModelResponse

    class Provider(CustomLLM):
        async def acompletion(self, model: str, messages: list, **_):
            text = _verdict(messages[-1]["content"])
            return ModelResponse(
                model=model,
                choices=[{"index": 0, "message": {"role": "assistant", "content": text}}],
            )

    llm.litellm()
    providers.register_provider("prefscript", Provider())


def _question(qid: str) -> Question:
    return Question(
        id=qid,
        source="jsonl",
        category="F",
        text="Is Apple profitable?",
        tickers=["AAPL"],
        as_of=date(2024, 11, 1),
        status=RESOLVED,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    _install_judge()
    CALLS.clear()
    ws_path = tmp_path / "ws.duckdb"
    with open_workspace(ws_path) as ws:
        save_questions(ws, [_question("Q1"), _question("Q2")])
        store = RunStore(ws)
        rows = [
            {
                "id": rid,
                "question_id": "Q2" if rid == "r-oth" else "Q1",
                "condition": cond,
                "model": model,
                "status": "completed",
                "answer": f"ANSWER OF {rid}: ROE is high.",
            }
            for rid, (cond, model) in RUNS.items()
        ]
        with store.transaction() as cur:
            insert_runs(cur, rows)
    biased = json.dumps({"winner": "A", "reason": "first is best"})
    extra = (
        f"workspace: {ws_path}\nmodels:\n"
        "  judge: {model: prefscript/x}\n"
        f"  biased: {{model: openai/gpt-4o-mini, extra: {{mock_response: '{biased}'}}}}\n"
    )
    return write_config(tmp_path / "cfg", tmp_path, tmp_path / "store.duckdb", extra)


def _cli(config: Path, *args: str) -> dict | list | str:
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output) if "--json" in args else res.output


def _by_comparison(out: dict) -> dict[str, tuple]:
    return {
        r["comparison"]: (r["pairs"], r["decisive"], r["strict"], r["directional"])
        for r in out["rows"]
    }


def test_scripted_preferences_and_judge_give_hand_computed_agreement(config: Path) -> None:
    prefs = [
        # (RUN_A, RUN_B, choice, annotator): a/b name the runs as given
        ("r-ind", "r-ora", "b", "ann1"),  # Oracle preferred; the judge agrees
        ("r-ora", "r-ind", "tie", "ann2"),  # a tie; the judge picks Oracle
        ("r-ora", "r-nor", "b", "ann1"),  # No-RAG preferred; the judge is position-biased: tie
        ("r-too", "r-ind", "a", "ann1"),  # superseded by the next line (append-only)
        ("r-too", "r-ind", "b", "ann1"),  # Indicator-RAG preferred; the judge agrees
        ("r-nor", "r-ind", "tie", "ann1"),  # a tie; the judge ties in both orders
    ]
    for a, b, choice, who in prefs:
        row = _cli(config, "prefer", a, b, "--choice", choice, "--annotator", who, "--json")
        assert row["winner"] == {"a": a, "b": b, "tie": "tie"}[choice]
        assert (row["run_a"], row["run_b"], row["first_side"]) == (a, b, "A")  # CLI: as given
    before = _cli(config, "preferences", "--json")
    assert before["all"]["pairs"] == 0 and before["all"]["unjudged"] == 5 and not CALLS

    out = _cli(config, "preferences", "--judge", "judge", "--json")
    assert out["failures"] == [] and out["judged_now"] == 4 and out["preferences"] == 5
    assert len(CALLS) == 8  # four distinct pairs, each in both orders
    assert {frozenset(c) for c in CALLS} == set(SCRIPT) and len(set(CALLS)) == 8
    got = _by_comparison(out)
    # Oracle vs Indicator-RAG: ann1 Oracle = judge (agree), ann2 tie != Oracle
    assert got["Oracle vs Indicator-RAG"] == (2, 1, 0.5, 1.0)
    assert got["Oracle vs No-RAG"] == (1, 1, 0.0, 0.0)  # the judge's tie is a disagreement
    assert got["Tool-Use vs Indicator-RAG"] == (1, 1, 1.0, 1.0)
    assert got["Indicator-RAG vs No-RAG"] == (1, 0, 1.0, None)  # no decisive pair
    total = out["all"]
    assert (total["pairs"], total["decisive"], total["unjudged"]) == (5, 3, 0)
    assert total["strict"] == pytest.approx(3 / 5) and total["directional"] == pytest.approx(2 / 3)
    assert {r["model"] for r in out["rows"]} == {"m"}

    CALLS.clear()  # the verdicts are cached: a report judges nothing again
    again = _cli(config, "preferences", "--judge", "judge", "--json")
    assert not CALLS and again["judged_now"] == 0 and _by_comparison(again) == got
    one = _cli(config, "preferences", "--judge", "judge", "--annotator", "ann2", "--json")
    assert _by_comparison(one) == {"Oracle vs Indicator-RAG": (1, 0, 0.0, None)}
    text = _cli(config, "preferences", "--judge", "judge")
    assert "Oracle vs Indicator-RAG" in text and "66.7%" in text and "60.0%" in text


def test_a_mock_response_judge_biased_to_a_ties_every_pair(config: Path) -> None:
    _cli(config, "prefer", "r-ora", "r-ind", "--choice", "a")
    _cli(config, "prefer", "r-nor", "r-ind", "--choice", "tie", "--note", "both vague")
    out = _cli(config, "preferences", "--judge", "biased", "--json")
    # "A" in both orders favours a different run each time: every pair's verdict is a tie
    assert _by_comparison(out) == {
        "Oracle vs Indicator-RAG": (1, 1, 0.0, 0.0),
        "Indicator-RAG vs No-RAG": (1, 0, 1.0, None),
    }


def test_bad_preferences_are_one_line_errors(config: Path) -> None:
    cases = [
        (["r-ora", "r-oth", "--choice", "a"], "answer different questions"),
        (["r-ora", "r-ora", "--choice", "a"], "compared with itself"),
        (["r-ora", "r-none", "--choice", "a"], "run 'r-none': not found"),
        (["r-ora", "r-ind", "--choice", "c"], "Invalid value for '--choice'"),
    ]
    for args, message in cases:
        res = CliRunner().invoke(main, ["--config", str(config), "prefer", *args])
        assert res.exit_code == 2 and message in res.output, res.output
    res = CliRunner().invoke(main, ["--config", str(config), "preferences", "--judge", "nope"])
    assert res.exit_code == 2 and "nope" in res.output and "Traceback" not in res.output


def test_the_side_draw_maps_back_to_the_runs(tmp_path: Path) -> None:
    seeds = [str(i) for i in range(40)]
    flips = [first_shown_as_b(s) for s in seeds]
    assert any(flips) and not all(flips)  # both sides happen
    assert [first_shown_as_b(s) for s in seeds] == flips  # and reproducibly
    kept, swapped = seeds[flips.index(False)], seeds[flips.index(True)]
    assert shown_pair("x", "y", kept) == ("x", "y") and shown_pair("x", "y", swapped) == ("y", "x")
    assert shown_pair("x", "y", None) == ("x", "y")
    # "A" is whichever run was shown left: the first run unless the draw swapped them
    assert Preference("x", "y", "A", seed=kept).winner == "x"
    assert Preference("x", "y", "A", seed=swapped).winner == "y"
    assert Preference("x", "y", "B", seed=swapped).winner == "x"
    assert Preference("x", "y", "tie", seed=swapped).winner == "tie"
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        with RunStore(ws).transaction() as cur:
            insert_runs(cur, [{"id": r, "question_id": "Q"} for r in ("x", "y")])
        store = PreferenceStore(ws)
        row = store.save(Preference("x", "y", "A", seed=swapped, annotator="ann"))
        assert (row["run_a"], row["run_b"], row["first_side"], row["winner"]) == (
            "y",
            "x",
            "B",
            "y",
        )
        store.save(Preference("y", "x", "tie", seed=kept, annotator="ann"))  # an edit
        assert [r["winner"] for r in store.latest()] == ["tie"]
        assert len(store.history()) == 2


def test_pure_agreement_and_verdict_normalisation() -> None:
    # hand-computed: 4 pairs, 3 decisive; identical labels 2 (x, tie); same winner 1 of 3
    items = [("x", "x"), ("tie", "tie"), ("y", "tie"), ("z", "w")]
    assert agreement(items) == {"pairs": 4, "decisive": 3, "strict": 0.5, "directional": 1 / 3}
    assert agreement([]) == {"pairs": 0, "decisive": 0, "strict": None, "directional": None}
    run = lambda c, m="m": {"condition": c, "model": m}  # noqa: E731
    assert comparison(run("no_rag"), run("rag")) == ("m", "RAG vs No-RAG")
    assert comparison(run("indicator_rag"), run("tool_use")) == ("m", "Tool-Use vs Indicator-RAG")
    assert comparison(run("oracle", "b"), run("oracle", "a")) == ("a vs b", "Oracle vs Oracle")
    # a match judged with b shown first is stored with the sorted pair's first run as A
    match = {"a": "y", "b": "x", "first": "A", "second": "tie", "consistent": False}
    row = verdict_row("Q", "j", match | {"winner": None})
    assert (row["run_x"], row["run_y"], row["first"], row["second"]) == ("x", "y", "tie", "A")
    assert row["winner"] == "tie" and row["consistent"] is False
    table = agreement_table(
        [{"run_a": "x", "run_b": "y", "winner": "x"}, {"run_a": "y", "run_b": "z", "winner": "z"}],
        {("x", "y"): "x"},
        {"x": run("oracle"), "y": run("rag"), "z": run("no_rag")},
    )
    assert table["rows"] == [
        {"model": "m", "comparison": "Oracle vs RAG", "pairs": 1, "decisive": 1, "strict": 1.0,
         "directional": 1.0, "unjudged": 0},
        {"model": "m", "comparison": "RAG vs No-RAG", "pairs": 0, "decisive": 0, "strict": None,
         "directional": None, "unjudged": 1},
    ]  # fmt: skip
