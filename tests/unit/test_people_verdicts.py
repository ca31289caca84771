"""The answer checks against verdicts people outside this project wrote: FinanceBench's authors'
labels on 1,200 published answers in the bundle (financebench-labelled/). The issue's goals per
kind of reference hold (a change that loses agreement with people fails here, not only on the
benchmarks page), and the kinds are read from the references as published."""

from __future__ import annotations

import pytest

from benchmarks import people_verdicts as pv
from tests.conftest import BUNDLE, needs_bundle

pytestmark = needs_bundle


@pytest.fixture(scope="module")
def checked() -> list[dict]:
    rows, _ = pv.run_checks(pv.load(pv.path_in(BUNDLE)), "tolerance")
    return rows


def test_the_set_is_people_outside_the_project(checked: list[dict]) -> None:
    assert len(checked) == 1200
    assert {r["person"] for r in checked} == {"correct", "incorrect", "refusal"}
    assert sum(r["person"] == "correct" for r in checked) == 575  # the bundle README's count


def test_the_goals_hold_per_kind_of_reference(checked: list[dict]) -> None:
    by = pv.grouped(checked, "kind")
    figure, yes_no, prose = (pv.scores(by[k]) for k in ("figure", "yes/no", "prose"))
    assert figure["precision"] >= 0.97 and figure["recall"] >= 0.90, figure
    assert yes_no["precision"] >= 0.95 and yes_no["recall"] >= 0.75, yes_no
    assert prose["correct called incorrect share"] <= 0.05, prose
    every = pv.scores(checked)
    assert every["kappa"] >= 0.75, every
    assert every["refusals called correct"] == 0


@pytest.mark.parametrize(
    ("reference", "kind"),
    [
        ("$1577.00", "figure"),
        ("4.2%", "figure"),
        ("Yes, there was a decline of ~42% between FY2023 and Q2 of FY 2024.", "yes/no"),
        ("No. Microsoft decreased its debt by $2.5bn in FY 2023 vs FY 2022.", "yes/no"),
        ("AES has converted inventory 9.5 times in FY 2022.", "prose"),
        ("Data Center", "prose"),
    ],
)
def test_the_kind_is_read_from_the_reference(reference: str, kind: str) -> None:
    assert pv.kind_of(reference) == kind
