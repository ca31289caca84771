"""SIGKILL tests (issue 20): the real binary killed at 3 points of each writing command. The
command stops itself at a named stop point (FINTRADE_STOP_AT, `fintrade_tui/kill_points.py`)
and is killed while stopped, so every kill lands where its test says, on any machine load.

Each test asserts (a) the store / index / workspace is as before or holds the command's
complete result, as the point implies, never half of it (read from a copy, so the check never
alters the files); (b) the same command run again succeeds with no repair and gives the
complete result; (c) no process the command started outlives the kill (each has up to 10 s).

Only the killed command must be the binary. A command run to its end (a rerun, a module
workspace) reads only what is on disk, so it runs in this process (`invoke`): the same command
without a new Python importing litellm again; ingest and index run as the binary all the same
(ingest forks its parser workers; an index build costs no less in here).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fintrade_tui.ingest import parse_cache
from tests.conftest import BUNDLE, needs_bundle, small_bundle
from tests.reliability.kill_harness import (
    Outcome,
    file_sha,
    invoke,
    read_lock,
    read_rows,
    read_tables,
    run,
    run_until_stopped,
)

pytestmark = needs_bundle
FILINGS = BUNDLE / "fintradebench/filings/AAPL"
# four 10-Qs: ingest parses 4+ filings in its two worker processes (fewer run in-process)
QUARTERS = ("2024-02-02", "2024-05-03", "2024-08-02", "2025-01-31")
ANSWER = "Apple's ROE was 1.6 as of the quarter [E1]."
JUDGED = {
    k: {"score": s, "justification": "because"}
    for k, s in (("accuracy", 4), ("completeness", 3), ("relevance", 4), ("clarity", 5))
}
JUDGED |= {"metrics_used": ["ROE"], "fundamental_integration": 4,
           "trading_signal_integration": 1, "reasoning_depth": 3}  # fmt: skip
N_QUESTIONS, N_IMPORTED = 1000, 1500


def _bundle(root: Path, quarters: tuple[str, ...]) -> Path:
    """A small bundle with the AAPL 10-Qs filed on these days."""
    return small_bundle(root, (next(FILINGS.glob(f"10-Q_{day}_*.htm")) for day in quarters))


def _config(
    folder: Path, bundle: Path, store: Path, index: Path | None = None, delay: float = 1.2
) -> Path:
    # a batch writes its run records a group every 0.5 s: an answer of 1.2 s lands each run's
    # end in a group of its own, so the stop point "k runs stored" finds exactly k of 6 (a
    # sleep, no CPU; shorter, runs would share groups and a kill at 1 find several stored)
    run_delay = f"mock_delay: {delay}"
    # the index kills test what a kill leaves of the tables and the manifest, not what the
    # vectors are worth: a filing's few large chunks, each embedded from its first 16 word
    # pieces, build the same tables at a third of the cost
    text = f"""bundle: {bundle}
store: {store}
workspace: {folder / "ws.duckdb"}
retrieval:
  index: {index or folder / "index"}
  parent_tokens: 4000
  child_tokens: 2000
  embed_tokens: 16
models:
  mock:
    model: openai/gpt-4o-mini
    extra: {{mock_response: {json.dumps(ANSWER)}, {run_delay}}}
  judge:
    model: openai/gpt-4o-mini
    extra: {{mock_response: {json.dumps(json.dumps(JUDGED))}}}
judging:
  model: judge
