"""Question-Markdown room: a question as Markdown — its text, category, as-of (and why that
day), window, tickers, kind, golden indicators, oracle values with provenance, supplied
context, resolution notes, coverage gaps and reference answer. The case study opens with it;
the Questions, Dispute and Audit screens show it."""

from __future__ import annotations

from typing import Any

from fintrade_tui.exports.markdown_parts import DASH, fmt_value, markdown_table, quote_lines


def question_lines(q: Any, qid: str, oracle_as_list: bool = False) -> list[str]:
    """`question_markdown`'s lines; a question not in the bank (None) says so under its id."""
    if q is None:
        return [f"## Question {qid}", "", "_(not in the workspace's question bank)_", ""]
    window = DASH
    if q.window_start and q.window_end:
        window = fmt_value(q.window_start)
        if q.window_end != q.window_start:
            window += f" to {fmt_value(q.window_end)}"
    out = [f"## Question {q.id}", "", *quote_lines(q.text)]
    out += [
        f"- **Category:** {q.category} · **Source:** {q.source}"
        + (f" · **{_seed_word(q)}:** {q.parent_id}" if q.parent_id else ""),
        f"- **As of:** {fmt_value(q.as_of)} (after the close) · **Window:** {window}",
        *_as_of_basis(q),
        f"- **Tickers:** {', '.join(q.tickers) or DASH} · **Scope:** {q.scope or DASH}",
        f"- **Resolution:** {q.status} · **Coverage:** {q.coverage}",
        f"- **Kind:** {_kind(q)}",
        f"- **Golden indicators:** {', '.join(q.golden) or DASH}"
        + (f" (as written: {', '.join(q.golden_raw)})" if q.golden_raw else ""),
        "",
    ]
    rows = []
    rank = {name: i for i, name in enumerate(q.golden)}
    for ticker in sorted(q.oracle):
        if ticker == "supplied":
            continue
        items = (q.oracle[ticker] or {}).items()
        for name, o in sorted(items, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])):
            period = " ".join(
                str(o[k]) for k in ("fiscal_year", "fiscal_period") if o.get(k) is not None
            )
            rows.append(
                [
                    ticker,
                    name,
                    fmt_value(o.get("value"), 6),
                    o.get("source"),
                    period or o.get("date"),
                    o.get("available_from"),
                    o.get("accession"),
                ]
            )
    if rows and oracle_as_list:
        out += ["### Oracle values", ""]
        for t, name, value, source, period, avail, acc in rows:
            where = ", ".join(
                str(x)
                for x in (source, period, avail and f"available from {avail}", acc and f"{acc}")
                if x
            )
            out.append(f"- **{t} {name}** = {value} — {where}")
        out.append("")
    elif rows:
        out += ["### Oracle values", ""]
        out += markdown_table(
            ["Ticker", "Indicator", "Value", "Source", "Period", "Available from", "Accession"],
            rows,
        )
    supplied = (q.oracle or {}).get("supplied") or {}
    if supplied:
        out += ["### Context supplied with the question", ""]
        for k, v in sorted(supplied.items()):
            out += [f"**{k}** ({v.get('source')}):", "", *quote_lines(str(v.get("value")))]
    if q.reasons:
        out += ["### Resolution notes", "", *[f"- {r}" for r in q.reasons], ""]
    if q.coverage_missing:
        out += ["### Coverage gaps", "", *[f"- {m}" for m in q.coverage_missing], ""]
    out += ["### Reference answer", "", *quote_lines(q.reference_answer)]
    return out


def _seed_word(q: Any) -> str:
    """An analyst's variant names the question it was asked from; a scaled one its seed."""
    return "Variant of" if (getattr(q, "extra", None) or {}).get("variant_of") else "Seed"


def _as_of_basis(q: Any) -> list[str]:
    """Why `as_of` is that day, and the fiscal periods the question names on their calendars."""
    extra = getattr(q, "extra", None) or {}
    basis = extra.get("as_of_basis") or {}
    out = [f"- **As of from:** {basis['kind']} — {basis.get('detail', '')}"] if basis else []
    for p in extra.get("fiscal_periods") or []:
        label = (f"Q{p['quarter']} " if p.get("quarter") else "") + f"fiscal {p['fiscal_year']}"
        rep = p.get("report") or {}
        filed = f"filed {rep['filed']} ({rep['source']})" if rep else "no filing date in the store"
        cal = " · calendar assumed (December)" if p.get("calendar") == "assumed" else ""
        out.append(f"- **{p['ticker']} {label}:** {p['start']} to {p['end']}, {filed}{cal}")
    return out


def _kind(q: Any) -> str:
    """The question kind the prompts use, and what decided it."""
    from fintrade_tui.questions.kind import LABEL, classify

    kind, why = classify(q)
    return f"{LABEL[kind]} ({why})"


def question_markdown(q: Any, oracle_as_list: bool = False) -> str:
    """A question as Markdown: text, category, as_of, window, tickers, golden indicators,
    oracle values with provenance (a table, or a list for narrow panels), resolution notes,
    coverage gaps, the reference answer."""
    lines = question_lines(q, getattr(q, "id", "?"), oracle_as_list)
    return "\n".join(lines).rstrip() + "\n"
