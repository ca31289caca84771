"""Supplied-evidence room: the context a benchmark gives with a question (SECQUE's excerpts in
several renderings, FinAR's table), stored once per question with the document it came from.

Formats offer the same excerpt several times (markdown with headers, HTML, a full page): a
context whose text, reduced to its words and numbers, is contained in another's is the same
evidence and is kept once, in the most readable rendering (markdown, then plain text, then
HTML), under the keys it merges. Each item names its document (ticker, form, filing date,
page when the format gives them) and is dated by the document's filing date, never the period
end: the question's own filing-date field, else a date in a document name of the form
`<form>_<filed>_<accession>` (how the bundle and `pull` name filings; EDGAR's own
`aapl-20240928.htm` carries the period end and is not read), else the filing date the store
knows for the fiscal period the question names (`extra["fiscal_periods"]`, set by the resolver).
Without any of them it is dated when the question is asked.

A table-QA question (FinQA, ConvFinQA, TAT-QA: `extra["table_rows"]`) gives its table as one
item (key and label "table", kind "table": a markdown rendering as value, the cells as
published in "rows") and each passage as its own item (key and label "text_N", FinQA's
numbering; a passage of punctuation only is left out); every item says whether the question's
gold facts (`gold_inds`) mark it ("gold").
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from fintrade_tui.workspace.questions import Question, extra_date

_TAGS = re.compile(r"<[^>]+>")
_WORDS = re.compile(r"[a-z0-9][a-z0-9.,%$]*")
_DOC_KEYS = (
    "ticker",
    "company",
    "form",
    "filing_date",
    "fiscal_year",
    "page",
    "source_file",
    "filename",
)


def _words(text: str) -> str:
    """The words and numbers of a rendering, without markup: what two renderings share."""
    plain = _TAGS.sub(" ", text).replace("&nbsp;", " ").lower()
    return " ".join(w.rstrip(".,") for w in _WORDS.findall(plain))


def _readability(key: str, text: str) -> int:
    """Markdown first, then plain text, then HTML."""
    if "html" in key.lower() or _TAGS.search(text):
        return 2
    return 0 if "markdown" in key.lower() else 1


_NAMED = re.compile(r"10-?[KQ]\w*_(\d{4}-\d{2}-\d{2})_\d{10}-\d{2}-\d{6}", re.I)
_NAME_KEYS = ("source_file", "document", "doc_name", "file_name", "filename")


def _filed(q: Question) -> date | None:
    given = extra_date(q, ("filing_date", "filed", "document_date"))
    if given:
        return given
    for key in _NAME_KEYS:
        if m := _NAMED.search(str(q.extra.get(key) or "")):
            try:
                return date.fromisoformat(m[1])
            except ValueError:
                continue
    periods = [p for p in q.extra.get("fiscal_periods") or [] if p.get("report")]
    if periods:  # the report closing the latest period the question names
        return date.fromisoformat(max(periods, key=lambda p: p["end"])["report"]["filed"])
    return None


def markdown_table(rows: list[list[str]]) -> str:
    """The rows as a markdown table, the first row the header; cells on one line, pipes kept
    as text (escaped), short rows padded."""
    width = max((len(r) for r in rows), default=0)

    def line(row: list[str]) -> str:
        cells = [" ".join(str(c).split()).replace("|", "\\|") for c in row]
        return "| " + " | ".join(cells + [""] * (width - len(cells))) + " |"

    if not width:
        return ""
    return "\n".join([line(rows[0]), "|" + "---|" * width, *(line(r) for r in rows[1:])])


def _table_qa(q: Question, document: dict[str, Any], filed: date | None) -> dict[str, Any]:
    gold = q.extra.get("gold_inds") or {}
    table_gold = any(k == "table" or k.startswith("table_") for k in gold)
    base: dict[str, Any] = {"source": q.source, "document": document}
    base["available_from"] = filed.isoformat() if filed else None
    rows = q.extra["table_rows"]
    out: dict[str, dict[str, Any]] = {}
    out["table"] = base | {
        "value": markdown_table(rows),
        "kind": "table",
        "keys": ["table"],
        "rows": rows,
        "label": "table",
        "gold": table_gold,
    }
    for i, text in enumerate(q.extra.get("passages") or []):
        if not _WORDS.search(str(text).lower()):  # FinQA's "." placeholders carry nothing
            continue
        label = f"text_{i}"
        out[label] = base | {
            "value": str(text),
            "kind": "context",
            "keys": [label],
            "label": label,
            "gold": label in gold,
        }
    return out


def supplied_evidence(q: Question) -> dict[str, dict[str, Any]]:
    """key -> {value, kind, source, keys (the fields merged), document, available_from}; a
    table-QA question's items also carry label and gold, its table rows."""
    if isinstance(q.extra.get("table_rows"), list):
        document = {k: q.extra[k] for k in _DOC_KEYS if q.extra.get(k) not in (None, "")}
        return _table_qa(q, document, _filed(q))
    contexts = {
        k: v for k, v in (q.extra.get("context") or {}).items() if isinstance(v, str) and v.strip()
    }
    # most complete first; among equals, the most readable rendering
    order = sorted(
        contexts, key=lambda k: (-len(_words(contexts[k])), _readability(k, contexts[k]))
    )
    kept: dict[str, list[str]] = {}
    for k in order:
        words = _words(contexts[k])
        home = next((h for h in kept if words in _words(contexts[h])), None)
        if home is None:
            kept[k] = [k]
        else:
            kept[home].append(k)
    document = {k: q.extra[k] for k in _DOC_KEYS if q.extra.get(k) not in (None, "")}
    filed = _filed(q)
    out: dict[str, dict[str, Any]] = {}
    for k, merged in kept.items():
        out[k] = {
            "value": contexts[k],
            "kind": "context",
            "source": q.source,
            "keys": sorted(merged),
            "document": document,
            "available_from": filed.isoformat() if filed else None,
        }
    if "table" in q.extra:
        out["table"] = {
            "value": q.extra["table"],
            "kind": "context",
            "source": q.source,
            "keys": ["table"],
            "document": document,
            "available_from": filed.isoformat() if filed else None,
        }
    return out
