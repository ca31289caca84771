"""Judge calibration: does a judge rank the seeds' expert-reviewed reference answers above
corrupted copies of them? For each of N seed questions (spread over F, T and FT) the judge
scores the reference itself and one corrupted copy, rotating three corruptions:

- numbers: every figure in the answer changed (scaled by 1.37, percentages and ratios alike);
- company: the company's ticker and names swapped for another NASDAQ-100 company's;
- truncated: only the first third of the answer kept.

The judge prompt is the product's (`judging.judge`), reference included, with the numeric audit
of the answer against the reference (`text_audit`) and the company check (`company_check`, by
the alias table) but not against the store (none needed).
The judged reference is what a local judge sees of it: its conclusion when longer than
`judging.local_reference_tokens`. A pair's
score is the mean of the four rubric dimensions; it is ranked correctly when the reference
scores strictly higher. Prints,
per judge: mean reference vs mean corrupted score, the share of pairs ranked correctly, ties,
failures, and the same per corruption.

    .venv/bin/python -m benchmarks.bench_judge_calibration [--pairs 50] [--judges local,local-tiny]
"""

from __future__ import annotations

import asyncio
import re
import statistics
import zlib
from pathlib import Path

from benchmarks import harness
from fintrade_tui.audits.company import company_check
from fintrade_tui.audits.evidence import audit_text, merge_audits
from fintrade_tui.config import Config, load_config
from fintrade_tui.judging.conclusion import conclusion
from fintrade_tui.judging.judge import JudgeInput, judge_run
from fintrade_tui.questions.companies import table_mentions
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.scores import DIMENSIONS

SEEDS = "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"
KINDS = ("numbers", "company", "truncated")
# the seeds' companies by name, to swap one for another (a real company, not a placeholder)
NAMES = {
    "AAPL": ["Apple"],
    "MSFT": ["Microsoft"],
    "NVDA": ["NVIDIA", "Nvidia"],
    "AMZN": ["Amazon"],
    "GOOGL": ["Alphabet", "Google"],
    "META": ["Meta"],
    "TSLA": ["Tesla"],
    "AVGO": ["Broadcom"],
    "COST": ["Costco"],
    "NFLX": ["Netflix"],
    "ADBE": ["Adobe"],
    "AMD": ["AMD", "Advanced Micro Devices"],
    "INTC": ["Intel"],
    "PEP": ["PepsiCo", "Pepsi"],
    "CSCO": ["Cisco"],
    "QCOM": ["Qualcomm"],
}
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


def _tickers(q: Question) -> list[str]:
    found = [t for t, names in NAMES.items() if t in q.text or any(n in q.text for n in names)]
    return q.tickers or found


def answer_of(q: Question, budget: int | None) -> str:
    """The reference as a judged answer: what a local judge sees of it (its conclusion when it
    is longer than the budget), without the note saying so."""
    text = conclusion(q.reference_answer or "", budget)
    return text.split("\n", 1)[1] if text.startswith("(the reference's conclusion") else text