"""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(text)
    return folder / "config.yaml"


def _ok(args: list[str], binary: bool = True) -> str:
    """The command run to its end: the binary, or in this process (the module docstring)."""
    res = run(args) if binary else invoke(args)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def _cli(args: list[str]) -> str:
    return _ok(args, binary=False)


# a workspace write's stop points: (point, is the write stored, is its WAL left beside the file)
WORKSPACE_POINTS = {
    "transaction in progress": ("workspace.before-commit", False, None),
    "commit in the WAL": ("workspace.committed", True, True),
    "checkpointed, lock held": ("workspace.checkpointed", True, False),
}


def _stored_or_not(ws: Path, count_sql: str, total: int, before: dict, point: str) -> None:
    """Killed before its commit, the command left every table as before; after it, all of its
    rows, in the WAL or already checkpointed into the file."""
    _, stored, wal = WORKSPACE_POINTS[point]
    if wal is not None:
        assert Path(f"{ws}.wal").is_file() == wal
    assert read_rows(ws, count_sql)[0][0] == (total if stored else 0)
    if not stored:
        assert read_tables(ws) == before


STORE_SKIP = {"meta": "key <> 'built_at'"}  # the one value two builds of a bundle differ in


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Built once: the bundle and its store, a question file, the workspace after `questions
    import` and after a complete `run`, a big question file and a big run file to import."""
    root = tmp_path_factory.mktemp("kills")
    bundle = _bundle(root, QUARTERS)
    cfg = _config(root / "base", bundle, root / "base" / "store.duckdb")
    _ok(["--config", str(cfg), "ingest", "--json"])
    questions = root / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"Q{i}",
                    "text": f"What was AAPL's ROE at the end of {y}?",
                    "category": "F",
                    "as_of": f"{y}-12-31",
                    "tickers": ["AAPL"],
                    "golden_raw": ["ROE"],
                }  # fmt: skip
            )
            + "\n"
            for i, y in enumerate((2022, 2023, 2024))
        )
    )
    _cli(["--config", str(cfg), "questions", "import", str(questions), "--json"])
    _copy_workspace(root / "base" / "ws.duckdb", root / "ws-questions.duckdb")
    # the complete run the judge tests start from: no kill in it, so its config (rewritten)
    # answers without a delay
    cfg = _config(root / "base", bundle, root / "base" / "store.duckdb", delay=0)
    _cli(["--config", str(cfg), *RUN_ARGS])
    _copy_workspace(root / "base" / "ws.duckdb", root / "ws-runs.duckdb")
    many = root / "many_questions.jsonl"
    with many.open("w") as fh:
        for i in range(N_QUESTIONS):
            q = {"id": f"K{i}", "text": f"What was AAPL's ROE at the end of {2022 + i % 3}?",
                 "category": "F", "tickers": ["AAPL"], "golden_raw": ["ROE"]}  # fmt: skip
            fh.write(json.dumps(q) + "\n")
    imported = root / "many_runs.jsonl"
    with imported.open("w") as fh:
        for i in range(N_IMPORTED):
            r = {"question_id": f"Q{i % 3}", "model": f"ext{i // 3}", "condition": "closed-book",
                 "answer": f"answer {i} " * 20, "label": "correct"}  # fmt: skip
            fh.write(json.dumps(r) + "\n")
    return {"root": root, "bundle": bundle, "store": root / "base" / "store.duckdb",
            "questions": questions, "many": many, "imported": imported}  # fmt: skip


def _copy_workspace(ws: Path, to: Path) -> None:
    """The workspace as a next process would find it: its file once checkpointed (no WAL)."""
    with read_lock(ws):
        assert not Path(f"{ws}.wal").is_file()
        shutil.copyfile(ws, to)


def _folder(base: dict, tmp_path: Path, workspace: str | None = None) -> tuple[Path, Path]:
    """A test's own folder: a copy of the store (and of a workspace), its config."""
    store = tmp_path / "store.duckdb"
    shutil.copyfile(base["store"], store)
    if workspace:
        shutil.copyfile(base["root"] / workspace, tmp_path / "ws.duckdb")
    return _config(tmp_path, base["bundle"], store), tmp_path / "ws.duckdb"


def _kill(cfg: Path, args: list[str], point: str, env: dict[str, str] | None = None) -> Outcome:
    """Run the command until it stops itself at `point`, SIGKILL it there."""
    out = run_until_stopped(["--config", str(cfg), *args], point, env=env)
    assert out.killed, f"the kill did not land (rc {out.returncode}): {out.stderr[-500:]}"
    assert out.survivors == [], f"outlived the kill: {out.survivors}"
    return out


# --- ingest ---------------------------------------------------------------------------------

