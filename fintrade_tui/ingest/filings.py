"""Filing ingest room: 10-K/10-Q inline-XBRL files -> filing records and their numeric facts.

Layout: `fintradebench/filings/<TICKER>/<form>_<filed YYYY-MM-DD>_<accession>.htm`; the filed
date comes from the name (XBRL does not carry it). Facts keep `scale` and `sign` applied by
ixbrlparse; a fact with segments is dimensional, one without is a company total.
"""

from __future__ import annotations

import re
import warnings
from datetime import date
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.ingest.ixbrl import open_ixbrl
from fintrade_tui.ingest.workers import pool as worker_pool
from fintrade_tui.kill_points import stop_at


def _is_dei(name: str) -> bool:
    return name.startswith("dei:")


NAME = re.compile(r"^(10-K|10-Q)_(\d{4}-\d{2}-\d{2})_(\d{10}-\d{2}-\d{6})\.htm$")


def discover(bundle: Path) -> list[Path]:
    root = bundle / "fintradebench" / "filings"
    return sorted(p for p in root.glob("*/*.htm")) if root.is_dir() else []


def parse_filing(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One filing record and its numeric facts; a broken file raises UserError naming it."""
    m = NAME.match(path.name)
    if not m:
        raise UserError(
            str(path), "name is not <form>_<filed>_<accession>.htm", "rename it to that pattern"
        )
    form, filed, accession = m.group(1), date.fromisoformat(m.group(2)), m.group(3)
    text = path.read_text(encoding="utf-8", errors="replace")
    if not re.search(r"</html>\s*$", text[-2000:], re.IGNORECASE):
        raise UserError(str(path), "is truncated (no closing </html>)", "download it again")
    with warnings.catch_warnings():
        # ixbrlparse warns about SEC-specific text formats it does not parse; numbers still are
        warnings.simplefilter("ignore")
        try:
            doc = open_ixbrl(path, text_facts=_is_dei)  # the text read below is dei's
        except Exception as exc:
            raise UserError(
                str(path), f"inline XBRL cannot be parsed ({exc})", "download it again"
            ) from None
    dei = {n.name: n for n in doc.nonnumeric if n.schema == "dei"}
    for key in ("DocumentType", "DocumentPeriodEndDate", "DocumentFiscalYearFocus"):
        if key not in dei:
            raise UserError(str(path), f"has no dei:{key} fact", "is it an inline-XBRL filing?")
    ctx = dei["DocumentType"].context
    period_end = ctx.enddate or ctx.instant
    cik = dei.get("EntityCentralIndexKey")
    fp = (
        str(dei["DocumentFiscalPeriodFocus"].value).strip()
        if "DocumentFiscalPeriodFocus" in dei
        else ""
    )
    filing = {
        "accession": accession,
        "ticker": path.parent.name.upper(),
        "cik": int(str(cik.value).strip()) if cik else None,
        "form": form,
        "filed": filed,
        "period_end": period_end,
        "fiscal_year": int(str(dei["DocumentFiscalYearFocus"].value).strip()),
        "fiscal_period": fp or ("FY" if form == "10-K" else None),
        "path": str(path),
    }
    facts = []
    for f in doc.numeric:
        if f.value is None:
            continue
        c = f.context
        segs = c.segments or []
        facts.append(
            {
                "accession": accession,
                "ticker": filing["ticker"],
                "concept": f.name,
                "prefix": f.schema,
                "value": float(f.value),
                "unit": f.unit,
                "start_date": c.startdate,
                "end_date": c.enddate,
                "instant": c.instant,
                "dimensional": bool(segs),
                "segments": ";".join(f"{s.get('dimension')}={s.get('value')}" for s in segs)
                or None,
                "decimals": f.soup_tag.attrs.get("decimals") if f.soup_tag is not None else None,
            }
        )
    if not facts:
        raise UserError(str(path), "holds no numeric XBRL facts", "download it again")
    return filing, facts


def parse_with_sections(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict]]:
    """A filing, its facts and its Item sections' clean text (parsed once here, so indexing
    reads text, not HTML). A filing edgartools cannot split keeps its facts and gets no
    sections: RAG then has nothing from it, the numbers are unaffected."""
    from fintrade_tui.retrieval.filing_text import sections

    filing, facts = parse_filing(path)
    stop_at("ingest.parsing", file=path.name)  # a parser (a pool worker) mid-filing
    try:
        found = sections(path, filing["form"])
    except Exception:  # edgartools on a malformed document
        found = []
    rows = [
        {"accession": filing["accession"], "ord": k, "section_key": key, "title": t, "text": x}
        for k, (key, t, x) in enumerate(found)
    ]
    return filing, facts, rows


def parse_all(
    paths: list[Path], workers: int = 2, progress: Any = None, cache: Path | None = None
) -> tuple[list[tuple], int]:
    """Parse filings (iXBRL facts and section text) in parallel processes: ~1.4 s per filing,
    CPU-bound. With `cache` (a folder), a filing parsed before with the same bytes and parser
    is read from it instead (ingest/parse_cache.py). Returns the parses in the order of
    `paths` and how many came from the cache."""
    from fintrade_tui.ingest import parse_cache

    out: list[tuple | None] = [None] * len(paths)
    names = [parse_cache.key(p) if cache else "" for p in paths]
    for i, name in enumerate(names):
        if cache and (hit := parse_cache.get(cache, name)) is not None:
            out[i] = hit
            if progress:
                progress()
    todo = [i for i, got in enumerate(out) if got is None]
    for i, result in zip(todo, _parse(paths, todo, workers, progress), strict=True):
        out[i] = result
        if cache:
            parse_cache.put(cache, names[i], result)
    return [r for r in out if r is not None], len(paths) - len(todo)


def _parse(paths: list[Path], todo: list[int], workers: int, progress: Any):
    """The parses of `paths[i]` for i in `todo`, in order, as they finish."""
    if workers <= 1 or len(todo) < 4:
        for i in todo:
            yield parse_with_sections(paths[i])
            if progress:
                progress()
        return
    # the workers die with this process (a kill -9 included): see ingest/workers.py
    pool = worker_pool(workers)
    try:
        for result in pool.map(parse_with_sections, [paths[i] for i in todo]):
            yield result
            if progress:
                progress()
    except BaseException:
        # a failure or Ctrl-C: drop the filings not started instead of parsing them all
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
