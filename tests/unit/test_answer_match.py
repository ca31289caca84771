"""Answer matcher: 64 pairs in four benchmarks' styles with the verdict and reason expected by
hand under every mode (tests/data/answer_match_pairs.yaml); the `finqa` mode against FinQA's own
eval_program and the `tatqa` mode against TAT-QA's own TaTQAEmAndF1 (both vendored verbatim
under tests/data/external/, run here as the independent expectation); the parser's figures."""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.scoring.answer_match import EQUAL, MODES, match
from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.finqa.dsl import str_to_num
from fintrade_tui.scoring.tatqa import gold_annotation

DATA = Path(__file__).resolve().parent.parent / "data"
EXTERNAL = DATA / "external"
PAIRS: list[dict[str, Any]] = yaml.safe_load((DATA / "answer_match_pairs.yaml").read_text())


def _load(name: str, path: Path) -> ModuleType:
    """A vendored script as a module, under the name its siblings import it by."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with warnings.catch_warnings():  # its regexes' "\d" in plain strings: not ours to fix
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def finqa_eval() -> ModuleType:
    return _load("finqa_evaluate", EXTERNAL / "finqa_eval" / "finqa_evaluate.py")


@pytest.fixture(scope="module")
def tatqa_metric() -> ModuleType:
    _load("tatqa_utils", EXTERNAL / "tatqa_eval" / "tatqa_utils.py")  # tatqa_metric imports it
    return _load("tatqa_metric", EXTERNAL / "tatqa_eval" / "tatqa_metric.py")


def _match(pair: dict[str, Any], mode: str) -> Any:
    return match(
        pair["answer"],
        pair["reference"],
        mode,
        scale_hint=pair.get("hint"),
        answer_scale=pair.get("answer_scale"),
    )


def _id(pair: dict[str, Any]) -> str:
    return f"{pair['style']}:{pair['answer'][:30]}|{str(pair['reference'])[:20]}"


def test_the_table_has_sixty_pairs_in_four_styles_each_with_every_mode() -> None:
    styles = Counter(p["style"] for p in PAIRS)
    assert sum(styles.values()) >= 60
    assert set(styles) == {"FinQA", "TAT-QA", "FinanceBench", "FinTradeBench"}
    assert min(styles.values()) >= 14
    assert all(set(MODES) <= set(p) for p in PAIRS)


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
@pytest.mark.parametrize("mode", MODES)
def test_verdict_and_reason_as_expected(pair: dict[str, Any], mode: str) -> None:
    got = _match(pair, mode)
    assert (got.verdict, got.reason) == tuple(pair[mode])
    assert "\n" not in got.reason
    if got.answer_figure is not None:  # the span the UI marks is the figure as written
        a, b = got.answer_figure.span
        assert pair["answer"][a:b] == got.answer_figure.text


def _finqa_script(module: ModuleType, figure: str, gold: float) -> bool:
    """FinQA's execution accuracy for the one-step program add(figure, const_0)."""
    invalid, result = module.eval_program(["add(", figure, "const_0", ")", "EOF"], [])
    return invalid == 0 and result == gold


FINQA_PAIRS = [p for p in PAIRS if isinstance(p["reference"], float | int)]


@pytest.mark.parametrize("pair", FINQA_PAIRS, ids=_id)
def test_finqa_mode_gives_finqa_scripts_verdict(pair: dict[str, Any], finqa_eval) -> None:
    got = _match(pair, "finqa")
    if got.answer_figure is None:  # the script is given the whole answer and reads nothing
        assert got.verdict == "no_number"
        assert finqa_eval.str_to_num(pair["answer"]) == "n/a"
        assert not _finqa_script(finqa_eval, pair["answer"], pair["reference"])
        return
    text = got.answer_figure.text
    readable = finqa_eval.str_to_num(text) != "n/a"
    assert (str_to_num(text) is not None) == readable  # FinQA's rule, emulated once
    script = _finqa_script(finqa_eval, text, pair["reference"])
    if readable:
        assert (got.verdict == EQUAL) == script
        assert "cannot read" not in got.reason
    else:  # the script scores it 0 whatever it says; the reason tells the reader so
        assert not script
        assert f"FinQA's own script cannot read '{text}'" in got.reason


