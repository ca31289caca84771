"""The Arena's answer checks: each pane's deterministic checks (scoring/answer_checks.py) —
the match against the question's reference under its benchmark's mode, and a FinQA-style
program's trace — and the golden coverage read from its text (audits/golden_coverage.py: which
of the question's golden indicators the answer states with a value), judge or no judge.

They are computed in a thread worker when a pane's answer ends or a stored run is replayed
(sympy and the matcher stay off the UI thread), shown in the pane under the answer (verdict and
reason) and, for the focused pane, as trace rows in the evidence panel: the reference program's
steps, then the answer's own, the first step that leaves the reference's marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fintrade_tui.ui.arena_model import Row

if TYPE_CHECKING:
    from fintrade_tui.ui.panes import AnswerPane

    from .screen import ArenaScreen


def check_pane(screen: ArenaScreen, pane: AnswerPane) -> None:
    """Check a completed pane's answer in a thread; the pane shows the result."""
    q, end = screen.state.question, pane.end or {}
    answer, run_id = end.get("answer"), pane.run_id
    if q is None or not answer or (end.get("status") or pane.status) != "completed":
        return
    app = screen.fintrade
    cfg = app.cfg

    def work() -> None:
        from fintrade_tui.audits.golden_coverage import golden_coverage
        from fintrade_tui.scoring.answer_checks import check_answer

        try:
            checks: Any = check_answer(q, answer, cfg)
        except Exception as exc:  # shown in the pane; the Arena stays usable
            checks = exc
        try:
            coverage = golden_coverage(answer, q.golden or q.golden_raw)
        except Exception:  # a reading that fails leaves the line out, never the checks
            coverage = None
        app.call_from_thread(checked, screen, pane, run_id, checks, coverage)

    screen.run_worker(work, thread=True, group=f"checks-{id(pane)}", exit_on_error=False)


def checked(
    screen: ArenaScreen,
    pane: AnswerPane,
    run_id: str | None,
    checks: Any,
    coverage: dict[str, Any] | None = None,
) -> None:
    """Show the checks in their pane, unless it was reset for another run since."""
    if pane.run_id != run_id or not pane.is_attached:
        return
    pane.show_checks(checks, coverage)
    if pane is screen.state.current:
        screen.evidence_for(pane)


def trace_rows(checks: Any) -> list[Row]:
    """Evidence-panel rows of the reference program's trace and the answer's (Enter: a step's
    operands with where each comes from)."""
    if checks is None or isinstance(checks, Exception) or checks.reference_trace is None:
        return []
    rows = _steps(checks.reference_trace.rows(), "ref")
    if checks.trace is not None:
        rows += _steps(checks.trace.rows(), "answer")
    else:
        rows.append(Row("trace", "[answer] no calculation written out"))
    return rows


def _steps(steps: list[dict[str, Any]], who: str) -> list[Row]:
    rows = []
    for s in steps:
        args = ", ".join(str(o.get("text")) for o in s.get("operands") or [])
        value = s.get("error") or _num(s.get("value"))
        line = f"[{who} step {s.get('step')}] {s.get('op')}({args}) = {value}"
        if s.get("departs"):
            line += "  ✗ leaves the reference here"
        elif s.get("note"):
            line += f"  ({s['note']})"
        body = "\n".join(_operand(o) for o in s.get("operands") or [])
        rows.append(Row("trace", line, f"{who} step {s.get('step')}: {s.get('op')}", body))
    return rows


def _operand(o: dict[str, Any]) -> str:
    """`5829 = 5,829: table row '2009 net revenue', column 'amount': $ 5829`."""
    where = o.get("where")
    said = where.get("label") if isinstance(where, dict) else where
    return f"{o.get('text')} = {_num(o.get('value'))}: {said or o.get('kind') or 'not found'}"


def _num(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    return f"{v:,.5f}".rstrip("0").rstrip(".")  # FinQA compares at 5 decimal places
