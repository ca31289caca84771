"""Inter-annotator agreement (stats/annotators.py): the libraries on their own documented
examples, our wrapper on a crafted two-annotator set against calling sklearn / krippendorff
directly, exact / ±1 by hand, disagreements and adjudication (append-only, via ScoreStore), and
`report --annotators` / `disagreements` / `adjudicate` through click's CliRunner."""

from __future__ import annotations

import json
import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from fintrade_tui.cli import main
from fintrade_tui.errors import UserError
from fintrade_tui.stats.annotators import (
    adjudicate,
    annotator_agreement,
    disagreement_view,
    disagreements,
    human_scores,
    krippendorff_alpha,
)
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.scores import ScoreStore
from tests.conftest import BUNDLE, write_config
from tests.unit.annotator_cases import second_annotator_scores
from tests.unit.test_failures_export import populate

# krippendorff's README: 3 coders, 15 units, "*" = missing
README = [
    "*    *    *    *    *    3    4    1    2    1    1    3    3    *    3",
    "1    *    2    1    3    3    4    3    *    *    *    *    *    *    *",
    "*    *    2    1    3    4    4    *    2    1    1    3    3    *    4",
]
README_DATA = [[np.nan if v == "*" else int(v) for v in coder.split()] for coder in README]

# a crafted two-annotator set using every level 1-5 (so κ's labels are the same either way)
ANA = [1, 2, 3, 4, 5, 5, 3, 2, 4, 1]
BO = [1, 3, 3, 5, 5, 4, 1, 2, 4, 2]


def test_libraries_on_their_documented_examples() -> None:
    # krippendorff README (Krippendorff's own example): nominal 0.691, interval 0.811
    assert (
        round(krippendorff.alpha(reliability_data=README_DATA, level_of_measurement="nominal"), 3)
        == 0.691
    )
    assert (
        round(krippendorff.alpha(reliability_data=README_DATA, level_of_measurement="interval"), 3)
        == 0.811
    )
    # our wrapper is the ordinal alpha of the very same call
    assert krippendorff_alpha(np.array(README_DATA, dtype=float)) == pytest.approx(
        krippendorff.alpha(reliability_data=README_DATA, level_of_measurement="ordinal")
    )
    # scikit-learn's docs example
    y1 = ["negative", "positive", "negative", "neutral", "positive"]
    y2 = ["negative", "positive", "negative", "neutral", "negative"]
    assert cohen_kappa_score(y1, y2) == pytest.approx(0.6875)


def _scores(dim: str, **by: list[int]) -> list[dict]:
    return [
        {"run_id": f"r{i}", "annotator": name, dim: v, "detail": {}}
        for name, values in by.items()
        for i, v in enumerate(values)
    ]


def test_wrapper_equals_the_libraries_on_a_crafted_set() -> None:
    inter = annotator_agreement(_scores("accuracy", ana=ANA, bo=BO))
    assert inter["annotators"] == ["ana", "bo"]
    acc = inter["dimensions"][0]
    assert acc["dimension"] == "accuracy" and acc["n_items"] == 10 and acc["n_annotators"] == 2
    (pair,) = acc["pairs"]
    assert (pair["a"], pair["b"], pair["n"]) == ("ana", "bo", 10)
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(ANA, BO, weights="quadratic"))
    assert pair["kappa"] == pytest.approx(
        cohen_kappa_score(ANA, BO, weights="quadratic", labels=[1, 2, 3, 4, 5])
    )
    assert acc["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=[ANA, BO], level_of_measurement="ordinal")
    )
    # by hand: equal on r0 r2 r4 r7 r8 (5 of 10); off by 2 only on r6 (3 vs 1)
    assert acc["exact"] == pair["exact"] == 0.5
    assert acc["within_1"] == pair["within_1"] == 0.9
    # the other dimensions were not scored
    assert [d["n_items"] for d in inter["dimensions"][1:]] == [0, 0, 0]
    assert all(d["alpha"] is None for d in inter["dimensions"][1:])


