"""Reports room: what the runs cost, beside what they got right — per model × condition, the
runs, tokens in and out, the recorded cost (the providers' reported usage priced by litellm or
the entry's own prices: models/llm.py) and the cost per right answer, for `report` (its table
and `--json`) and the Results screen.

Every run counts, whatever its status (a failed run was paid for too), except a benchmark's
reference answers imported as runs. A run is right when rightness.py says so (the one rule
every report uses); `cost_per_right` divides the whole cost of the cell by its right answers
(None when none is right or nothing was priced). `priced` says how many runs carry a cost:
fewer than `runs` means some had no price or reported no usage, and the cost is theirs only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fintrade_tui.reports.rightness import run_verdicts
from fintrade_tui.workspace.evidence import CONDITIONS
from fintrade_tui.workspace.questions import load_questions
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import ScoreStore

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

REFERENCE = "reference"  # the condition of imported reference answers (imports/reference.py)
COLUMNS = (
    "model",
    "condition",
    "runs",
    "completed",
    "tokens_in",
    "tokens_out",
    "priced",
    "cost",
    "right",
    "with_verdict",
    "cost_per_right",
)


def cost_rows(
    ws: Connection,
    source: str | None = None,
    leave_out: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """One row per model × condition that has runs (of the question set `source`, without the
    questions in `leave_out`), in model order and the conditions' usual order."""
    if not _has_runs(ws):
        return []
    runs = RunStore(ws, read_only=True).spend()
    if source:
        keep = {q.id for q in load_questions(ws, source=source)}
        runs = [r for r in runs if r["question_id"] in keep]
    # a benchmark's own reference answers are imported as runs: nobody paid for them here
    runs = [r for r in runs if r["question_id"] not in leave_out and r["condition"] != REFERENCE]
    verdicts = run_verdicts(ScoreStore(ws, read_only=True), run_ids=[r["id"] for r in runs])
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for r in runs:
        key = (str(r["model"]), str(r["condition"]))
        c = cells.setdefault(
            key, dict.fromkeys(COLUMNS, 0) | {"model": key[0], "condition": key[1]}
        )
        c["runs"] += 1
        c["completed"] += r["status"] == "completed"
        c["tokens_in"] += r["tokens_in"] or 0
        c["tokens_out"] += r["tokens_out"] or 0
        if r["cost"] is not None:
            c["priced"] += 1
            c["cost"] += r["cost"]
        v = verdicts.get(r["id"])
        if v is not None and v.verdict is not None:
            c["with_verdict"] += 1
            c["right"] += bool(v.right)
    order = {c: i for i, c in enumerate(CONDITIONS)}
    out = []
    for key in sorted(cells, key=lambda k: (k[0], order.get(k[1], len(order)), k[1])):
        c = cells[key]
        c["cost"] = round(c["cost"], 8) if c["priced"] else None
        c["cost_per_right"] = (
            round(c["cost"] / c["right"], 8) if c["cost"] is not None and c["right"] else None
        )
        out.append(c)
    return out


def _has_runs(ws: Connection) -> bool:
    sql = "SELECT 1 FROM information_schema.tables WHERE table_name = 'runs'"
    return ws.execute(sql).fetchone() is not None


def usd(v: float | None) -> str:
    """$0.0123; more digits under a cent; — for no figure."""
    if v is None:
        return "—"
    return f"${v:,.6f}" if 0 < abs(v) < 0.01 else f"${v:,.4f}"


def shown(r: dict[str, Any]) -> dict[str, Any]:
    """A cost row as `report` and the Results screen show it."""
    from fintrade_tui.workspace.evidence import LABELS

    partial = "" if r["priced"] == r["runs"] else f" ({r['priced']} priced)"
    return {
        "model": r["model"],
        "condition": LABELS.get(r["condition"], r["condition"]),
        "runs": r["runs"],
        "tokens in / out": f"{r['tokens_in']:,} / {r['tokens_out']:,}",
        "cost": usd(r["cost"]) + (partial if r["cost"] is not None else ""),
        "right": f"{r['right']} of {r['with_verdict']}",
        "cost per right": usd(r["cost_per_right"]),
    }
