"""Evidence-audit room: the figures an answer states, checked against the question's supplied
evidence (filing excerpts, tables) and its reference answer — no store, no model, a pure function.

Each figure is read by the one figures reader (scoring/figures.py) into base units
("$1,577 million" -> 1.577e9, "30.8%" -> 0.308) and is SUPPORTED when some evidence states it
(equal at the precision the answer writes, or within the relative tolerance and one last digit:
evidence holds many figures to hit by chance), CONTRADICTED when the reference states a figure
of the same kind and magnitude near the same words that disagrees beyond the tolerance and no
evidence supports it, else NOT_FOUND. Signs are compared as magnitudes (prose says "a loss
of", tables "(1,234)").
What is not a claim (years, dates, numbering, footnotes, document parts, formula constants,
names) is what that reader leaves out (scoring/not_figures.py). An evidence
text that says "(in millions)" once scales its bare numbers (their as-written value is kept
too); an excerpt with no scale at all may be read in thousands or millions, for support only.
"""

from __future__ import annotations

import math
import re
from typing import Any

from fintrade_tui.audits.verdicts import CONTRADICTED, NOT_FOUND, SUPPORTED, VERDICTS
from fintrade_tui.scoring.figure import COUNT, CURRENCY, MULTIPLE, PERCENT, PLAIN, Figure
from fintrade_tui.scoring.figures import figures

MAGNITUDE = 10.0  # a reference figure within this factor is about the same quantity
_SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def extract_figures(text: str, evidence: bool = False) -> list[Figure]:
    """The figures `text` states, in order, read by the one figures reader (years left out;
    a range's two ends are two figures). `evidence`: a source text, whose "(in millions)"
    scales its bare numbers (their as-written value is kept as `raw`)."""
    return [f for f in figures(text, ranges=False, source=evidence) if not f.is_year]


def _kind(f: Figure) -> str:
    """The kind compared: a multiple ("3.2x") reads like a plain number."""
    return PLAIN if f.kind == MULTIPLE else f.kind


def claim_unit(f: Figure) -> str:
    """The unit as a claim shows it: "$", "%", "pp", "bp", "x", what a count counts, or ""."""
    if f.kind == CURRENCY:
        return _SYMBOL.get(f.currency, f.currency)
    if f.kind == COUNT:
        return f.noun
    return "x" if f.kind == MULTIPLE else f.unit


# --- comparison -------------------------------------------------------------------------------
_STOP = set(
    re.findall(
        r"\w+",
        "the a an of in on for to and or was is were are be been by with as at its it this that "
        "from which approximately about around roughly nearly total million billion thousand "
        "percent per cent dollars usd fiscal year years quarter company answer reference",
    )
)


def _words(text: str, a: int, b: int) -> set[str]:
    """Content words around [a, b) within its sentence (about 80 characters each side)."""
    left = re.split(r"[.!?;]\s|\n", text[max(0, a - 80) : a])[-1]
    right = re.split(r"[.!?;]\s|\n", text[b : b + 80])[0]
    words = re.findall(r"[A-Za-z][A-Za-z&'-]+", f"{left} {right}".lower())
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words if w not in _STOP}


def _readings(a: Figure, s: Figure) -> list[float]:
    """The values source figure `s` may state, in `a`'s base units; [] if the kinds differ."""
    vals = [s.value] + ([s.raw] if s.raw is not None else [])
    ak, sk = _kind(a), _kind(s)
    if ak == sk:
        return vals
    if PERCENT in (ak, sk):
        if PLAIN not in (ak, sk):
            return []
        if ak == PERCENT:  # a bare number: a fraction (0.308) or percentage points (30.8)
            bare = s.raw if s.raw is not None else s.value
            return [bare, bare * 0.01]
        return [s.value, s.value * 100]  # a bare answer figure: a fraction, or points
    return vals if PLAIN in (ak, sk) else []  # currency and counts do not mix


def _guesses(a: Figure, s: Figure) -> list[float]:
    """A bare evidence number of 3+ digits read in thousands or millions: an excerpt cut from a
    table often loses its "(in millions)" (for support only, never for contradiction)."""
    if PERCENT in (a.kind, s.kind) or s.scale_word or s.kind == MULTIPLE or abs(s.stated) < 100:
        return []
    return [s.value * 1e3, s.value * 1e6] if _readings(a, s) else []