def test_three_annotators_with_missing_scores() -> None:
    rows = _scores("clarity", a=[1, 2, 3, 4], b=[1, 2, 4, 4], c=[2, 2, 3])
    rows.append({"run_id": "solo", "annotator": "a", "clarity": 5, "detail": {}})
    d = annotator_agreement(rows)["dimensions"][3]
    assert d["n_items"] == 4  # "solo" was scored once: not an item
    data = [[1, 2, 3, 4], [1, 2, 4, 4], [2, 2, 3, math.nan]]
    assert d["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    )
    by = {(p["a"], p["b"]): p for p in d["pairs"]}
    assert by[("a", "c")]["n"] == 3 and by[("b", "c")]["n"] == 3 and by[("a", "b")]["n"] == 4
    # 11 pair comparisons: a-b 3 equal of 4, a-c 2 of 3, b-c 1 of 3 -> 6 / 10... by hand:
    gaps = [0, 0, 1, 0] + [1, 0, 0] + [1, 0, 1]
    assert d["exact"] == pytest.approx(np.mean([g == 0 for g in gaps]))
    assert d["within_1"] == 1.0


def test_disagreements_and_adjudication(tmp_path: Path) -> None:
    ws = open_workspace(tmp_path / "ws.duckdb")
    try:
        populate(ws)
        second_annotator_scores(ws)
        items = disagreements(human_scores(ws))
        assert [(i["run_id"], i["dimension"], i["spread"]) for i in items] == [
            ("r02", "accuracy", 3),
            ("r07", "completeness", 2),
        ]
        assert items[0]["scores"] == {"ana": 5, "bo": 2} and items[0]["adjudicated"] is None
        view = disagreement_view(ws)
        assert (view[0]["question_id"], view[0]["model"], view[0]["condition"]) == (
            "F1",
            "alpha",
            "rag",
        )
        with pytest.raises(UserError, match="already scored run r02"):
            adjudicate(ws, "r02", {"accuracy": 4}, "x", adjudicator="bo")
        with pytest.raises(UserError, match="gives no reason"):
            adjudicate(ws, "r02", {"accuracy": 4}, " ")
        row = adjudicate(ws, "r02", {"accuracy": 3}, "the ROE figure is wrong")
        assert (row["annotator"], row["version"], row["note"]) == (
            "adjudicated",
            1,
            "the ROE figure is wrong",
        )
        stored = [s for s in ScoreStore(ws).latest(kind="human") if s["annotator"] == "adjudicated"]
        assert stored[0]["accuracy"] == 3
        assert stored[0]["detail"]["adjudication"]["scores"] == {"accuracy": {"ana": 5, "bo": 2}}
        # the annotators' own scores stay; the adjudication is no annotator
        assert annotator_agreement(human_scores(ws))["annotators"] == ["ana", "bo"]
        assert disagreements(ScoreStore(ws).latest(kind="human"))[0]["adjudicated"] == 3
    finally:
        ws.close()


def test_report_annotators_and_disagreements_cli(tmp_path: Path) -> None:
    ws_path = tmp_path / "ws.duckdb"
    ws = open_workspace(ws_path)
    populate(ws)
    second_annotator_scores(ws)
    ws.close()
    config = write_config(
        tmp_path / "cfg", BUNDLE, tmp_path / "store.duckdb", f"workspace: {ws_path}\n"
    )

    def cli(*args: str) -> str:
        res = CliRunner().invoke(main, ["--config", str(config), *args])
        assert res.exit_code == 0, res.output
        return res.output

    rep = json.loads(cli("report", "--annotators", "--json", "--resamples", "200"))
    acc = rep["annotators"]["dimensions"][0]
    ana = [4, 5, 3, 5]  # r01 r02 r07 r08
    bo = [4, 2, 3, 5]
    assert acc["n_items"] == 4
    assert acc["pairs"][0]["kappa"] == pytest.approx(
        cohen_kappa_score(ana, bo, weights="quadratic", labels=[1, 2, 3, 4, 5])
    )
    assert acc["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=[ana, bo], level_of_measurement="ordinal")
    )
    md = cli("report", "--annotators", "--markdown", "--resamples", "200")
    assert "## Inter-annotator agreement" in md and "Annotators: ana, bo." in md
    kappa = round(acc["pairs"][0]["kappa"], 3)
    assert f"| accuracy | ana – bo | 4 | {kappa} | — | 75.0 | 75.0 |" in md
    out = json.loads(cli("disagreements", "--json"))
    assert [(i["run_id"], i["dimension"]) for i in out] == [
        ("r02", "accuracy"),
        ("r07", "completeness"),
    ]
    saved = json.loads(cli("adjudicate", "r02", "--accuracy", "3", "--reason", "ROE off", "--json"))
    assert saved["annotator"] == "adjudicated" and saved["note"] == "ROE off"
    assert json.loads(cli("disagreements", "--open", "--json"))[0]["run_id"] == "r07"
    res = CliRunner().invoke(
        main, ["--config", str(config), "adjudicate", "r07", "--clarity", "9", "--reason", "x"]
    )
    assert res.exit_code == 2
    res = CliRunner().invoke(main, ["--config", str(config), "report", "--baseline", "nope"])
    assert res.exit_code == 2 and "--baseline nope: has no scores" in res.output
    rep = json.loads(cli("report", "--baseline", "rag", "--json", "--resamples", "200"))
    assert {r["condition"] for t in rep["lanes"]["llm"] for r in t["rows"]} == {"no_rag", "oracle"}


def test_disagreements_show_the_settled_value_the_tables_count() -> None:
    """Two adjudicators settled one dimension: the list shows the newer settlement, the value
    `report` and Results count (workspace/score_reader.py), whatever the names' order."""
    from datetime import datetime

    def row(who: str, accuracy: int, when: int, settled: bool = False) -> dict:
        detail = {"adjudication": {"reason": "checked"}} if settled else {}
        at = datetime(2026, 1, when)
        return {"run_id": "r1", "annotator": who, "accuracy": accuracy, "detail": detail,
                "created_at": at, "kind": "human"}  # fmt: skip

    # in the order ScoreStore.latest returns them: by annotator name
    rows = [row("amy", 4, 3, True), row("ann", 5, 1), row("bob", 1, 1), row("zed", 2, 2, True)]
    (item,) = disagreements(rows)
    assert (item["run_id"], item["dimension"], item["spread"]) == ("r1", "accuracy", 4)
    assert item["adjudicated"] == 4  # amy's, the newer, though zed sorts after her
