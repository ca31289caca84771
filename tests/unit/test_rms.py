"""FinAR RMS table metric on hand-worked examples."""

from __future__ import annotations

import random

import pytest

from fintrade_tui.scoring.rms import (
    DEFAULT_THETAS,
    parse_markdown_table,
    parse_number,
    rms,
    rms_sweep,
    table_points,
)

# Apple FY2024 10-K, $ millions: 3 rows x 2 years = 6 points
REF = """Here is the table:

| Item | FY2024 | FY2023 |
|:-----|-------:|-------:|
| Revenue | 391,035 | 383,285 |
| Net income | 93,736 | 96,995 |
| Total assets | 364,980 | 352,583 |

Figures in $ millions."""


def md(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def test_parse_markdown_table() -> None:
    rows = parse_markdown_table(REF)
    assert rows == [
        ["Item", "FY2024", "FY2023"],
        ["Revenue", "391,035", "383,285"],
        ["Net income", "93,736", "96,995"],
        ["Total assets", "364,980", "352,583"],
    ]
    assert parse_markdown_table("no table | here\njust a pipe") is None
    assert parse_markdown_table("") is None
    # no leading/trailing pipes is still a table
    assert parse_markdown_table("a | b\n--|--\n1 | 2") == [["a", "b"], ["1", "2"]]


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("1,234", 1234.0),
        ("$1,234.5", 1234.5),
        ("(1,234)", -1234.0),
        ("$(1,234)", -1234.0),
        ("-$12", -12.0),
        ("\u22125", -5.0),
        ("12.5%", 0.125),
        ("(12.5%)", -0.125),
        ("**42**", 42.0),
        ("0.3%", 0.003),
        ("1.2 billion", 1.2e9),  # read by the figures reader: scale words and suffixes
        ("$3M", 3e6),
        ("3.2x", 3.2),
        ("40 bps", 0.004),
        ("5-7%", None),  # a range is no one number
        ("12.5% (est.)", None),  # words beside the figure
        ("1,23", None),
        ("n/a", None),
        ("-", None),
    ],
)
def test_parse_number(cell: str, value: float | None) -> None:
    assert parse_number(cell) == value


def test_table_points_keys_and_values() -> None:
    pts = table_points([["", "Q1", "Q2"], ["Margin", "12.5%", "N/A"], ["Cash", "(5)", ""]])
    # empty cell -> no point; text normalized; top-left label is not a point
    assert pts == {"Margin | Q1": 0.125, "Margin | Q2": "n/a", "Cash | Q1": -5.0}


def test_identical_tables_score_one() -> None:
    r = rms(REF, REF)
    assert (r["precision"], r["recall"], r["f1"]) == (1.0, 1.0, 1.0)
    assert r["orientation"] == "as_given"
    assert (r["matched"], r["n_pred"], r["n_ref"], r["reason"]) == (6, 6, 6, None)


def test_transposed_prediction_scores_as_the_original() -> None:
    pred = md(
        [
            ["Item", "Revenue", "Net income", "Total assets"],
            ["FY2024", "391,035", "93,736", "364,980"],
            ["FY2023", "383,285", "96,995", "352,583"],
        ]
    )
    r = rms(pred, REF)
    assert (r["precision"], r["recall"], r["f1"]) == (1.0, 1.0, 1.0)
    assert r["orientation"] == "transposed"


def test_percentages_and_fractions_are_the_same_number() -> None:
    ref = md([["", "FY2024"], ["Gross margin", "46.2%"], ["Tax rate", "24.1%"]])
    pred = md([["", "FY2024"], ["Gross margin", "0.462"], ["Tax rate", "0.241"]])
    assert rms(pred, ref, theta=0)["f1"] == 1.0  # exact even at theta = 0
    assert rms(ref, pred, theta=0)["f1"] == 1.0


def test_missing_row_lowers_recall_only() -> None:
    pred = md(
        [
            ["Item", "FY2024", "FY2023"],
            ["Revenue", "391,035", "383,285"],
            ["Net income", "93,736", "96,995"],
        ]
    )
    r = rms(pred, REF)
    assert r["precision"] == 1.0
    assert r["recall"] == pytest.approx(4 / 6)
    assert r["f1"] == pytest.approx(2 * (4 / 6) / (1 + 4 / 6))


def test_extra_row_lowers_precision_only() -> None:
    pred = REF.replace(
        "| Total assets | 364,980 | 352,583 |",
        "| Total assets | 364,980 | 352,583 |\n| Operating income | 123,216 | 114,301 |",
    )
    r = rms(pred, REF)
    assert r["recall"] == 1.0
    assert r["precision"] == pytest.approx(6 / 8)
    assert r["matched"] == 6


def test_value_just_inside_and_just_outside_theta() -> None:
    ref = md([["", "v"], ["x", "100"], ["y", "200"]])
    inside = md([["", "v"], ["x", "104.9"], ["y", "200"]])  # relative error 0.049
    outside = md([["", "v"], ["x", "105.1"], ["y", "200"]])  # relative error 0.051
    r = rms(inside, ref, theta=0.05)
    # x: 1 - 0.049 / 0.05 = 0.02; y: exact = 1  ->  (1 + 0.02) / 2
    assert r["precision"] == pytest.approx(0.51)
    assert r["recall"] == pytest.approx(0.51)
    assert r["f1"] == pytest.approx(0.51)
    assert [p["score"] for p in r["pairs"]] == pytest.approx([0.02, 1.0])
    r = rms(outside, ref, theta=0.05)
    assert [p["score"] for p in r["pairs"]] == pytest.approx([0.0, 1.0])
    assert r["f1"] == pytest.approx(0.5)
    # theta = 0: exact only
    assert rms(inside, ref, theta=0)["f1"] == pytest.approx(0.5)


