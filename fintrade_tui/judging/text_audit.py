"""Evidence-audit room: the figures an answer states, checked against the question's supplied
evidence (filing excerpts, tables) and its reference answer — no store, no model, a pure function.

Each figure is read with its unit and scale into base units ("$1,577 million" -> 1.577e9,
"30.8%" -> 0.308) and is SUPPORTED when some evidence states it (equal at the precision the
answer writes, or within the relative tolerance and one last digit: evidence holds many figures
to hit by chance), CONTRADICTED when the reference states a figure of the same kind and
magnitude near the same words that disagrees beyond the tolerance and no evidence supports it,
else NOT_FOUND. Signs are compared as magnitudes (prose says "a loss of", tables "(1,234)").
Years, dates, fiscal labels, page, item and section numbers, footnote marks, list markers,
ordinals, formula constants ("× 100", "/ 2") and ticker-like tokens are not claims. An evidence
text that says "(in millions)" once scales its bare numbers (their as-written value is kept
too); an excerpt with no scale at all may be read in thousands or millions, for support only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

VERDICTS = SUPPORTED, CONTRADICTED, NOT_FOUND = "SUPPORTED", "CONTRADICTED", "NOT_FOUND"
CURRENCY, PERCENT, PLAIN, COUNT = "currency", "percent", "plain", "count"
MAGNITUDE = 10.0  # a reference figure within this factor is about the same quantity


@dataclass(frozen=True)
class Figure:
    value: float  # signed, in base units: "$1,577 million" -> 1.577e9, "30.8%" -> 0.308
    kind: str  # currency | percent | plain | count
    unit: str  # "$", "€", "£", "%", "pp", "bp", "x", a count noun ("shares"), or ""
    scale: str | None  # "million"...; "in millions" when it comes from the text's hint
    span: tuple[int, int]
    text: str  # as written
    decimals: int  # digits after the decimal point as written
    stated: float  # the number as written, unsigned: 1.58 for "$1.58 billion"
    factor: float  # base units per stated unit: 1e9 for "billion", 0.01 for "%"
    raw: float | None = None  # a hinted figure's value without the hint (the table's "1,577")


# --- what is not a claim ----------------------------------------------------------------------
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)(?![a-z])\.?"
)
_REF_ANY = r"items?|notes?|sections?|sec\.|§|exhibits?|footnotes?|appendix|chapters?|para\."
_REF_CAP = "|".join(  # capitalised only: "Tier 1", "Table 3", not "auto parts 12%"
    f"{re.escape(w)}s?|{re.escape(w.upper())}S?"
    for w in re.findall(r"\S+", "Part Article Schedule Table Figure Fig. Chart Rule Form Step")
    + re.findall(r"\S+", "Option Scenario Phase Tier Level Stage Line Row Column No.")
)
_CONST = r"(?:100|1,?000|365|360|252|12|4|2|1)(?![\d]|[.,]\d)"
_SKIP = [
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",  # dates
    rf"\b{_MONTH}[ \t]+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|\b{_MONTH},?\s+\d{{4}}\b",
    rf"(?<![\d.,])\b\d{{1,2}}(?:st|nd|rd|th)?[ \t]+{_MONTH}(?:,?\s+\d{{4}})?",
    r"\bFY\s*'?\d{2,4}\b|(?i:\b(?:fiscal|calendar)(?:\s+year)?\s+\d{4}\b)",  # fiscal labels
    r"\b(?:Q[1-4]|H[12])\s*(?:FY\s*)?'?\d{2}\b(?!\s*%)",  # Q3 '24, H1 FY25
    r"\b(?:19|20)\d{2}\s*[-–/]\s*\d{2}\b|'\d{2}\b",  # 2023-24, '24
    r"(?i:\b(?:pages?|pp?\.|pgs?\.?)\s*\d+(?:\s*(?:-|–|to|and|,)\s*\d+)*)",  # pages
    rf"(?:\b|(?<=§))(?:(?i:{_REF_ANY})|{_REF_CAP})\s*\d+[A-Za-z]?(?:[.\-]\d+[A-Za-z]?)*"
    r"(?:\([a-z0-9]{1,3}\))*"
    r"(?:\s*(?:-|–|to|and|,|&)\s*\d+[A-Za-z]?(?:\.\d+)*)*(?!\s*%)",  # items, notes, sections
    r"\b(?:ASC|ASU|IFRS|IAS|SFAS|FAS|Topic|Basel)\s*\d+(?:[-–]\d+)*\b|\b401\s*\(k\)",
    r"\b\d{1,2}-[KQF]\b|\b[SF]-\d\b|\b\d{10}-\d{2}-\d{6}\b|\bCIK\s*\d+",  # forms, accessions
    r"\[\^?\s*[A-Za-z]{0,3}\d{1,3}[a-z]?(?:\s*[,–-]\s*[A-Za-z]{0,3}\d{1,3}[a-z]?)*\s*\]",  # [1]
    r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+|\^\d+|\(\d{1,2}\)(?!\s*%)",  # footnote marks ¹ ^1 (2)
    r"(?:^|(?<=\n))[ \t]*(?:[-*•][ \t]+)?\d{1,2}[.)](?=\s)",  # list markers
    r"\b\d+(?:st|nd|rd|th)\b",  # ordinals
    rf"(?:[×*/÷]|(?<![A-Za-z])[xX](?=\s*\d)|(?i:\bmultiplied\s+by|\bdivided\s+by|\btimes))\s*"
    rf"{_CONST}|(?<![\d.,])(?:100|1)\s*[×*]|\(\s*1\s*[+−-]|[−-]\s*1\s*(?=\)|=|$)|√\s*\d+",
    r"(?:S&P|\bNASDAQ|\bNasdaq|\bRussell|\bDow(?: Jones)?|\bFTSE|\bNikkei|\bFortune)\s?\d+\b",
    r"\b\d{3,6}\.[A-Z]{1,2}\b|(?<![$\d.,])\b3M\b",  # ticker-like: 7203.T, 0700.HK, 3M
    r"\b\d{1,2}:\d{2}\b",  # times
    r"(?i:\b\d{1,2}\s+months?\s+end(?:ed|ing)\b)",  # "12 months ended"
    r"(?i:\b(?:past|last|next|prior|previous|over|within|trailing)\s+\d{1,2}\s+"
    r"(?:days?|weeks?|months?|quarters?|years?|sessions?)\b)",
]
_NOT_CLAIMS = re.compile("|".join(_SKIP))

# --- figures ----------------------------------------------------------------------------------
_NUM = re.compile(
    r"(?<![\w.,/#@^])(?<![A-Za-z]-)(?P<sign>[-−])?"
    r"(?:(?P<cur>US\$|\$|€|£|(?:USD|EUR|GBP)\s)\s?)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?P<word>(?i:%|percent|per\s?cent|pct|percentage\s+points?|pp|basis\s+points?|"
    r"bps?|thousand|million|mn|mm|billion|bn|trillion|tn|times))(?![\w%])"
    r"|(?P<suf>[kKmMbBtTxX×])(?!\w))?"
    r"(?P<cur2>\s+(?:US\s+)?(?:dollars|USD|euros?|EUR))?(?![\w%]|-[A-Za-z])"
)
_PCT = {w: ("%", 0.01) for w in ("%", "percent", "per cent", "pct")}
_PCT |= {w: ("pp", 0.01) for w in ("pp", "percentage point", "percentage points")}
_PCT |= {w: ("bp", 1e-4) for w in ("bp", "bps", "basis point", "basis points")}
_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6}
_SCALES |= {"billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12, "t": 1e12}
_CUR = dict.fromkeys(("$", "us$", "usd", "dollars", "us dollars"), "$") | {"gbp": "£", "£": "£"}
_CUR |= dict.fromkeys(("€", "eur", "euro", "euros"), "€")
_NAME = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}
_NOUN = re.compile(
    r"\s+(?:[A-Za-z-]+\s+)?(?P<noun>shares|employees|workers|customers|clients|users|subscribers|"
    r"members|accounts|stores|locations|branches|restaurants|units|vehicles|contracts|people|"
    r"households|days|transactions|orders)\b",
    re.I,
)
_HINT = re.compile(  # a table's "(in millions)", "$ in thousands", "(Dollars in millions)"
    r"\bin\s+(?:\$\s*|US\$\s*|USD\s+)?(?P<w>thousands|millions|billions)\b"
    r"|\(\s*(?:\$|US\$|USD|€|£)?\s*(?P<p>thousands|millions|billions)\s*\)"
    r"|\(\s*(?:\$|in\s+)?\s*(?P<k>000)'?s\s*\)|\$\s*'?(?P<d>000)s?\b",
    re.I,
)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _tabular(text: str, at: int) -> bool:
    line = text[text.rfind("\n", 0, at) + 1 : (text.find("\n", at) + 1 or len(text) + 1) - 1]
    return "|" in line or "\t" in line or re.search(r"\S {3,}\S", line) is not None


def _figure(
    text: str, m: re.Match[str], hints: list[tuple[int, float]], evidence: bool
) -> Figure | None:
    raw, (a, b) = m["num"], m.span()
    stated = float(raw.replace(",", ""))
    word = re.sub(r"\s+", " ", (m["word"] or m["suf"] or "").lower())
    cur = (m["cur"] or m["cur2"] or "").strip()
    neg = m["sign"] is not None
    pre = re.search(r"(\$\s*)?\(\s*$", text[max(0, a - 4) : a])
    post = re.match(r"\s*\)(\s*%)?", text[b:])
    if pre and post and not neg and (evidence or _tabular(text, a)):  # "(1,234)" in a table
        neg, a, b = True, a - len(pre[0]), b + len(post[0])
        cur = cur or ("$" if pre[1] else "")
        word = "%" if post[1] else word
    kind, unit, factor, scale = PLAIN, "", 1.0, None
    if word in _PCT:
        kind, (unit, factor) = PERCENT, _PCT[word]
    elif word in ("times", "x", "×"):
        unit = "x"
    elif word in _SCALES:
        factor = _SCALES[word]
        scale = _NAME[factor]
    if cur and kind == PLAIN:
        kind, unit = CURRENCY, _CUR.get(re.sub(r"\s+", " ", cur.lower()), cur)
    elif kind == PLAIN and unit == "" and (n := _NOUN.match(text, b)):
        kind, unit = COUNT, n["noun"].lower()
    bare = kind == PLAIN and unit == "" and not neg and "," not in raw and "." not in raw
    if bare and 1990 <= stated <= 2035:
        return None  # a year
    sign, hinted = (-1.0 if neg else 1.0), None
    if hints and kind != PERCENT and scale is None and unit != "x":
        h = [f for p, f in hints if p <= a]
        factor, hinted = (h[-1] if h else hints[0][1]), sign * stated
        scale = f"in {_NAME[factor]}s"
    dec = len(raw.split(".")[1]) if "." in raw else 0
    v = sign * stated * factor
    return Figure(v, kind, unit, scale, (a, b), text[a:b], dec, stated, factor, hinted)


def _ranges(text: str, figs: list[Figure]) -> list[Figure]:
    """Ranges ("10-12%", "$1.5-2.0 billion"): the first number takes the second's unit/scale."""
    out = list(figs)
    for i in range(len(out) - 1):
        f, g = out[i], out[i + 1]
        if not re.fullmatch(r"\s*(?:-|–|—|to)\s*", text[f.span[1] : g.span[0]]):
            continue
        sign = math.copysign(1.0, f.value)
        if g.kind == PERCENT and f.kind == PLAIN and f.unit == "" and f.raw is None:
            out[i] = replace(f, kind=PERCENT, unit=g.unit, factor=g.factor)
        elif (
            g.scale
            and g.raw is None
            and (f.scale is None or f.raw is not None)
            and (f.kind != PERCENT and f.unit != "x")
        ):
            kind = g.kind if f.kind == PLAIN else f.kind
            out[i] = replace(f, kind=kind, scale=g.scale, factor=g.factor, raw=None)
        out[i] = replace(out[i], value=sign * out[i].stated * out[i].factor)
    return out