BUILDING = ".store.duckdb.building-*"
INGEST_POINTS = {
    "a parser worker mid-filing": "ingest.parsing",
    "the new store half written": "ingest.filings-written",
    "the new store built, not yet swapped in": "ingest.store-built",
}


@pytest.fixture(scope="module")
def small(base: dict) -> dict:
    """A one-filing bundle and its store: the index tests' small index, and a store other than
    the base one for the ingest tests to start from."""
    root = base["root"] / "small"
    bundle = _bundle(root, QUARTERS[2:3])
    cfg = _config(root, bundle, root / "store.duckdb")
    _cli(["--config", str(cfg), "ingest", "--json"])  # one filing: parsed in this process
    return {"root": root, "bundle": bundle, "store": root / "store.duckdb", "config": cfg}


@pytest.mark.parametrize("point", INGEST_POINTS)
def test_kill_ingest(base: dict, small: dict, tmp_path: Path, point: str) -> None:
    # the store in place is the other bundle's, so the rerun has a new store to build. Killed
    # mid-parsing: the four filings (parsed by two worker processes; fewer run in-process);
    # killed later, once parsing is over: the one filing shows the same at a quarter the cost
    new, old = (base, small) if point == "a parser worker mid-filing" else (small, base)
    store = tmp_path / "store.duckdb"
    shutil.copyfile(old["store"], store)
    cfg = _config(tmp_path, new["bundle"], store)
    before, complete = file_sha(store), read_tables(new["store"], STORE_SKIP)
    assert read_tables(store, STORE_SKIP) != complete
    # mid-parsing needs filings to parse: a cache of its own, empty (the suite's would hold
    # them all: the store build parsed them)
    fresh = {parse_cache.ENV: str(tmp_path / "parsed")}
    parsing = point == "a parser worker mid-filing"
    out = _kill(cfg, ["ingest", "--json"], INGEST_POINTS[point], env=fresh if parsing else None)
    if parsing:
        assert out.stopped != out.pid  # a pool worker stopped mid-filing, not ingest itself
        assert out.seen >= 2  # the two iXBRL parsers were running, and died with it
    else:
        assert list(tmp_path.glob(BUILDING))  # killed mid-build
    assert file_sha(store) == before  # the old store, byte for byte (the swap is the last step)
    _ok(["--config", str(cfg), "ingest", "--json"])
    assert read_tables(store, STORE_SKIP) == complete
    assert not list(tmp_path.glob(".store.duckdb.building*"))  # the killed build is swept


# --- index ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index_base(small: dict) -> dict:
    """The one-filing store (a small index) and its index built without a kill."""
    cfg = small["config"]
    summary = json.loads(_ok(["--config", str(cfg), "index", "--json"]))
    return {"store": small["store"], "bundle": small["bundle"], "summary": summary,
            "counts": _index_counts(cfg)}  # fmt: skip


def _index_counts(cfg: Path) -> dict | None:
    """Rows per table as a reader sees the index (None: never built) and the filings its
    manifest holds."""
    from fintrade_tui.config import load_config
    from fintrade_tui.errors import UserError
    from fintrade_tui.retrieval.index import TABLE, Index

    index = Index(load_config(cfg))
    try:
        seen = {t: index.open_table(t).count_rows() for t in TABLE}
    except UserError:
        return None
    return seen | {"filings": sorted(index.manifest()["filings"])}


# each point: the stop point, the tables the killed build had written by then
INDEX_POINTS = {
    "chunked, before the embedder": ("index.chunked", set()),
    "filing table written": ("index.filing-rows-written", {"filing_chunks"}),
    "text index built, manifest not swapped in": (
        "index.manifest-staged",
        {"filing_chunks", "market_chunks", "parents"},
    ),
}


