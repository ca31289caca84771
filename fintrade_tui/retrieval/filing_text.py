"""Filing-text room: one 10-K/10-Q inline-XBRL file -> clean section text -> parent/child chunks.

edgartools (`edgar.documents`) finds the Item sections offline. For TOC-detected sections (every
filing in the sample bundle) the section node is empty and the text comes from edgartools' walk
of the raw HTML between anchors, which calls the extractor's `_render_table` once per `<table>`;
we swap that hook, on this document's extractor only, for one that builds the `TableNode` the
same way and prints it as compact markdown, so tables stay in place. Sections detected from
headings are rendered from their node tree with the same table printer. Page furniture (running
headers/footers, page numbers, "Table of Contents" links) is dropped afterwards. Filing text is
data: it is only cleaned and cut, never interpreted.
"""

from __future__ import annotations

import bisect
import logging
import re
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any, Literal, overload

from fintrade_tui.retrieval.chunks import Chunk
from fintrade_tui.workspace.evidence import approx_tokens

MIN_SECTION_CHARS = 200
RUNNING_MIN = 10  # a line this frequent in one filing is a running header
_SPACES = re.compile(r"[\xa0\u2002\u2003\u2007\u2009\u202f\t ]+")
_PAGE_MARK = "\x00"
_FURNITURE = [
    re.compile(r"^table of contents\b.{0,60}$", re.I),  # links back to the TOC (+ company name)
    re.compile(r"^(page\s+)?[-–—]?\s*([a-z]-)?\d{1,3}\.?\s*[-–—]?$", re.I),  # bare page numbers
    re.compile(r"^[ivxl]{1,5}$"),  # roman page numbers
    re.compile(r"^.{0,80}\bform\s+10-[kq]\b.{0,20}\|\s*\d{1,3}$", re.I),  # "| Form 10-K | 21"
    re.compile(r"^.{0,90}\(continued\)$", re.I),  # running "Notes ... (Continued)" headers
    re.compile(r"^[_=*\-–—]+$"),  # rules
]
_HEADING = re.compile(r"^(item\s*\d{1,2}[a-d]?)\s*[.:\-–—]*\s*(.*)$", re.I)
_SMALL = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to"}
_AFFIX_SUFFIX = {"%", ")", "%)"}


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence edgartools' warnings and log records while it parses."""
    log = logging.getLogger("edgar")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def _cell(text: str) -> str:
    return _SPACES.sub(" ", " ".join(text.split())).replace("|", "/").strip()


def table_markdown(table: Any) -> str:
    """A `TableNode` as compact markdown: one header row, `|` rows, numbers as printed, empty
    columns dropped, "$" / "%" / ")" cells joined to their figure. The columns are the header's
    cells, since filers' colspans inside one column vary from row to row. One-column tables and
    bullet/footnote layout tables come back as plain lines."""
    from edgar.documents.utils.table_matrix import TableMatrix

    m = TableMatrix()
    m.build_from_rows(table.headers, table.rows)
    rows = []  # per row: (first column, end column, text) of each non-empty cell
    for mrow in m.matrix[: m.row_count]:
        cells = [
            (c, c + max(1, mc.original_cell.colspan), _cell(mc.original_cell.text()))
            for c, mc in enumerate(mrow)
            if mc.original_cell and not mc.is_spanned
        ]
        if any(t for _, _, t in cells):
            rows.append([x for x in cells if x[2]])
    if not rows:
        return ""
    # header rows: edgartools' own, then up to 3 more leading rows with an empty label cell
    nh = min(len(table.headers), len(rows) - 1)
    while nh < min(len(rows) - 1, len(table.headers) + 3) and rows[nh][0][0] > 0:
        nh += 1
    ref = max(rows[:nh], key=len) if nh else []
    if len(ref) < 2:
        ref = max(rows[nh:], key=len)
    starts = sorted({s for s, _, _ in ref} | {0})
    bounds = [(s, e) for s, e in zip(starts, [*starts[1:], m.col_count], strict=True)]
    head, data = [""] * len(bounds), []
    for r, row in enumerate(rows):
        out = head if r < nh else [""] * len(bounds)
        for s, e, text in row:
            hit = [g for g, (a, b) in enumerate(bounds) if s < b and a < e]  # columns it spans
            cols = hit if r < nh else [bisect.bisect_right(starts, s) - 1]
            for g in cols:
                if r < nh and text in out[g]:
                    continue  # a header repeated by its span
                glue = "" if out[g].endswith("$") or text in _AFFIX_SUFFIX or not out[g] else " "
                out[g] += glue + text
        if r >= nh:
            data.append(out)
    for c in range(len(bounds)):  # stray "$" / "%" columns: join them to their figure
        vals = {row[c] for row in data} - {""}
        step = -1 if vals and vals <= _AFFIX_SUFFIX else 1 if vals == {"$"} else 0
        for data_row in data if step else []:
            near = range(c + step, -1 if step < 0 else len(bounds), step)
            k = next((k for k in near if data_row[k]), None)
            if data_row[c] and k is not None:
                joined = data_row[k] + data_row[c] if step < 0 else data_row[c] + data_row[k]
                data_row[k], data_row[c] = joined, ""
    keep = [c for c in range(len(bounds)) if any(row[c] for row in data)]
    data, head = [[row[c] for c in keep] for row in data], [head[c] for c in keep]
    layout = len(keep) == 2 and all(len(r[0]) <= 4 for r in data)  # bullets, footnote marks
    if len(keep) == 1 or (not any(head) and (layout or len(data) == 1)):
        return "\n".join(" ".join(x for x in r if x) for r in data)
    if not any(head):
        head, data = data[0], data[1:]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(keep)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in data])


