"""Judge-agreement room: how well each LLM judge model agreed with people's verdicts, measured
on answers people outside this project labelled (`fintrade-tui calibrate-judge`), kept in the
workspace (`judge_agreement`, append-only: a new measurement is a new row; readers take the
newest per judge model). Every judge score an analyst reads shows this line beside it
(`describe`), or "unmeasured" for a judge model never measured."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.workspace.locked import LockedTable, insert_rows

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_agreement (
    id VARCHAR PRIMARY KEY, judge_model VARCHAR NOT NULL, judge VARCHAR NOT NULL,
    labelled_set VARCHAR NOT NULL, n INTEGER NOT NULL, decided INTEGER NOT NULL,
    agreement DOUBLE, kappa DOUBLE, seconds_per_answer DOUBLE, detail JSON,
    measured_at TIMESTAMP NOT NULL
);
"""
COLUMNS = ["id", "judge_model", "judge", "labelled_set", "n", "decided", "agreement", "kappa",
           "seconds_per_answer", "detail", "measured_at"]  # fmt: skip
UNMEASURED = "agreement with people unmeasured"


@dataclass
class Agreement:
    """One measurement of a judge model against people's verdicts."""

    judge_model: str  # the provider string the judge ran as ("local/qwen2.5-coder-1.5b")
    judge: str  # the registry name it was called by ("local")
    labelled_set: str  # which people's verdicts ("FinanceBench (financebench-labelled)")
    n: int  # answers judged (people: correct or incorrect)
    decided: int  # answers the judge gave a score
    agreement: float | None  # share where judge (accuracy >= 4) and people agree on "correct"
    kappa: float | None  # Cohen's kappa on the same
    seconds_per_answer: float | None
    detail: dict[str, Any] = field(default_factory=dict)  # confusion counts, sample, refusals
    measured_at: datetime = field(default_factory=datetime.now)


def describe(found: Agreement | dict[str, Any] | None) -> str:
    """The line shown beside a judge's score: `agrees with people 63% (κ 0.27, n 200,
    FinanceBench)`, or "agreement with people unmeasured"."""
    if found is None:
        return UNMEASURED
    row = asdict(found) if isinstance(found, Agreement) else found
    if row.get("agreement") is None:
        return UNMEASURED
    kappa = "—" if row.get("kappa") is None else f"{row['kappa']:.2f}"
    return (
        f"agrees with people {row['agreement']:.0%} (κ {kappa}, n {row['n']}, "
        f"{row['labelled_set']})"
    )


class AgreementStore(LockedTable):
    """The `judge_agreement` table over one workspace connection."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        super().__init__(con)
        if not read_only:
            con.execute(SCHEMA)
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'judge_agreement'"
        ).fetchone()
        self.ready = bool(found and found[0])

    def save(self, a: Agreement) -> dict[str, Any]:
        """Append one measurement (in one transaction); the stored row."""
        row = [str(uuid.uuid4()), a.judge_model, a.judge, a.labelled_set, a.n, a.decided,
               a.agreement, a.kappa, a.seconds_per_answer, json.dumps(a.detail),
               a.measured_at]  # fmt: skip
        with self.transaction() as cur:
            insert_rows(cur, "judge_agreement", COLUMNS, [row])
        return dict(zip(COLUMNS, row, strict=True)) | {"detail": a.detail}

    def latest(self) -> dict[str, dict[str, Any]]:
        """The newest measurement per judge model (provider string) and per registry name."""
        if not self.ready:
            return {}
        with self.lock:
            rows = self.con.execute(
                f"SELECT {', '.join(COLUMNS)} FROM judge_agreement ORDER BY measured_at"
            ).fetchall()
        out: dict[str, dict[str, Any]] = {}
        for values in rows:
            row = dict(zip(COLUMNS, values, strict=True))
            row["detail"] = json.loads(row["detail"]) if row["detail"] else {}
            out[row["judge_model"]] = out[row["judge"]] = row
        return out


def agreement_for(found: dict[str, dict[str, Any]], *names: str | None) -> dict[str, Any] | None:
    """The measurement of the first of `names` (judge model string, annotator) found."""
    for name in names:
        if name and name in found:
            return found[name]
    return None


def read_latest(con: Connection) -> dict[str, dict[str, Any]]:
    """Every judge's newest measurement, read without creating the table."""
    return AgreementStore(con, read_only=True).latest()
