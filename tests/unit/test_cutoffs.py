"""Knowledge cutoffs: which model string has which cutoff, the look-ahead of a question's as-of
against it, and where the mark shows (failure cases, the accuracy split, case studies, which
also say why a failed run failed)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.config import ModelConfig
from fintrade_tui.models.cutoffs import (
    AFTER,
    CONFIGURED,
    MAY_KNOW,
    PUBLISHED,
    RELEASE,
    UNKNOWN,
    Cutoff,
    cutoff_for,
    describe,
    look_ahead,
    mark,
    model_cutoff,
)


@pytest.mark.parametrize(
    ("model_string", "day", "basis"),
    [
        ("openai/gpt-4o-mini", date(2023, 10, 1), PUBLISHED),
        ("gpt-4o-2024-08-06", date(2023, 10, 1), PUBLISHED),
        ("openai/gpt-4.1-mini", date(2024, 6, 1), PUBLISHED),
        ("anthropic/claude-3-5-sonnet-20241022", date(2024, 4, 1), PUBLISHED),
        ("anthropic/claude-3-opus-20240229", date(2023, 8, 1), PUBLISHED),
        ("groq/llama-3.3-70b-versatile", date(2023, 12, 1), PUBLISHED),
        ("ollama_chat/llama3.1:8b", date(2023, 12, 1), PUBLISHED),
        ("ollama_chat/qwen2.5:7b", date(2024, 9, 19), RELEASE),
        ("local/qwen2.5-coder-1.5b", date(2024, 9, 19), RELEASE),
        ("local/smollm2", date(2024, 11, 1), RELEASE),
        ("mistral/mistral-large-latest", None, UNKNOWN),
        ("", None, UNKNOWN),
    ],
)
def test_cutoff_of_a_model_string(model_string: str, day: date | None, basis: str) -> None:
    assert cutoff_for(model_string) == Cutoff(day, basis)


def test_a_configured_cutoff_wins() -> None:
    assert cutoff_for("openai/gpt-4o-mini", date(2024, 7, 1)) == Cutoff(
        date(2024, 7, 1), CONFIGURED
    )
    models = {
        "mine": ModelConfig(model="openai/gpt-4o-mini", knowledge_cutoff="2025-01-31"),
        "plain": ModelConfig(model="openai/gpt-4o-mini"),
        "odd": ModelConfig(model="openai/my-finetune"),
    }
    assert model_cutoff(models, "mine") == Cutoff(date(2025, 1, 31), CONFIGURED)
    assert model_cutoff(models, "plain") == Cutoff(date(2023, 10, 1), PUBLISHED)
    # the registry's model string decides, not what the run recorded or its name
    assert model_cutoff(models, "odd", "openai/gpt-4o") == Cutoff(None, UNKNOWN)
    # an imported run: its recorded model string, else its name, else unknown
    assert model_cutoff(models, "ext", "anthropic/claude-3-5-haiku") == Cutoff(
        date(2024, 7, 1), PUBLISHED
    )
    assert model_cutoff(models, "gpt-4o-mini", "inspect/run-7") == Cutoff(
        date(2023, 10, 1), PUBLISHED
    )
    assert model_cutoff(models, "ext0") == Cutoff(None, UNKNOWN)


def test_look_ahead_is_the_as_of_against_the_cutoff() -> None:
    cut = Cutoff(date(2023, 10, 1), PUBLISHED)
    assert look_ahead(date(2023, 9, 30), cut) == MAY_KNOW
    assert look_ahead(date(2023, 10, 1), cut) == AFTER  # the cutoff day itself: not after it
    assert look_ahead(None, cut) == UNKNOWN
    assert look_ahead(date(2020, 1, 1), Cutoff(None, UNKNOWN)) == UNKNOWN
    marked = mark(date(2023, 6, 30), cut)
    assert marked == {
        "look_ahead": MAY_KNOW,
        "as_of": "2023-06-30",
        "cutoff": "2023-10-01",
        "basis": PUBLISHED,
    }
    assert describe(marked, "gpt-4o-mini") == (
        "may know the outcome: as of 2023-06-30, before gpt-4o-mini's knowledge cutoff"
        " 2023-10-01 (published)"
    )
    assert describe(mark(None, cut), "m") == "look-ahead unknown: no as-of date"
    assert describe(mark(date(2024, 1, 2), Cutoff(None, UNKNOWN)), "m") == (
        "look-ahead unknown: m's knowledge cutoff is unknown"
    )


def test_a_bad_cutoff_in_config_names_the_key(tmp_path: Path) -> None:
    from fintrade_tui.config import load_config
    from fintrade_tui.errors import UserError

    path = tmp_path / "config.yaml"
    path.write_text("models:\n  m:\n    model: openai/gpt-4o\n    knowledge_cutoff: soon\n")
    with pytest.raises(UserError) as err:
        load_config(path)
    assert "knowledge_cutoff" in str(err.value)


# -- where the mark shows --------------------------------------------------------------------


def _workspace(path: Path) -> duckdb.DuckDBPyConnection:
    """populate()'s workspace: F1 as of 2024-11-01 (alpha, beta), T2 and FT3."""
    from fintrade_tui.workspace.connection import open_workspace
    from tests.unit.test_failures_export import populate

    con = open_workspace(path)
    populate(con)
    return con