@pytest.mark.parametrize("point", INDEX_POINTS)
def test_kill_index(index_base: dict, tmp_path: Path, point: str) -> None:
    import lancedb

    from fintrade_tui.retrieval.index import TABLE

    shutil.copyfile(index_base["store"], tmp_path / "store.duckdb")
    cfg = _config(tmp_path, index_base["bundle"], tmp_path / "store.duckdb")
    stop, written = INDEX_POINTS[point]
    _kill(cfg, ["index", "--json"], stop)
    index = tmp_path / "index"
    assert set(lancedb.connect(str(index)).list_tables().tables) == written
    staged = list(index.glob("manifest.*.tmp"))  # a manifest not yet renamed into place
    assert len(staged) == (stop == "index.manifest-staged")
    assert _index_counts(cfg) is None  # killed before its manifest: reads as never built
    again = json.loads(_ok(["--config", str(cfg), "index", "--json"]))
    assert not list(index.glob("manifest.*.tmp"))  # the killed build's manifest is swept
    keys = ("filings", "filing_chunks", "market_chunks")
    assert {k: again[k] for k in keys} == {k: index_base["summary"][k] for k in keys}
    assert _index_counts(cfg) == index_base["counts"]
    db = lancedb.connect(str(tmp_path / "index"))  # the newest versions too: no row twice
    newest = {t: db.open_table(n).count_rows() for t, n in TABLE.items()}
    assert newest == {t: index_base["counts"][t] for t in TABLE}


# --- run ------------------------------------------------------------------------------------

RUN_ARGS = ["run", "-q", "Q*", "-m", "mock", "-c", "no_rag,oracle", "--concurrency", "1",
            "--batch", "k", "--json"]  # fmt: skip
RUN_POINTS = {k: f"runs.ended-stored:{k}" for k in (1, 3, 5)}
KEYS = sorted((f"Q{i}", c) for i in range(3) for c in ("no_rag", "oracle"))


def _run_states(ws: Path) -> list[tuple]:
    return read_rows(
        ws, "SELECT question_id, condition, status, answer FROM runs WHERE batch = 'k'"
    )


@pytest.mark.parametrize("done", RUN_POINTS)
def test_kill_run(base: dict, tmp_path: Path, done: int) -> None:
    """Killed after 1, 3 or 5 of the batch's 6 runs completed."""
    cfg, ws = _folder(base, tmp_path, "ws-questions.duckdb")
    questions = read_tables(ws)["questions"]
    _kill(cfg, RUN_ARGS, RUN_POINTS[done])
    rows = _run_states(ws)
    assert read_tables(ws)["questions"] == questions
    # a run is complete (its whole answer) or not marked complete: never half an answer
    assert all(a == ANSWER for *_, s, a in rows if s == "completed"), rows
    completed = {(q, c) for q, c, s, _ in rows if s == "completed"}
    # at least `done` (a group stores each run's end 1.2 s apart; on a starved machine the
    # last two may share a group, so all six is possible, and the rerun then runs none)
    assert done <= len(completed) <= len(KEYS)
    _cli(["--config", str(cfg), *RUN_ARGS])
    after = _run_states(ws)
    assert sorted((q, c) for q, c, s, a in after if s == "completed" and a == ANSWER) == KEYS
    # the runs completed before the kill were kept, not run again
    assert completed <= {(q, c) for q, c, s, _ in after if s == "completed"}


# --- judge ----------------------------------------------------------------------------------

JUDGE_ARGS = ["judge", "--concurrency", "1", "--json"]
JUDGE_POINTS = {k: f"judge.verdict-saved:{k}" for k in (1, 3, 5)}
SCORE_SQL = (
    "SELECT run_id, kind, annotator, version, accuracy, completeness, relevance, clarity,"
    " status FROM scores WHERE kind = 'llm'"
)
VERDICT = ("judge", 1, 4, 3, 4, 5, "ok")