def _agrees(
    a: Figure, y: float, tol: float, s: Figure | None = None, strict: bool = False
) -> tuple[str, float]:
    """(how `a` states `y`, a reading of source figure `s`, "" if not; relative error): equal
    at the answer's precision, at the source's when the answer is finer, or within `tol` —
    `strict` (the evidence, with many figures to hit by chance) within one last digit too:
    68.9% is not 69.8%, though 1.3% apart."""
    x, y = abs(a.value), abs(y)
    d, eps = abs(x - y), 1e-9 * x
    rel = d / y if y else d  # as the store audit: absolute against a zero
    qa = a.factor * 10**-a.decimals  # the answer's last digit, in base units
    qs = y / s.stated * 10**-s.decimals if s is not None and s.stated else 0.0
    if d <= qa / 2 + eps:
        return f"equal at the precision the answer states ({a.text})", rel
    if qa < qs and d <= qs / 2 + eps:
        return f"equal at the precision the source states ({s.text if s else ''})", rel
    ok = rel <= tol and (not strict or d <= qa + eps)
    return (f"within {tol:.0%} ({rel:.2%} off)" if ok else ""), rel


def _distance(a: Figure, s: Figure) -> tuple[float, float] | None:
    """(log-distance, reading) of the closest reading of `s` of comparable magnitude."""
    best = None
    for y in _readings(a, s):
        x, z = abs(a.value), abs(y)
        if x and z:
            d = abs(math.log(x / z))
        else:  # a zero compares with a percent only ("0%" vs "25%")
            d = 0.0 if x == z else math.log(MAGNITUDE) if PERCENT in (a.kind, s.kind) else math.inf
        if d <= math.log(MAGNITUDE) and (best is None or d < best[0]):
            best = (d, y)
    return best


def _pair(
    answer: str, figs: list[Figure], ref: str, refs: list[Figure], tol: float
) -> dict[int, tuple[Figure, float]]:
    """Answer figure -> (reference figure, reading) it is about: sharing the most words, then
    closest in value, never across periods ("P/E 24.5 in 2025" is not "P/E 42 in 2023"). A
    reference figure with no words around it ("0.25") may pair with any; each reference figure
    states one quantity, so it pairs with one value of the answer (and "0.25 (25%)" states one
    quantity twice)."""
    same = {k for k, r in enumerate(refs) if any(abs(r.value) == abs(q.value) for q in refs[:k])}
    cands = []
    for i, f in enumerate(figs):
        near = _words(answer, *f.span)
        for j, r in enumerate(refs):
            if j in same or (got := _distance(f, r)) is None:
                continue
            if f.period and r.period and f.period != r.period:
                continue
            theirs = _words(ref, *r.span)
            overlap = len(near & theirs)
            if overlap or not theirs:
                cands.append((-overlap, got[0], i, j, got[1]))
    out: dict[int, tuple[Figure, float]] = {}
    first: dict[int, Figure] = {}  # reference figure -> the answer figure it paired with
    for _, _, i, j, y in sorted(cands):
        if i in out or (j in first and not _agrees(figs[i], first[j].value, tol)[0]):
            continue
        out[i] = (refs[j], y)
        first.setdefault(j, figs[i])
    return out


def _coverage(figs: list[Figure], refs: list[Figure], tol: float) -> tuple[int, int]:
    """(distinct reference figures, how many of them some answer figure states)."""
    distinct = list({(r.kind, round(abs(r.value), 12)): r for r in refs}.values())
    stated = sum(
        any(_agrees(f, y, tol, r)[0] for f in figs for y in _readings(f, r)) for r in distinct
    )
    return len(distinct), min(stated, len(figs))  # "0.25 (25%)" is one figure stated twice


def _say(f: Figure, y: float) -> str:
    """`y` (base units) written in the answer figure's unit: "$1.577 billion", "25%"."""
    n = f"{'-' if y < 0 else ''}{abs(y) / f.factor:.6g}"
    scale = f" {f.scale_word}" if f.scale_word and not f.scale_from_hint else ""
    unit = claim_unit(f)
    if f.kind == CURRENCY:
        return f"{unit}{n}{scale}"
    tail = {"%": "%", "pp": " pp", "bp": " bp", "x": "x"}.get(unit, f" {unit}" * bool(unit))
    return f"{n}{scale}{tail}"