MODELS = {  # alpha's training data reaches past F1's as-of; beta's cutoff is unknown
    "alpha": ModelConfig(model="script/alpha", knowledge_cutoff="2025-03-01"),
    "beta": ModelConfig(model="script/beta"),
}


def test_failure_cases_list_what_may_be_known_and_mark_every_case(tmp_path: Path) -> None:
    from fintrade_tui.reports.failures import failure_cases

    con = _workspace(tmp_path / "ws.duckdb")
    cases = failure_cases(con, {"may_know"}, models=MODELS)
    # alpha answered F1 (as of 2024-11-01) and T2 (2024-09-30); beta's cutoff is unknown
    assert [(c["question_id"], c["model"]) for c in cases] == [("F1", "alpha"), ("T2", "alpha")]
    f1 = next(c for c in cases if c["question_id"] == "F1")
    assert f1["run_ids"] == ["r01", "r02", "r08"]  # alpha's completed F1 runs, one case
    assert f1["reason"] == (
        "may know the outcome: as of 2024-11-01, before alpha's knowledge cutoff 2025-03-01"
        " (configured)"
    )
    every = failure_cases(con, None, models=MODELS)
    assert all(c["look_ahead"]["look_ahead"] in (MAY_KNOW, AFTER, UNKNOWN) for c in every)
    errors = next(c for c in every if c["filter"] == "errors" and c["model"] == "beta")
    assert errors["look_ahead"] == {
        "look_ahead": UNKNOWN,
        "as_of": "2024-11-01",
        "cutoff": None,
        "basis": UNKNOWN,
    }
    # without the registry, the runs' model strings (script/...) say nothing: none listed
    assert failure_cases(con, {"may_know"}) == []


def test_the_accuracy_split_by_cutoff(tmp_path: Path) -> None:
    from fintrade_tui.reports.accuracy import score_rows

    con = _workspace(tmp_path / "ws.duckdb")
    rows = score_rows(con, "llm", by="cutoff", models=MODELS)
    # populate() judged r01-r04 and r07-r08: alpha's on F1/T2, beta's r07 on FT3
    by_run = {r["run_id"]: r["category"] for r in rows}
    assert by_run == {
        "r01": MAY_KNOW,
        "r02": MAY_KNOW,
        "r03": MAY_KNOW,
        "r04": MAY_KNOW,
        "r07": UNKNOWN,
        "r08": MAY_KNOW,
    }


def test_a_case_study_says_whether_the_model_may_know(tmp_path: Path) -> None:
    from fintrade_tui.config import Config
    from fintrade_tui.exports.case_study import write_case_study

    con = _workspace(tmp_path / "ws.duckdb")
    cfg = Config(store=tmp_path / "store.duckdb", models=MODELS)
    text = write_case_study(cfg, con, ["r02", "r05"], tmp_path / "case.md").read_text()
    assert (
        "- **Look-ahead:** may know the outcome: as of 2024-11-01, before alpha's knowledge"
        " cutoff 2025-03-01 (configured)"
    ) in text
    assert "- **Look-ahead:** look-ahead unknown: beta's knowledge cutoff is unknown" in text


def test_a_case_study_says_why_a_run_failed(tmp_path: Path) -> None:
    """populate()'s r07 (FT3, beta) is labelled a refusal: its case study says so."""
    from fintrade_tui.config import Config
    from fintrade_tui.exports.case_study import write_case_study

    con = _workspace(tmp_path / "ws.duckdb")
    cfg = Config(store=tmp_path / "store.duckdb", models=MODELS)
    text = write_case_study(cfg, con, ["r07"], tmp_path / "case.md").read_text()
    assert "- **Why it failed:** refused — the answer declines to answer" in text
    text = write_case_study(cfg, con, ["r04"], tmp_path / "case.md").read_text()
    assert "Why it failed" not in text  # nobody called r04 wrong