def test_the_finqa_comparison_covers_both_verdicts_and_both_readings(finqa_eval) -> None:
    outcomes = set()
    for pair in FINQA_PAIRS:
        got = _match(pair, "finqa")
        if got.answer_figure is not None:
            text = got.answer_figure.text
            outcomes.add((got.verdict, finqa_eval.str_to_num(text) != "n/a"))
    assert {("equal", True), ("not_equal", True), ("equal", False)} <= outcomes
    assert len(FINQA_PAIRS) >= 25


def _official(module: ModuleType, gold: dict, prediction: Any, scale: str) -> tuple:
    metric = module.TaTQAEmAndF1()
    metric(ground_truth=gold, prediction=prediction, pred_scale=scale)
    row = metric.get_raw()[-1]
    return row["em"], row["f1"], scale == gold["scale"]


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_tatqa_mode_gives_the_official_em_f1_and_scale(pair: dict[str, Any], tatqa_metric) -> None:
    got = _match(pair, "tatqa")
    gold = gold_annotation(pair["reference"], pair.get("hint"))
    assert got.tatqa_prediction is not None
    official = _official(tatqa_metric, gold, *got.tatqa_prediction)
    assert (got.em, got.f1, got.scale_ok) == official


def _official_cases(name: str) -> list[dict[str, Any]]:
    return json.loads((EXTERNAL / "tatqa_eval" / name).read_text(encoding="utf-8"))


def test_tatqa_mode_on_tatqas_own_metric_test_cases(tatqa_metric) -> None:
    cases = _official_cases("metric_test_cases.json")
    assert len(cases) == 39
    for case in cases:
        gold, pred, scale = case["gold"], case["prediction"], case["pred_scale"]
        got = match(pred, gold, "tatqa", answer_scale=scale)
        official = _official(tatqa_metric, gold, pred, scale)
        assert (got.em, got.f1, got.scale_ok) == official, case
        assert (got.em, got.f1) == (case["em"], case["f1"]), case  # as TAT-QA's test says


def test_tatqa_mode_on_dev_questions_with_tatqas_sample_predictions(tatqa_metric) -> None:
    rows = _official_cases("dev_sample.json")
    assert len(rows) == 41 and len({r["answer_type"] for r in rows}) == 4
    scores = []
    for row in rows:
        gold = {k: row[k] for k in ("answer", "answer_type", "scale", "answer_from")}
        got = match(row["prediction"], gold, "tatqa", answer_scale=row["pred_scale"])
        official = _official(tatqa_metric, gold, row["prediction"], row["pred_scale"])
        assert (got.em, got.f1, got.scale_ok) == official, row["uid"]
        scores.append(got.em)
    assert 0 < sum(scores) < len(scores)  # both outcomes occur