def _hook_tables(doc: Any) -> None:
    """Make the TOC extractor print each `<table>` as markdown in place (memoised: edgartools
    walks every section twice, once to detect it and once for `.text()`)."""
    from edgar.documents.config import ParserConfig
    from edgar.documents.strategies.table_processing import TableProcessor

    ex = doc._get_section_extractor(form=doc.metadata.form if doc.metadata else None)
    config = getattr(doc, "_config", None) or ParserConfig()
    memo: dict[Any, str | None] = {}

    def render(el: Any, clean: bool = True) -> str | None:
        if el not in memo:
            try:
                md = table_markdown(TableProcessor(config).process(el))
                memo[el] = (
                    f"\n\n{md}\n\n" if md else ("" if not el.text_content().strip() else None)
                )
            except Exception:  # malformed table: let edgartools walk its cells instead
                memo[el] = None
        return memo[el]

    ex._render_table = render


def node_text(node: Any) -> str:
    """Text of a node tree (heading/pattern-detected sections) with markdown tables."""
    from edgar.documents.extractors.text_extractor import TextExtractor

    class _Markdown(TextExtractor):
        def _extract_table(self, table: Any, parts: list[str]) -> None:
            parts.append(table_markdown(table))

    return _Markdown().extract_from_node(node)


def _title_case(s: str) -> str:
    if s != s.upper():
        return s
    words = s.lower().split(" ")
    return " ".join(
        w.upper() if re.search(r"\d", w) else w if i and w in _SMALL else w[:1].upper() + w[1:]
        for i, w in enumerate(words)
    )


def clean_text(text: str, running: frozenset[str] = frozenset()) -> str:
    """Normalise spaces, drop page furniture (and the `running` header lines), rejoin
    paragraphs a page break cut in two."""
    out = []
    for line in text.replace("\r", "").split("\n"):
        line = line.strip() if line.startswith("|") else _SPACES.sub(" ", line).strip()
        junk = line in running or any(p.match(line) for p in _FURNITURE)
        out.append(_PAGE_MARK if junk else line)
    text = re.sub(r"(?m)^([•·▪●◦]|\(\w{1,3}\))(?=[^\s)])", r"\1 ", "\n".join(out))
    text = re.sub(rf"([^\s.:;!?|])[ \n]*(?:\n[ \n]*{_PAGE_MARK}[ \n]*)+(?=[a-z])", r"\1 ", text)
    text = text.replace(_PAGE_MARK, "")
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", text)).strip()