def audit_text(
    answer: str, evidence: list[str], reference: str | None, tolerance: float = 0.02
) -> dict[str, Any]:
    """Check each figure of `answer` against the `evidence` texts and the `reference` answer.

    summary["checked"] counts the figures supported or contradicted; "against" names what was
    available ("evidence", "reference"); compared_with names the text a verdict rests on."""
    docs = [d for d in (e if isinstance(e, str) else str(e) for e in evidence or []) if d.strip()]
    docs = [re.sub(r"<[^>]*>|&#?\w+;", " ", d) for d in docs]  # an HTML excerpt: its text
    ref = reference if reference and reference.strip() else ""
    ev = [(k, s) for k, d in enumerate(docs, 1) for s in extract_figures(d, evidence=True)]
    figs, refs = extract_figures(answer), extract_figures(ref)
    pairs = _pair(answer, figs, ref, refs, tolerance)
    claims = []
    for i, f in enumerate(figs):
        a, b = f.span
        c: dict[str, Any] = {"text": f.text, "span": [a, b], "value": f.value, "kind": f.kind}
        c |= {"unit": claim_unit(f), "scale": f.scale_label, "decimals": f.decimals}
        c |= {"fragment": answer[max(0, a - 60) : b + 60].strip(), "verdict": NOT_FOUND}
        c |= {"compared_with": None, "matched": None, "matched_value": None, "rel_error": None}
        best = None  # (relative error, evidence number, evidence figure, reading, how)
        for k, s in ev:
            for y in _readings(f, s) + _guesses(f, s):
                how, rel = _agrees(f, y, tolerance, s, strict=True)
                if how and (best is None or rel < best[0]):
                    best = (rel, k, s, y, how)
        paired = pairs.get(i)
        ref_ok, ref_rel = _agrees(f, paired[1], tolerance, paired[0]) if paired else ("-", 0)
        ref_note = ""
        if paired and not ref_ok:
            ref_note = f"; the reference states '{paired[0].text}' ({_say(f, paired[1])})"
        if best:
            rel, k, s, y, how = best
            hint = f" ({s.scale_label})" if s.raw is not None and y == s.value else ""
            if (g := round(abs(y / s.value)) if s.value else 1) in (
                1000,
                1000000,
            ) and not s.scale_word:
                hint = f" (no scale stated; read in {'thousands' if g == 1000 else 'millions'})"
            c |= {"verdict": SUPPORTED, "compared_with": f"evidence {k}: '{s.text}'"}
            c |= {"matched": s.text, "matched_value": y, "rel_error": rel}
            c["why"] = f"evidence {k} states '{s.text}'{hint} = {_say(f, y)}, {how}{ref_note}"
        elif paired:
            r, y = paired
            c |= {"compared_with": f"reference: '{r.text}'", "matched": r.text}
            c |= {"matched_value": y, "rel_error": ref_rel}
            nothing = "no evidence states it" if docs else "no evidence supplied"
            if ref_ok:
                c["why"] = f"the reference states '{r.text}' too, but {nothing}"
            else:
                c["verdict"] = CONTRADICTED
                c["why"] = f"the reference states '{r.text}' = {_say(f, y)}, off by "
                c["why"] += f"{ref_rel:.0%}; {nothing}"
        else:
            where = "no evidence figure of this kind matches" if docs else "no evidence supplied"
            about = " and the reference states no comparable figure" if ref else ""
            c["why"] = where + about
        claims.append(c)
    counts = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    counts["checked"] = counts[SUPPORTED] + counts[CONTRADICTED]
    if ref:  # how much of the reference the answer carries: a cut-off answer states little
        counts["reference_figures"], counts["reference_stated"] = _coverage(figs, refs, tolerance)
        # unverified figures the reference states alike: a judge reads "not found" as doubt
        counts["reference_agreed"] = sum(
            c["verdict"] == NOT_FOUND and (c["compared_with"] or "").startswith("reference")
            for c in claims
        )
    against = ["evidence"] * bool(docs) + ["reference"] * bool(ref)
    return {"claims": claims, "summary": counts, "against": against}


# --- with the store audit -----------------------------------------------------------------------
def merge_audits(
    store: dict[str, Any] | None, text: dict[str, Any] | None
) -> dict[str, Any] | None:
    """One audit, one claim per figure: the store audit's claims (room "store"), then the text
    audit's (room "text", with the store-shaped keys other readers use: indicator, ticker,
    store_value None, source the compared text) — a figure both audited keeps the store's
    verdict unless only the text audit found it; the summary counts the merged claims;
    "against" lists the store too when it was audited."""
    if store is None and text is None:
        return None
    claims = [{**c, "room": "store"} for c in (store or {}).get("claims", [])]
    at = {tuple(c["span"]): k for k, c in enumerate(claims) if c.get("span")}
    for c in (text or {}).get("claims", []):
        claim = {"indicator": None, "ticker": None, "store_value": None, **c}
        claim |= {"room": "text", "source": c["compared_with"]}
        k = at.get(tuple(c["span"]))
        if k is None:
            claims.append(claim)
        elif claims[k]["verdict"] == NOT_FOUND and claim["verdict"] != NOT_FOUND:
            claims[k] = claim | {"indicator": claims[k]["indicator"], "ticker": claims[k]["ticker"]}
        # else: one figure, one claim — the store's verdict stands
    counts = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    counts["checked"] = counts[SUPPORTED] + counts[CONTRADICTED]
    out: dict[str, Any] = {"claims": claims, "summary": counts}
    for key in ("reference_figures", "reference_stated", "reference_agreed"):
        if text and key in text["summary"]:
            out["summary"][key] = text["summary"][key]
    out["against"] = ["store"] * (store is not None) + list((text or {}).get("against", []))
    out["as_of"] = (store or {}).get("as_of")
    out["rooms"] = {"store": store and store["summary"], "text": text and text["summary"]}
    return out