def extract_figures(text: str, evidence: bool = False) -> list[Figure]:
    """The figures `text` states, in order. `evidence`: a source text, whose "(in millions)"
    scales its bare numbers and whose "(1,234)" is negative (in an answer only on table lines)."""
    spans = [m.span() for m in _NOT_CLAIMS.finditer(text)]
    masked = _mask(text, [(a, b) for a, b in spans if not re.match(r"[.,]?\d", text[b : b + 2])])
    hints: list[tuple[int, float]] = []
    if evidence:
        for h in _HINT.finditer(text):
            w = (h["w"] or h["p"] or "thousands").lower()
            hints.append((h.start(), {"thousands": 1e3, "millions": 1e6, "billions": 1e9}[w]))
    figs = [f for m in _NUM.finditer(masked) if (f := _figure(text, m, hints, evidence))]
    return _ranges(text, figs)


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
    if a.kind == s.kind:
        return vals
    if PERCENT in (a.kind, s.kind):
        if PLAIN not in (a.kind, s.kind):
            return []
        if a.kind == PERCENT:  # a bare number: a fraction (0.308) or percentage points (30.8)
            bare = s.raw if s.raw is not None else s.value
            return [bare, bare * 0.01]
        return [s.value, s.value * 100]  # a bare answer figure: a fraction, or points
    return vals if PLAIN in (a.kind, s.kind) else []  # currency and counts do not mix