def _split_heading(key: str, text: str) -> tuple[str, str]:
    """(title, text starting with the title line); the title is the Item heading as printed."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:6]):
        m = _HEADING.match(line)
        if not m:
            continue
        rest, j = m.group(2).strip(), i + 1
        while not rest and j < len(lines) and not lines[j].strip():
            j += 1
        if not rest and j < len(lines) and len(lines[j]) < 120:
            rest, j = lines[j].strip(), j + 1
        item = "Item " + re.sub(r"(?i)item\s*", "", m.group(1)).upper()
        title = f"{item}. {_title_case(rest)}".strip()
        return title, title + "\n\n" + "\n".join(lines[j:]).strip()
    found = re.search(r"item_(\w+)$", key)
    return (f"Item {found.group(1).upper()}." if found else key.split("_")[-1].title()), text


@overload
def _section_texts(html: str, form: str, tables: Literal[True]) -> dict[str, str]: ...
@overload
def _section_texts(html: str, form: str, tables: bool) -> dict[str, str] | None: ...
def _section_texts(html: str, form: str, tables: bool) -> dict[str, str] | None:
    """Each section's raw text. Without `tables` edgartools skips its table processor (a third
    of its time on a 10-K; the bundle's 55 filings give the same sections either way): TOC
    sections never read table nodes, they walk the raw HTML and print tables through our
    hook. A section read from the node tree prints the processor's tables, so without
    `tables` this returns None for such a filing and the caller parses it again with them."""
    from edgar.documents import ParserConfig, parse_html

    cfg = ParserConfig(form=form, extract_xbrl=False, extract_links=False, table_extraction=tables)
    doc = parse_html(html, cfg)
    try:
        _hook_tables(doc)
    except Exception:  # edgartools moved its hook: tables stay space-aligned text
        logging.getLogger(__name__).debug("table hook unavailable", exc_info=True)
    raws = {}
    for key, sec in doc.sections.items():
        if sec._text_extractor is None and getattr(sec.node, "children", None):
            if not tables:
                return None
            raws[key] = sec._clean_boundary_artifacts(node_text(sec.node))
        else:
            raws[key] = sec.text() or ""
    return raws


def sections(path: Path, form: str | None = None) -> list[tuple[str, str, str]]:
    """(section_key, title, clean text) for each non-trivial section of one filing."""
    form = form or path.name.split("_")[0]
    html = path.read_text(encoding="utf-8", errors="replace")
    with _quiet():
        raws = _section_texts(html, form, tables=False)
        if raws is None:  # sections detected from headings: their text is the node tree's
            raws = _section_texts(html, form, tables=True)
    # a short line printed on every other page ("NVIDIA Corporation and Subsidiaries") is a
    # running header, not content
    lines = (_SPACES.sub(" ", x).strip() for t in raws.values() for x in t.split("\n"))
    seen = Counter(ln for ln in lines if ln and not ln.startswith("|"))
    running = frozenset(ln for ln, n in seen.items() if n >= RUNNING_MIN and len(ln) <= 80)
    out = []
    for key, raw in raws.items():
        title, text = _split_heading(key, clean_text(raw, running))
        if len(text) >= MIN_SECTION_CHARS:
            out.append((key, title, text))
    return out


def _blocks(text: str, limit: int) -> list[str]:
    """Paragraph blocks, each at most `limit` tokens (big tables split by rows, header kept)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        if approx_tokens(block) <= limit:
            out.append(block)
            continue
        lines = block.split("\n")
        head = lines[:2] if len(lines) > 2 and lines[1].startswith("|--") else []
        units = [(sep, u) for ln in lines[len(head) :] for sep, u in _pieces(ln, limit // 2)]
        cur = "\n".join(head)
        for sep, u in units:
            if cur and approx_tokens(cur) + approx_tokens(u) > limit:
                out.append(cur)
                cur, sep = "\n".join(head), "\n"
            cur = f"{cur}{sep}{u}" if cur else u
        out.append(cur)
    return [b for b in out if b.strip()]


def _pieces(line: str, limit: int) -> list[tuple[str, str]]:
    """A line cut into sentences, sentences into word runs, of at most `limit` tokens each;
    with the separator ("\n" new line, " " same line) that goes before each piece."""
    if approx_tokens(line) <= limit:
        return [("\n", line)]
    out: list[tuple[str, str]] = []
    for sent in re.split(r"(?<=[.!?;])\s+", line):
        cur = ""
        for w in sent.split(" "):
            if cur and approx_tokens(cur + " " + w) > limit:
                out.append((" ", cur))
                cur = w
            else:
                cur = f"{cur} {w}" if cur else w
        out.append((" ", cur))
    out[0] = ("\n", out[0][1])
    return out


def parents(text: str, size: int) -> list[str]:
    """Paragraph blocks packed greedily into parents of at most `size` tokens; a short heading
    line that would end a parent moves on to the next one."""
    out: list[list[str]] = []
    cur: list[str] = []
    used = 0
    for block in _blocks(text, size):
        n = approx_tokens(block)
        if cur and used + n > size:
            carry = [cur.pop()] if len(cur) > 1 and _is_heading(cur[-1]) else []
            if carry and approx_tokens(carry[0]) + n > size:
                cur, carry = cur + carry, []
            out.append(cur)
            cur, used = carry, sum(approx_tokens(b) for b in carry)
        cur.append(block)
        used += n
    return ["\n\n".join(p) for p in out + [cur] if p]


def _is_heading(block: str) -> bool:
    return "\n" not in block and approx_tokens(block) <= 15 and block[-1:] not in ".;:,|"


def children(parent: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) char spans of children of at most `size` tokens, each overlapping the one
    before by about `overlap` tokens; cut at a line, else a sentence, else any token boundary."""
    toks = [m.span() for m in re.finditer(r"\w+|[^\w\s]", parent)]
    n = len(toks)

    def rank(k: int) -> int:  # how good a cut just before token k is
        gap = parent[toks[k - 1][1] : toks[k][0]]
        prev = parent[toks[k - 1][0] : toks[k - 1][1]]
        return 3 if "\n" in gap else 2 if prev in ".!?" and gap else 1 if prev in ";:," else 0

    def best(lo: int, hi: int, target: int) -> int:
        ks = range(max(lo, 1), min(hi, n - 1) + 1)
        return max(ks, key=lambda k: (rank(k), -abs(k - target)), default=target)

    spans: list[tuple[int, int]] = []
    i = 0
    while i < n:
        j = n if n - i <= size else best(i + max(1, size // 2), i + size, i + size)
        spans.append((toks[i][0], toks[j - 1][1]))
        if j >= n:
            break
        lo = max(i + 1, j - overlap - overlap // 2)
        i = max(lo, best(lo, j - max(1, overlap // 2), j - overlap)) if overlap > 0 else j
    return spans


def _day(v: Any) -> date | None:
    return v if isinstance(v, date) or v is None else date.fromisoformat(str(v)[:10])


def chunk_filing(
    path: Path,
    filing: dict[str, Any],
    company: str,
    parent_tokens: int = 2000,
    child_tokens: int = 300,
    overlap: int = 50,
) -> list[Chunk]:
    """Parent/child chunks of one filing file; `filing` carries the `filings` table columns."""
    found = sections(path, filing["form"])
    filing = {**filing, "path": filing.get("path") or str(path)}
    return chunk_sections(found, filing, company, parent_tokens, child_tokens, overlap)


def chunk_sections(
    found: list[tuple[str, str, str]],
    filing: dict[str, Any],
    company: str,
    parent_tokens: int = 2000,
    child_tokens: int = 300,
    overlap: int = 50,
) -> list[Chunk]:
    """Parent/child chunks of one filing's (section_key, title, text) sections, as `sections`
    returns them and the store's `filing_sections` table holds them."""
    form, acc, ticker = filing["form"], filing["accession"], filing["ticker"]
    filed, period_end = _day(filing["filed"]), _day(filing.get("period_end"))
    fp = filing.get("fiscal_period") or "FY"
    period = f"FY{filing['fiscal_year']} {fp}"
    shown = f"FY{filing['fiscal_year']}" + ("" if fp == "FY" else f" {fp}")
    ended = f", period ended {period_end}" if period_end else ""
    out: list[Chunk] = []
    for key, title, text in found:
        prefix = f"{company} ({ticker}) {form} {shown}, filed {filed}{ended} — {title}\n"
        same = {"track": "filing", "ticker": ticker, "form": form, "accession": acc, "filed": filed}
        same |= {"available_from": filed, "section_key": key, "section": title, "period": period}
        same |= {"period_end": period_end, "source_path": str(filing.get("path") or "")}
        for p, ptext in enumerate(parents(text, parent_tokens)):
            for c, (a, b) in enumerate(children(ptext, child_tokens, overlap)):
                out.append(
                    Chunk(
                        id=f"{acc}:{key}:{p}:{c}",
                        text=ptext[a:b],
                        embed_text=prefix + ptext[a:b],
                        parent_id=f"{acc}:{key}:{p}",
                        parent_text=ptext,
                        char_start=a,
                        char_end=b,
                        **same,
                    )
                )
    return out
