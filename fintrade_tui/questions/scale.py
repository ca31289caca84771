"""Scaling room: deterministic variants of each seed over other companies and quarters.

A variant keeps the seed's category and golden indicators, rewrites the company and the date in
the text, and carries the indicator values at its own `as_of` as reference facts. Variants the
store cannot fully support are screened out with the reason (the paper's canonical-data screen).
Company questions move to other companies and quarter ends; market scans move to other dates
and screen the index members on that date, keeping those the store fully covers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date

from fintrade_tui.questions.companies import index_members, scan_filter
from fintrade_tui.questions.indicators import KIND, LABEL
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.questions.timephrases import describe, resolve_time
from fintrade_tui.workspace.questions import FULL, RESOLVED, Question

MAX_TRIES = 40  # candidates examined per seed before giving up
MIN_SCAN_MEMBERS = 3  # a market-scan variant needs at least this many fully covered members


@dataclass
class Screened:
    seed_id: str
    tickers: list[str]
    as_of: date | None
    reason: str


def quarter_ends(first: date, last: date) -> list[date]:
    out = []
    for y in range(first.year, last.year + 1):
        for m, d in ((3, 31), (6, 30), (9, 30), (12, 31)):
            q = date(y, m, d)
            if first <= q <= last:
                out.append(q)
    return out


def rewrite_for(seed: Question, names: dict[int, str], time_text: str | None) -> str:
    """Replace the seed's time phrase and company mentions (right to left keeps spans valid)."""
    edits: list[tuple[int, int, str]] = []
    tp = seed.extra.get("time_phrase")
    if tp and time_text:
        edits.append((tp["span"][0], tp["span"][1], time_text))
    for k, m in enumerate(seed.extra.get("company_mentions", [])):
        if k in names:
            edits.append((m["span"][0], m["span"][1], names[k]))
    text = seed.text
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def reference_facts(q: Question) -> str:
    """The oracle values as a short fact sheet, each with its source."""
    lines = [f"Reference facts as of {q.as_of} (point-in-time, from the store):"]
    for t, items in q.oracle.items():
        for name, ev in items.items():
            where = ev.get("accession") or ev.get("date") or f"available {ev['available_from']}"
            period = (
                f"{ev.get('fiscal_period')} FY{ev.get('fiscal_year')}, "
                if ev.get("fiscal_year")
                else ""
            )
            label = LABEL.get(name, name)
            lines.append(f"- {t} {label}: {ev['value']:.6g} ({period}{ev['source']}, {where})")
    return "\n".join(lines)


def scale_seed(
    r: Resolver, seed: Question, per_seed: int, rng_seed: int, first: date
) -> tuple[list[Question], list[Screened]]:
    """Up to `per_seed` fully covered variants of one resolved seed, and the screened-out ones."""
    if seed.status != RESOLVED or not seed.as_of:
        return [], [Screened(seed.id, [], None, "seed is unresolved: " + "; ".join(seed.reasons))]
    rng = random.Random(f"{rng_seed}:{seed.id}")
    dates = [d for d in quarter_ends(first, r.reference) if d != seed.as_of]
    if seed.scope == "market_scan":
        candidates: list[tuple[tuple[str, ...] | None, date]] = [(None, d) for d in dates]
    else:
        # fundamentals need a source with every golden ratio (filings or a vendor); signals
        # need prices. The coverage check below still screens each candidate at its date.
        ratios = sorted({g for g in seed.golden if KIND.get(g) == "ratio"})
        universe = set(r.companies.known)
        if ratios:
            rows = r.con.execute(
                """SELECT ticker FROM fundamentals
                WHERE value IS NOT NULL AND list_contains(?::VARCHAR[], ratio)
                GROUP BY ticker HAVING count(DISTINCT ratio) = ?""",
                [ratios, len(ratios)],
            ).fetchall()
            universe &= {t for (t,) in rows}
        pool = sorted(universe - set(seed.tickers))
        n = len(seed.tickers)
        if len(pool) < n:
            return [], [Screened(seed.id, [], None, f"fewer than {n} other covered companies")]
        candidates = [(tuple(rng.sample(pool, n)), d) for d in dates for _ in range(2)]
    rng.shuffle(candidates)
    variants: list[Question] = []
    screened: list[Screened] = []
    # the new date is written as a month or a quarter, whatever the seed said ("in 2025",
    # "mid-2025"): variants sit on quarter ends, and the text must say what `as_of` is
    kind = seed.extra.get("time_phrase", {}).get("phrase_kind", "month")
    kind = "quarter" if kind in ("quarter", "fiscal_quarter") else "month"
    for tickers, as_of in candidates[:MAX_TRIES]:
        if len(variants) == per_seed:
            break
        first_day = as_of.replace(
            day=1, month=as_of.month - 2 if kind == "quarter" else as_of.month
        )
        names: dict[int, str] = _new_names(r, seed, tickers) if tickers else {}
        text = rewrite_for(seed, names, describe(kind, as_of, first_day))
        ref = resolve_time(text, r.reference)
        if ref is None or ref.as_of != as_of:
            screened.append(
                Screened(
                    seed.id,
                    list(tickers or []),
                    as_of,
                    f"rewritten text does not resolve to {as_of}",
                )
            )
            continue
        v = replace(seed, as_of=as_of, window_start=ref.start, window_end=ref.end, text=text)
        if tickers is None:
            v = r.evidence(replace(v, tickers=_scan_members(r, seed, as_of)))
            short = {m.split(":", 1)[0] for m in v.coverage_missing}  # "TICKER:indicator: why"
            covered = [t for t in v.tickers if t not in short]
            if len(covered) < MIN_SCAN_MEMBERS:
                screened.append(
                    Screened(seed.id, [], as_of, f"only {len(covered)} index members fully covered")
                )
                continue
            v = r.evidence(replace(v, tickers=covered))
        else:
            v = r.evidence(replace(v, tickers=list(tickers)))
            if v.coverage != FULL:
                screened.append(
                    Screened(seed.id, list(tickers), as_of, "; ".join(v.coverage_missing[:3]))
                )
                continue
        v = replace(
            v,
            id=f"{seed.id}-v{len(variants) + 1}",
            source="scaled",
            parent_id=seed.id,
            reasons=[],
            extra={"seed_text": seed.text},
        )
        variants.append(replace(v, reference_answer=reference_facts(v)))
    if len(variants) < per_seed:
        screened.append(
            Screened(
                seed.id, [], None, f"only {len(variants)} of {per_seed} variants found covered"
            )
        )
    return variants, screened


def _new_names(r: Resolver, seed: Question, tickers: tuple[str, ...]) -> dict[int, str]:
    """Mention index -> the new company's name, for the mentions that resolved to the store."""
    names: dict[int, str] = {}
    new = iter(tickers)
    for k, m in enumerate(seed.extra.get("company_mentions", [])):
        if m["ticker"] in seed.tickers:
            names[k] = r.companies.display_name(next(new))
    return names


def _scan_members(r: Resolver, seed: Question, as_of: date) -> list[str]:
    return index_members(r.con, as_of, scan_filter(seed.text)[1])
