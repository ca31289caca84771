"""Arena pane text (UI room): the fatal-flaw screen's flags under an answer (read, or screened
now for a completed run never screened) and the inline scores block (the analyst's, the judge's
with its justifications and the numeric audit). The golden-indicator line sits with the answer
checks: the coverage read from the answer's text first, the judge's listed metrics beside it."""

from __future__ import annotations

from typing import Any

import duckdb
from rich.text import Text

from fintrade_tui.safe_text import plain, printable
from fintrade_tui.ui.arena_model import audit_rows, disagreements, golden_line, scores_text
from fintrade_tui.workspace.scores import DIMENSIONS

VERDICT_STYLE = {"SUPPORTED": "green", "CONTRADICTED": "bold red", "NOT_FOUND": "yellow"}


def screened_flags(app: Any, run_id: str) -> list[dict[str, Any]]:
    """The flags of a run's latest screening; a completed run never screened is screened
    now by the deterministic checks (the store's company names when the app has a store)."""
    from fintrade_tui.judging.flaws import deterministic_flags
    from fintrade_tui.workspace.questions import Question, load_questions
    from fintrade_tui.workspace.run_records import COMPLETED, RunStore
    from fintrade_tui.workspace.screenings import DETERMINISTIC, FlagStore

    # this thread's own cursors: the shared connection refuses a second call at once
    ws, con = app.workspace(), (app.store() if app.cfg.store.exists() else None)
    try:
        store = FlagStore(ws)
        found = store.latest([run_id]).get(run_id)
        if found is None:
            run = RunStore(ws, read_only=True).get(run_id)
            if run["status"] != COMPLETED or not run.get("answer"):
                return []
            qs = load_questions(ws, ids=[run["question_id"]])
            q = qs[0] if qs else Question(run["question_id"], "?", "?", "", as_of=run.get("as_of"))
            flags = deterministic_flags(run, q, con)
            try:
                found = store.save(run_id, flags, [DETERMINISTIC])
            except duckdb.ConstraintException:
                # another pane (or process) screened it first: its screening is the same
                found = store.latest([run_id]).get(run_id)
                if found is None:
                    raise
        return found["flags"]
    finally:
        ws.close()
        if con is not None:
            con.close()


def flags_text(flags: list[dict[str, Any]], note: str = "") -> Text:
    """The pane's flag lines: "⚑ wrong_period: 2025-09-30 after as-of 2025-06-30"."""
    from fintrade_tui.judging.flaws import flag_line

    t = plain("\n".join(flag_line(f) for f in flags))
    if note:
        t.append(("\n" if flags else "") + note, "dim")
    return t


VERDICT_MARK = {"equal": ("✓", "green"), "not_equal": ("✗", "red"), "refused": ("✗", "red"),
                "unfinished": ("✗", "red"), "no_number": ("✗", "red")}  # fmt: skip


def checks_text(checks: Any) -> Text:
    """The answer checks' lines: the match's verdict and reason under its mode, and where the
    answer's calculation leaves the reference program's (the steps are in the evidence panel)."""
    t = Text()
    if checks is None:
        return t
    if isinstance(checks, Exception):
        t.append(f"Match: not checked — {type(checks).__name__}: {printable(str(checks))}\n", "red")
        return t
    m = checks.match
    mark, style = VERDICT_MARK.get(m.verdict, ("·", "yellow"))
    t.append(f"Match ({m.mode}): ", "bold")
    t.append(f"{mark} {m.verdict.replace('_', ' ')}", style)
    t.append(f" — {printable(m.reason)}\n")  # figures quoted from the answer: no ESC
    if (b := getattr(checks, "benchmark", None)) is not None:  # the benchmark's own rule
        mark, style = VERDICT_MARK.get(b.verdict, ("·", "yellow"))
        t.append(f"Benchmark rule ({b.mode}): ", "bold")
        t.append(f"{mark} {b.verdict.replace('_', ' ')}", style)
        t.append(f" — {printable(b.reason)}\n")
    if checks.reference_trace is not None:
        t.append("Trace: ", "bold")
        t.append(printable(trace_summary(checks)) + " (steps in the evidence panel)\n")
    return t


def trace_summary(checks: Any) -> str:
    """`the answer's 2 steps leave the reference at step 2` / `... follow the reference`."""
    ref = checks.reference_trace
    n_ref = len(ref.rows()) if ref is not None else 0
    if checks.trace is None:
        return f"the reference program has {n_ref} steps; the answer shows no calculation"
    return f"the answer's {checks.trace.summary} (reference: {n_ref} steps)"


def score_text(
    human: dict[str, Any] | None,
    judge: dict[str, Any] | None,
    judging: bool,
    threshold: int,
    checks: Any = None,
    agreement: str | None = None,
    coverage: dict[str, Any] | None = None,
) -> Text:
    """The inline scores block of a pane: the answer checks, the analyst's, the judge's (with
    `agreement`: how far that judge model agreed with people, measured). The golden line follows
    the checks: the coverage the judge stored, else `coverage` (read from the answer text
    without a judge), the judge's listed metrics beside it."""
    t = checks_text(checks)
    if golden := golden_line(coverage, judge):
        t.append(printable(golden) + "\n")  # figures and a model's metric names: no ESC
    differ = disagreements(
        judge if judge and judge.get("status") == "ok" else None, human, threshold
    )
    if human:
        t.append("You: ", "bold")
        t.append(scores_text(human))
        if human.get("preference"):
            t.append(f" · prefers {human['preference']}")
        if human.get("note"):
            t.append(f"\n  note: {printable(human['note'])}", "italic")
        t.append("\n")
    if judging:
        t.append("judging…\n", "italic")
    if not judge:
        return t
    detail = judge.get("detail") or {}
    # a question without a reference is judged against its Oracle values: said, as `common` is
    free = " · reference-free" if detail.get("rubric") == "reference_free" else ""
    t.append(f"Judge ({judge.get('annotator')}{free}): ", "bold")
    if judge.get("status") != "ok":
        t.append(f"failed — {printable(detail.get('error') or 'no valid output')}\n", "red")
    else:
        t.append(scores_text(judge) + "\n")
        if agreement:
            t.append(f"  this judge: {agreement}\n", "italic")
        why = detail.get("justifications") or {}
        for d in DIMENSIONS:
            style = "bold reverse red" if d in differ else ""
            t.append(f"  {d} {judge.get(d)}", style or "bold")
            if d in differ:
                t.append(f" (you {differ[d][1]})", style)
            t.append(f": {printable(str(why.get(d, '')))}\n")  # a model's words: no ESC
    audit = detail.get("audit")
    rows = audit_rows(audit)
    if audit is not None:
        s = audit.get("summary") or {}
        t.append(
            f"Audit: {len(rows)} figures, {s.get('SUPPORTED', 0)} supported, "
            f"{s.get('CONTRADICTED', 0)} contradicted, {s.get('NOT_FOUND', 0)} not found\n",
            "bold",
        )
    for verdict, line in rows:
        t.append(f"  {verdict:<12}", VERDICT_STYLE.get(verdict, ""))
        t.append(printable(line) + "\n")
    t.rstrip()
    return t


def judge_agreement_line(judge: dict[str, Any] | None, found: dict[str, dict[str, Any]]) -> str:
    """How far the judge of this score agreed with people (its model's newest measurement), or
    that it was never measured; "" without a judge score."""
    from fintrade_tui.workspace.judge_agreement import agreement_for, describe

    if not judge:
        return ""
    detail = judge.get("detail") or {}
    name = str(judge.get("annotator") or "").split(" · ")[0]
    return describe(agreement_for(found, detail.get("judge_model"), name))