def test_zero_reference_value() -> None:
    ref = md([["", "v"], ["x", "0"]])
    assert rms(md([["", "v"], ["x", "0.00"]]), ref)["f1"] == 1.0
    assert rms(md([["", "v"], ["x", "0.001"]]), ref, theta=1.0)["f1"] == 0.0


def test_string_values_compare_normalized() -> None:
    ref = md([["", "Status"], ["Audit", "Unqualified  opinion"]])
    assert rms(md([["", "Status"], ["Audit", "unqualified opinion"]]), ref)["f1"] == 1.0
    assert rms(md([["", "Status"], ["Audit", "qualified"]]), ref)["f1"] == 0.0
    assert rms(md([["", "Status"], ["Audit", "12"]]), ref)["f1"] == 0.0  # number vs text


def test_keys_with_small_typos_still_match() -> None:
    pred = REF.replace("| Revenue |", "| Revenu |")
    r = rms(pred, REF)
    # "revenu | fy2024" vs "revenue | fy2024": 1 edit over 16 characters, for both years
    d = 1 / 16
    assert r["matched"] == 6
    assert r["precision"] == pytest.approx((4 + 2 * (1 - d)) / 6)
    assert r["recall"] == pytest.approx((4 + 2 * (1 - d)) / 6)
    typo = [p for p in r["pairs"] if p["pred_key"].startswith("Revenu ")]
    assert [p["key_distance"] for p in typo] == pytest.approx([d, d])
    # keys beyond tau do not match at all
    far = md([["", "Cash"], ["Goodwill", "1"]])
    r = rms(far, md([["", "Revenue"], ["Liabilities", "1"]]))
    assert (r["matched"], r["f1"], r["reason"]) == (0, 0.0, None)


def test_tau_zero_needs_exact_keys_but_ignores_case_and_spaces() -> None:
    pred = REF.replace("| Net income |", "|  NET   income |").replace("| Revenue |", "| Revenu |")
    r = rms(pred, REF, tau=0.0)
    assert r["matched"] == 4  # the two typo'd Revenue keys are out


@pytest.mark.parametrize(
    ("pred", "ref", "reason"),
    [
        ("I could not find the figures.", REF, "no table in prediction"),
        (None, REF, "no table in prediction"),
        (12345, REF, "no table in prediction"),
        ("| a | b |\n|---|---|", REF, "prediction table has no data cells"),
        (REF, "garbage", "no table in reference"),
        (REF, "", "no table in reference"),
    ],
)
def test_garbage_input_scores_zero_with_a_reason(pred, ref, reason: str) -> None:
    r = rms(pred, ref)
    assert (r["precision"], r["recall"], r["f1"]) == (0.0, 0.0, 0.0)
    assert r["reason"] == reason
    assert r["orientation"] is None


def test_rows_input_equals_text_input() -> None:
    rows = parse_markdown_table(REF)
    assert rms(rows, REF)["f1"] == 1.0
    assert rms(REF, rows)["f1"] == 1.0


def test_sweep_has_one_row_per_theta() -> None:
    rows = rms_sweep(REF, REF)
    assert [r["theta"] for r in rows] == list(DEFAULT_THETAS)
    assert all(r["f1"] == 1.0 for r in rows)
    assert rms_sweep("nothing", REF, thetas=[0.1, 0.2])[1]["reason"] == "no table in prediction"


def _random_table(rng: random.Random, n_rows: int, n_cols: int) -> list[list[str]]:
    header = [""] + [f"FY{2024 - j}" for j in range(n_cols)]
    rows = [header]
    for i in range(n_rows):
        rows.append([f"Line item {i}"] + [f"{rng.uniform(-1e4, 1e4):,.2f}" for _ in header[1:]])
    return rows


def test_recall_is_non_decreasing_along_the_sweep() -> None:
    rng = random.Random(20241101)
    for _ in range(25):
        ref = _random_table(rng, rng.randint(2, 6), rng.randint(1, 4))
        pred = [list(r) for r in ref]
        for row in pred[1:]:
            for j in range(1, len(row)):
                value = parse_number(row[j]) * (1 + rng.gauss(0, 0.2))
                row[j] = f"{value:,.2f}"
        if rng.random() < 0.5:  # drop a row
            del pred[rng.randrange(1, len(pred))]
        if rng.random() < 0.5:  # a typo in a row header
            row = pred[rng.randrange(1, len(pred))]
            row[0] = row[0].replace("item", "itme")
        if rng.random() < 0.5:  # transposed
            pred = [list(c) for c in zip(*pred, strict=True)]
        sweep = rms_sweep(md(pred), md(ref))
        recalls = [r["recall"] for r in sweep]
        precisions = [r["precision"] for r in sweep]
        assert recalls == sorted(recalls)
        assert precisions == sorted(precisions)
        assert all(0.0 <= x <= 1.0 for x in recalls + precisions)


def test_bad_parameters_raise() -> None:
    with pytest.raises(ValueError):
        rms(REF, REF, tau=1.5)
    with pytest.raises(ValueError):
        rms(REF, REF, theta=-0.1)