def _guesses(a: Figure, s: Figure) -> list[float]:
    """A bare evidence number of 3+ digits read in thousands or millions: an excerpt cut from a
    table often loses its "(in millions)" (for support only, never for contradiction)."""
    if PERCENT in (a.kind, s.kind) or s.scale or s.unit == "x" or abs(s.stated) < 100:
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
    closest in value. A reference figure with no words around it ("0.25") may pair with any;
    each reference figure states one quantity, so it pairs with one value of the answer (and
    "0.25 (25%)" states one quantity twice)."""
    same = {k for k, r in enumerate(refs) if any(abs(r.value) == abs(q.value) for q in refs[:k])}
    cands = []
    for i, f in enumerate(figs):
        near = _words(answer, *f.span)
        for j, r in enumerate(refs):
            if j in same or (got := _distance(f, r)) is None:
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
    scale = f" {f.scale}" if f.scale and not f.scale.startswith("in ") else ""
    if f.kind == CURRENCY:
        return f"{f.unit}{n}{scale}"
    tail = {"%": "%", "pp": " pp", "bp": " bp", "x": "x"}.get(f.unit, f" {f.unit}" * bool(f.unit))
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
        c |= {"unit": f.unit, "scale": f.scale, "decimals": f.decimals}
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
            hint = f" ({s.scale})" if s.scale and s.raw is not None and y == s.value else ""
            if (g := round(abs(y / s.value)) if s.value else 1) in (1000, 1000000) and not s.scale:
                hint = f" (no scale stated; read in {_NAME[g]}s)"
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
    """One audit: the store audit's claims (room "store") then the text audit's (room "text",
    with the store-shaped keys other readers use: indicator, ticker, store_value None, source
    the compared text); summaries added; "against" lists the store too when it was audited."""
    if store is None and text is None:
        return None
    claims = [{**c, "room": "store"} for c in (store or {}).get("claims", [])]
    for c in (text or {}).get("claims", []):
        claims.append({"indicator": None, "ticker": None, "store_value": None, **c})
        claims[-1] |= {"room": "text", "source": c["compared_with"]}
    keys = (*VERDICTS, "checked")
    parts = [p["summary"] for p in (store, text) if p]
    out = {"claims": claims, "summary": {k: sum(s.get(k, 0) for s in parts) for k in keys}}
    for k in ("reference_figures", "reference_stated", "reference_agreed"):
        if text and k in text["summary"]:
            out["summary"][k] = text["summary"][k]
    out["against"] = ["store"] * (store is not None) + list((text or {}).get("against", []))
    out["as_of"] = (store or {}).get("as_of")
    out["rooms"] = {"store": store and store["summary"], "text": text and text["summary"]}
    return out