# --- the parser --------------------------------------------------------------------------------
FIGURES = [  # text, [(as written, value, kind, scale word, currency)]
    ("12.5%", [("12.5%", 0.125, "percent", "", "")]),
    ("12.5 percent", [("12.5 percent", 0.125, "percent", "", "")]),
    ("40 basis points", [("40 basis points", 0.004, "percent", "", "")]),
    ("2.5 percentage points", [("2.5 percentage points", 0.025, "percent", "", "")]),
    ("(1,234)", [("(1,234)", -1234.0, "plain", "", "")]),
    ("$(1,234)", [("$(1,234)", -1234.0, "currency", "", "USD")]),
    ("\u22125.5", [("\u22125.5", -5.5, "plain", "", "")]),
    ("$1.2bn", [("$1.2bn", 1.2e9, "currency", "billion", "USD")]),
    ("€3.4M", [("€3.4M", 3.4e6, "currency", "million", "EUR")]),
    ("£500k", [("£500k", 5e5, "currency", "thousand", "GBP")]),
    ("¥1,000", [("¥1,000", 1000.0, "currency", "", "JPY")]),
    ("USD 2 mn", [("USD 2 mn", 2e6, "currency", "million", "USD")]),
    ("3 tn dollars", [("3 tn dollars", 3e12, "currency", "trillion", "USD")]),
    ("$5 MM", [("$5 MM", 5e6, "currency", "million", "USD")]),
    ("3.2x", [("3.2x", 3.2, "multiple", "", "")]),
    ("3.2 times", [("3.2 times", 3.2, "multiple", "", "")]),
    ("1.2-1.4 billion", [("1.2-1.4 billion", 1.2e9, "plain", "billion", "")]),
    ("5-7%", [("5-7%", 0.05, "percent", "", "")]),
    ("rose from 5% to 7%", [("5%", 0.05, "percent", "", ""), ("7%", 0.07, "percent", "", "")]),
    ("Q3 FY2024 10-K, filed 2024-11-01: 1.5", [("1.5", 1.5, "plain", "", "")]),
    ("the 20-day MA over 14 days [E2]", []),
    ("ROE (35.6%) beats 2024E and 1H24 guidance", [("35.6%", 0.356, "percent", "", "")]),
    ("Max drawdown: (12.4%)", [("(12.4%)", -0.124, "percent", "", "")]),
]


@pytest.mark.parametrize(("text", "expected"), FIGURES)
def test_figures_as_written(text: str, expected: list[tuple]) -> None:
    got = figures(text)
    assert [(f.text, f.kind, f.scale_word, f.currency) for f in got] == [
        (t, k, s, c) for t, _, k, s, c in expected
    ]
    assert [f.value for f in got] == pytest.approx([v for _, v, *_ in expected])
    assert all(text[f.span[0] : f.span[1]] == f.text for f in got)


def test_ranges_keep_both_ends_and_context_scales_apply_to_bare_figures_only() -> None:
    (r,) = figures("between 5% and 7%")
    assert (r.value, r.high, r.is_range) == (pytest.approx(0.05), pytest.approx(0.07), True)
    bare, own, pct = figures("5,678 and $2.1 billion and 4%", scale_hint="(in millions)")
    assert (bare.value, bare.scale_from_hint) == (5.678e9, True)
    assert (own.value, own.scale_from_hint) == (pytest.approx(2.1e9), False)
    assert pct.value == pytest.approx(0.04)
    (year,) = figures("In 2019", scale_hint="in thousands")
    assert year.is_year and year.value == 2019


def test_the_numeric_audit_reads_its_figures_with_the_parser() -> None:
    from fintrade_tui.audits.numeric import stated_figure

    text = "ROE (35.6%), P/E 38.2x, +5%, cash $1.2bn, NIM up 25 bps, drawdown: (12.4%), in 2024"
    got = [stated_figure(f, 100) for f in figures(text, ranges=False)]
    assert [g and g[1:] for g in got] == [
        ("35.6", False, "%", 35.6),
        ("38.2", False, "x", 38.2),
        ("5", True, "%", 5.0),
        ("1.2", False, "$B", 1.2),
        ("25", False, "bp", 25.0),
        ("12.4", True, "%", -12.4),
        None,  # a year
    ]
    first = figures(text)[0]
    assert got[0] is not None and got[0][0] == (100 + first.span[0], 100 + first.span[1])


def test_tolerance_comes_from_config_and_a_bad_mode_is_one_line() -> None:
    strict = Config.model_validate({"judging": {"match": {"rel_tol": 0.001}}})
    assert match("14.1%", 0.14136).verdict == "equal"  # default 1%
    got = match("14.1%", 0.14136, cfg=strict)
    assert got.verdict == "not_equal"
    assert got.reason.endswith(
        "off by 0.25% (tolerance 0.1%); equal at the answer's precision (1 decimal)"
    )
    with pytest.raises(UserError, match="unknown mode 'exact'"):
        match("1", 1.0, "exact")
    with pytest.raises(UserError, match="TAT-QA reference: has no 'answer' or 'answer_type'"):
        match("1", {"answer": 1.0, "scale": ""}, "tatqa")
