"""Case screenshots room: the two screens a case study shows of the explorer itself — the Arena
replaying the case's runs and the Company screen of its question's ticker at the quarter known
on the question's as_of — drawn headlessly (ui/screenshots.py) on connections the caller holds."""

from __future__ import annotations

from typing import Any

from fintrade_tui.config import Config


def case_screenshots(cfg: Config, store: Any, ws: Any, run_ids: list[str]) -> dict[str, str]:
    """{"Arena": svg, "Company": svg} for the case of these runs (the Company screen only when
    the question names a ticker the store holds)."""
    from fintrade_tui.exports.case_data import known_quarter, load_case, resolve_runs
    from fintrade_tui.ui.screenshots import shoot

    runs = resolve_runs(ws, run_ids)
    ids = [r["id"] for r in runs]
    shots = {"Arena": shoot(cfg, "arena", run_ids=ids, store=store, workspace=ws)}
    data = load_case(ws, runs, preferences=False)
    q = data.questions.get(data.question_ids[0])
    if q is None or not q.tickers or q.as_of is None:
        return shots
    known = known_quarter(store, q.tickers[0], q.as_of, cfg.fundamentals.estimated_lag_days)
    if known is not None:  # else a company the store does not hold (an imported question)
        shots["Company"] = shoot(
            cfg, "company", ticker=q.tickers[0], quarter=known["key"], store=store, workspace=ws
        )
    return shots