@pytest.mark.parametrize("done", JUDGE_POINTS)
def test_kill_judge(base: dict, tmp_path: Path, done: int) -> None:
    """Killed after 1, 3 or 5 of the 6 runs' verdicts were saved."""
    cfg, ws = _folder(base, tmp_path, "ws-runs.duckdb")
    runs = read_tables(ws)["runs"]
    _kill(cfg, JUDGE_ARGS, JUDGE_POINTS[done])
    assert read_tables(ws)["runs"] == runs
    scores = read_rows(ws, SCORE_SQL)
    assert all(r[2:] == VERDICT for r in scores), scores  # whole verdicts only
    assert len(scores) == done  # each verdict is saved as it arrives, one at a time
    _cli(["--config", str(cfg), *JUDGE_ARGS])
    after = read_rows(ws, SCORE_SQL)
    ids = {r[0] for r in read_rows(ws, "SELECT id FROM runs WHERE batch = 'k'")}
    assert sorted(r[0] for r in after) == sorted(ids)  # each run judged once
    assert all(r[2:] == VERDICT for r in after) and set(scores) <= set(after)


# --- questions import -----------------------------------------------------------------------


@pytest.mark.parametrize("point", WORKSPACE_POINTS)
def test_kill_questions_import(base: dict, tmp_path: Path, point: str) -> None:
    cfg, ws = _folder(base, tmp_path, "ws-questions.duckdb")
    before = read_tables(ws)
    args = ["questions", "import", str(base["many"]), "--json"]
    _kill(cfg, args, WORKSPACE_POINTS[point][0])
    count = "SELECT count(*) FROM questions WHERE id LIKE 'K%'"
    _stored_or_not(ws, count, N_QUESTIONS, before, point)
    assert json.loads(_cli(["--config", str(cfg), *args]))["questions"] == N_QUESTIONS
    assert read_rows(ws, "SELECT count(*) FROM questions WHERE id LIKE 'K%'")[0][0] == N_QUESTIONS
    assert read_tables(ws)["runs"] == before["runs"]


# --- runs import ----------------------------------------------------------------------------


@pytest.mark.parametrize("point", WORKSPACE_POINTS)
def test_kill_runs_import(base: dict, tmp_path: Path, point: str) -> None:
    cfg, ws = _folder(base, tmp_path, "ws-runs.duckdb")
    before = read_tables(ws)
    args = ["runs", "import", str(base["imported"]), "--json"]
    _kill(cfg, args, WORKSPACE_POINTS[point][0])
    count = "SELECT count(*) FROM runs WHERE model LIKE 'ext%'"
    _stored_or_not(ws, count, N_IMPORTED, before, point)
    summary = json.loads(_cli(["--config", str(cfg), *args]))
    assert sum(f["added"] + f["existing"] for f in summary["files"]) == N_IMPORTED
    assert read_rows(ws, count)[0][0] == N_IMPORTED
    labels = "SELECT count(*) FROM scores WHERE kind <> 'llm'"
    assert read_rows(ws, labels)[0][0] == N_IMPORTED  # each imported run's label, once


# --- a human score saved --------------------------------------------------------------------

HUMAN = "SELECT run_id, version, accuracy, completeness, relevance, clarity, note FROM scores"


@pytest.mark.parametrize("point", WORKSPACE_POINTS)
def test_kill_score(base: dict, tmp_path: Path, point: str) -> None:
    """`fintrade-tui score` (what the TUI's score form saves through ScoreStore.save)."""
    cfg, ws = _folder(base, tmp_path, "ws-runs.duckdb")
    before = read_tables(ws)
    rid = read_rows(ws, "SELECT id FROM runs ORDER BY id LIMIT 1")[0][0]
    args = ["score", rid, "--accuracy", "2", "--completeness", "3", "--relevance", "4",
            "--clarity", "5", "--note", "kill", "--json"]  # fmt: skip
    _kill(cfg, args, WORKSPACE_POINTS[point][0])
    count = "SELECT count(*) FROM scores WHERE kind = 'human'"
    _stored_or_not(ws, count, 1, before, point)  # nothing, or the whole score:
    human = read_rows(ws, HUMAN + " WHERE kind = 'human'")
    assert human in ([], [(rid, 1, 2, 3, 4, 5, "kill")])
    assert json.loads(_cli(["--config", str(cfg), *args]))["version"] == len(human) + 1
    last = read_rows(ws, HUMAN + " WHERE kind = 'human' ORDER BY version DESC LIMIT 1")
    assert last == [(rid, len(human) + 1, 2, 3, 4, 5, "kill")]