def corrupt(q: Question, kind: str, ref: str) -> str | None:
    """`ref` with one corruption, or None when it cannot apply (nothing changed)."""
    if kind == "numbers":

        def scale(m: re.Match[str]) -> str:
            whole, frac = m.group(1).replace(",", ""), m.group(2) or ""
            if len(whole) == 4 and whole.startswith(("19", "20")) and not frac:
                return m.group(0)  # a year: changing it would be a different corruption
            v = float(whole + frac) * 1.37
            return f"{v:,.{max(len(frac) - 1, 0)}f}" if frac else f"{round(v):,}"

        out = _NUMBER.sub(scale, ref)
    elif kind == "company":
        tickers = [t for t in _tickers(q) if t in NAMES]
        if not tickers:
            return None
        out = ref
        others = [t for t in NAMES if t not in tickers]
        for i, t in enumerate(tickers):
            # crc32, not hash(): str hashes change with each process, the pairs must not
            other = others[(zlib.crc32(q.id.encode()) + i) % len(others)]
            out = re.sub(rf"\b{t}\b", other, out)
            for name in NAMES[t]:
                out = re.sub(rf"\b{re.escape(name)}\b", NAMES[other][0], out)
    else:
        words = ref.split(" ")
        out = " ".join(words[: max(1, len(words) // 3)])
    return out if out != ref else None


def pairs(cfg: Config, n: int) -> list[tuple[Question, str, str, str]]:
    qs = read_questions(cfg.bundle / SEEDS)
    by_cat: dict[str, list[Question]] = {}
    for q in qs:
        by_cat.setdefault(q.category, []).append(q)
    order = [q for group in zip(*by_cat.values(), strict=False) for q in group]  # F, T, FT, ...
    out = []
    budget = cfg.judging.local_reference_tokens
    for i, q in enumerate(order):
        good = answer_of(q, budget)
        for k in range(len(KINDS)):  # the rotation's corruption, else the next that applies
            kind = KINDS[(i + k) % len(KINDS)]
            bad = corrupt(q, kind, good)
            if bad:
                out.append((q, kind, good, bad))
                break
        if len(out) == n:
            break
    return out


def _mean(score, expected: bool = True) -> float | None:
    """The mean of the four dimensions: probability-weighted (`expected_scores`) when the judge
    gave token probabilities and `expected`, else the written integers."""
    if score.status != "ok":
        return None
    weighted = score.detail.get("expected_scores") if expected else None
    return statistics.mean(weighted[d] if weighted else getattr(score, d) for d in DIMENSIONS)


def _input(cfg, q: Question, run_id: str, answer: str) -> JudgeInput:
    """What `judge` gives the judge, less the store half of the audit (no store here)."""
    # against the reference the judge sees (its conclusion when long), as `judge` does
    reference = conclusion(q.reference_answer or "", cfg.judging.local_reference_tokens)
    audit = merge_audits(None, audit_text(answer, [], reference, cfg.judging.audit_tolerance))
    # the product resolves the question's companies with the store; the alias table here
    audit["companies"] = company_check(answer, table_mentions(q.text))
    return JudgeInput({"id": run_id, "answer": answer}, q, audit)


async def judge_pairs(
    cfg: Config, judge: str, todo: list[tuple[Question, str, str, str]], concurrency: int
) -> list[dict]:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int, q: Question, kind: str, ref: str, bad: str) -> dict:
        async with sem:  # the reference first: the corrupted copy reuses its prompt prefix
            good = await judge_run(cfg, _input(cfg, q, f"ref-{i}", ref), judge)
            worse = await judge_run(cfg, _input(cfg, q, f"bad-{i}", bad), judge)
        return {
            "question": q.id,
            "kind": kind,
            "reference": _mean(good),
            "corrupted": _mean(worse),
            "reference_written": _mean(good, False),
            "corrupted_written": _mean(worse, False),
        }

    return await asyncio.gather(*(one(i, *t) for i, t in enumerate(todo)))


def summarize(rows: list[dict]) -> dict:
    ok = [r for r in rows if r["reference"] is not None and r["corrupted"] is not None]
    n = len(ok)
    written = sum(r["reference_written"] > r["corrupted_written"] for r in ok) / len(rows)
    return {
        "ranked_written": written,
        "pairs": len(rows),
        "judged": n,
        "mean_reference": statistics.mean(r["reference"] for r in ok) if n else None,
        "mean_corrupted": statistics.mean(r["corrupted"] for r in ok) if n else None,
        # a failed judgement cannot rank anything: it counts against the judge
        "ranked_correctly": sum(r["reference"] > r["corrupted"] for r in ok) / len(rows),
        "ties": sum(r["reference"] == r["corrupted"] for r in ok) / len(rows),
        "failures": len(rows) - n,
    }


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--judges", default="local,local-tiny")
    ap.add_argument("--concurrency", type=int, default=3)
    ap.add_argument("--config", type=Path)
    ap.add_argument("--verbose", action="store_true", help="every pair's scores")
    a = ap.parse_args()
    cfg = load_config(a.config)
    todo = pairs(cfg, a.pairs)
    kinds = {k: sum(t[1] == k for t in todo) for k in KINDS}
    rows, walls = [], []
    for judge in a.judges.split(","):
        harness.log(f"{judge}: {len(todo)} pairs")
        wall, judged = harness.clock(
            lambda judge=judge: asyncio.run(judge_pairs(cfg, judge, todo, a.concurrency))
        )
        for kind in ("all", *KINDS):
            some = [r for r in judged if kind == "all" or r["kind"] == kind]
            if not some:
                continue
            s = summarize(some)
            ref = "—" if s["mean_reference"] is None else f"{s['mean_reference']:.2f}"
            bad = "—" if s["mean_corrupted"] is None else f"{s['mean_corrupted']:.2f}"
            rows.append(
                [judge, kind, s["pairs"], ref, bad, f"{s['ranked_correctly']:.0%}"]
                + [f"{s['ties']:.0%}", s["failures"], f"{s['ranked_written']:.0%}"]
            )
        walls.append(f"{judge}: {len(todo)} pairs in {wall:.0f} s")
        if a.verbose:
            for r in judged:
                print(r)
    harness.report(
        f"{len(todo)} seed pairs: " + ", ".join(f"{v} {k}" for k, v in kinds.items()),
        ["judge", "corruption", "pairs", "ref", "bad", "ranked", "ties", "fail", "written"],
        rows,
        [
            *walls,
            "ref/bad = mean of the four rubric scores, probability-weighted where the judge gives"
            " token probabilities;",
            "ranked = reference strictly above its copy;"
            " written = the same ranking by the integer scores the judge wrote",
        ],
    )


if __name__ == "__main__":
    main()
