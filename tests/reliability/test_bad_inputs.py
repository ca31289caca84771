"""Bad-input corpus, part 1 (issue 20 part 2): CLI arguments, config.yaml and question / run
import files. One table row per case: an id, the entry point, the input and the words the
user's one line must hold. Every refused case exits 2 with exactly one `error:` line (no
traceback) naming the input and a fix, and the workspace, the config and the store are byte
for byte what they were (sha256 before and after). The cases a reader should accept (a BOM,
CRLF line ends, stray non-UTF-8 bytes in a run log) import cleanly instead.
Part 2 (TUI, model replies, judge replies) is test_bad_inputs_live.py; the README table is
generated from both tables."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import zipfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.store.db import current
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question, save_questions

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "data" / "fintrade.duckdb"  # read only: every case proves it untouched
HAS_STORE = current(STORE)
DEEP = 10_000  # nesting depth of the "JSON nested 10,000 deep" cases
GB = 1 << 30


@dataclass(frozen=True)
class Case:
    id: str
    entry: str  # the entry point, as the README table names it
    input: str  # what was given, in words
    args: tuple[str, ...] = ()  # the command line after --config
    needles: tuple[str, ...] = ()  # what the one line must say
    config: str = ""  # extra config.yaml text
    file: str = ""  # name of a builder in FILES: the bad file, passed as {file}
    store: bool = False  # needs the checkout's built store


def _q(qid: str) -> Question:
    return Question(
        id=qid, source="fintradebench", category="F", text=f"Is Apple profitable? ({qid})",
        tickers=["AAPL"], as_of=date(2024, 11, 1),
    )  # fmt: skip


# ---- the bad files ---------------------------------------------------------------------------
RUN = {"question_id": "Q1", "model": "m", "answer": "Apple is profitable."}
NESTED = "[" * DEEP + "]" * DEEP


def _sparse(path: Path, first: bytes) -> None:
    """`first`, then a line of just over 1 GB of NUL bytes that takes no disk space."""
    with path.open("wb") as f:
        f.write(first)
        f.truncate(len(first) + GB + 1)


def _zip_bomb(path: Path) -> None:
    """An inspect .eval look-alike whose one sample expands to 257 MB of spaces (~0.3 MB)."""
    from fintrade_tui.imports.zipped import MEMBER_CAP

    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("header.json", json.dumps(header))
        with z.open("samples/1_epoch_1.json", "w", force_zip64=True) as m:
            block = b" " * (1 << 20)
            for _ in range(MEMBER_CAP // len(block) + 1):
                m.write(block)


FILES: dict[str, Any] = {
    "q_utf8.jsonl": lambda p: p.write_bytes(
        b'{"id": "N1", "text": "ok"}\n{"id": "N2", "text": "caf\xe9 \xff"}\n'
    ),
    "q_1gb.jsonl": lambda p: _sparse(p, b'{"id": "N1", "text": "ok"}\n'),
    "q_deep.jsonl": lambda p: p.write_text('{"id": "N1", "text": ' + NESTED + "}\n"),
    "q_deep.json": lambda p: p.write_text('{"company": "X", "instances": ' + NESTED + "}"),
    "q_quote.csv": lambda p: p.write_text('question_id,question,golden_indicators\nN1,"ok,ROE\n'),
    "r_1gb.jsonl": lambda p: _sparse(p, (json.dumps(RUN) + "\n").encode()),
    "r_deep.jsonl": lambda p: p.write_text('{"question_id": "Q1", "answer": ' + NESTED + "}\n"),
    "r_bomb.eval": _zip_bomb,
    "r_deep.json": lambda p: p.write_text(
        '{"version": 2, "eval": {"task": "t", "model": "m"}, "samples": [' + NESTED + "]}"
    ),
    "r_empty.jsonl": lambda p: p.write_text("\n  \n"),
    "r_scores.jsonl": lambda p: p.write_text(json.dumps(RUN | {"scores": {"accuracy": 9}})),
}

# ---- the table -------------------------------------------------------------------------------
CLI, CFG, IMP = "CLI", "config.yaml", "import"
ASK = ("ask", "Q1", "-c", "no_rag")
CASES = [
    Case("cli-date", CLI, "`--as-of 2025-13-45`", ("snapshot", "AAPL", "--as-of", "2025-13-45"),
         ("--as-of", "2025-13-45", "YYYY-MM-DD")),
    Case("cli-ticker", CLI, "unknown ticker `NOPE`", ("snapshot", "NOPE", "--as-of", "2025-01-02"),
         ("NOPE", "not in the store"), store=True),
    Case("cli-window", CLI, "`--from` after `--to`",
         ("signals", "AAPL", "--from", "2025-05-01", "--to", "2025-01-01"),
         ("--from 2025-05-01", "--to 2025-01-01", "fix:")),
    Case("cli-question", CLI, "unknown question id", ("questions", "show", "NOPE"),
         ("NOPE", "questions list")),
    Case("cli-run", CLI, "unknown run id", ("runs", "show", "NOPE"), ("NOPE", "fix:")),
    Case("cli-ask-question", CLI, "`ask` an unknown question", ("ask", "NOPE"),
         ("NOPE", "not found", "questions list"), store=True),
    Case("cli-condition", CLI, "unknown condition `-c bogus`", ("ask", "Q1", "-c", "bogus"),
         ("bogus", "no_rag"), store=True),
    Case("cli-model", CLI, "unknown model `-m nomodel`", (*ASK, "-m", "nomodel"),
         ("nomodel", "models:"), store=True),
    Case("cli-run-model", CLI, "`run -m nomodel`", ("run", "-q", "Q1", "-m", "nomodel"),
         ("nomodel", "models:"), store=True),
    Case("cli-negative", CLI, "`--concurrency -1`", ("run", "--concurrency", "-1"),
         ("--concurrency", "-1", "--help")),
    Case("cli-huge", CLI, "`--concurrency 10^20`", ("run", "--concurrency", "9" * 20),
         ("--concurrency", "9" * 20, "1<=x<=64")),
    Case("cli-max-cost", CLI, "`run --max-cost 0`", ("run", "--max-cost", "0"),
         ("--max-cost", "0", "x>0")),
    Case("cli-per-seed", CLI, "`questions scale --per-seed -3`",
         ("questions", "scale", "--per-seed", "-3"), ("--per-seed", "-3")),
    Case("cli-score-range", CLI, "`score --accuracy 9`",
         ("score", "R1", "--accuracy", "9", "--completeness", "3", "--relevance", "3",
          "--clarity", "3"), ("--accuracy", "9", "1<=x<=5")),
    Case("cli-panel-common", CLI, "`judge --panel --protocol common`",
         ("judge", "--panel", "--protocol", "common"), ("--panel", "--protocol common")),
    Case("cli-json-markdown", CLI, "`report --json --markdown`", ("report", "--json", "--markdown"),
         ("--json --markdown", "pick one")),
    Case("cli-option", CLI, "unknown option `--frobnicate`", ("snapshot", "AAPL", "--frobnicate"),
         ("--frobnicate", "snapshot --help")),
    Case("cli-mode", CLI, "`retrieve --mode psychic`",
         ("retrieve", "x", "-t", "AAPL", "--as-of", "2025-01-02", "--mode", "psychic"),
         ("--mode", "psychic", "hybrid")),
    Case("cli-k", CLI, "`retrieve --k 0`",
         ("retrieve", "x", "-t", "AAPL", "--as-of", "2025-01-02", "--k", "0"), ("--k", "0")),
    Case("cli-status", CLI, "`questions list --status bogus`",
         ("questions", "list", "--status", "bogus"), ("--status", "bogus", "resolved")),
    Case("cli-missing-arg", CLI, "`snapshot` without its ticker", ("snapshot",),
         ("TICKER", "snapshot --help")),
    Case("cli-format", CLI, "`runs import --format bogus`",
         ("runs", "import", "{file}", "--format", "bogus"), ("--format", "bogus", "inspect"),
         file="r_scores.jsonl"),
    Case("cfg-type", CFG, "`runs.concurrency: many`", ASK, ("runs.concurrency", "integer"),
         config="runs:\n  concurrency: many\n"),
    Case("cfg-unknown", CFG, "unknown key `runs.concurency`", ASK,
         ("runs.concurency", "spelling"), config="runs:\n  concurency: 3\n"),
    Case("cfg-negative", CFG, "`runs.concurrency: -1`", ASK, ("runs.concurrency", "1"),
         config="runs:\n  concurrency: -1\n"),
    Case("cfg-huge", CFG, "`retrieval.k: 10^24`", ASK, ("retrieval.k", "100"),
         config="retrieval:\n  k: 1000000000000000000000000\n"),
    Case("cfg-nan", CFG, "`temperature: .nan`", ASK, ("models.m.temperature", "NaN"),
         config="models:\n  m:\n    model: openai/gpt-4o-mini\n    temperature: .nan\n"),
    Case("cfg-price", CFG, "`input_cost_per_token: -1`", ASK,
         ("models.m.input_cost_per_token", "greater than or equal to 0"),
         config="models:\n  m:\n    model: openai/gpt-4o-mini\n    input_cost_per_token: -1\n"),
    Case("cfg-no-model", CFG, "a models entry without `model:`", ASK,
         ("models.mine.model", "missing", "add `models.mine.model:`"),
         config="models:\n  mine:\n    temperature: 0.1\n"),
    Case("cfg-yaml", CFG, "broken YAML", ASK, ("line", "not valid YAML"), config="runs: [\n"),
    Case("cfg-utf8", CFG, "invalid UTF-8 bytes", ASK, ("line 5", "not UTF-8", "re-save it"),
         config="runs:\n  level: L\udcff5\n"),
    Case("cfg-unreadable", CFG, "a config file that cannot be read", ASK,
         ("cannot be read", "permissions"), config="unreadable"),
    Case("cfg-store-in-file", CFG, "`store:` inside a file", ASK,
         ("`store`", "is a file, not a folder"), config="store: {dir}/config.yaml/x.duckdb\n"),
    Case("cfg-workspace-dir", CFG, "`workspace:` a folder", ASK, ("`workspace`", "is a folder"),
         config="workspace: {dir}\n"),
    Case("cfg-bundle", CFG, "`bundle:` a path that does not exist", ("ingest",),
         ("bundle path", "/nonexistent/bundle", "FINTRADE_BUNDLE"),
         config="bundle: /nonexistent/bundle\nstore: {dir}/new.duckdb\n"),
    Case("cfg-keymap-id", CFG, "`ui.keymap` with an unknown binding id", ("tui",),
         ("ui.keymap.app.qiut", "not a binding id", "app.quit"),
         config="ui:\n  keymap: {app.qiut: ctrl+x}\n"),
    Case("cfg-keymap-used", CFG, "`ui.keymap` with a key already used", ("tui",),
         ("ui.keymap.app.quit", "f1", "app.universe"), config="ui:\n  keymap: {app.quit: f1}\n"),
    Case("imp-q-utf8", IMP, "question JSONL with invalid UTF-8",
         ("questions", "import", "{file}"), ("q_utf8.jsonl line 2", "not UTF-8"),
         file="q_utf8.jsonl"),
    Case("imp-q-1gb", IMP, "question JSONL with a 1 GB line", ("questions", "import", "{file}"),
         ("q_1gb.jsonl line 2", "longer than 16 MB"), file="q_1gb.jsonl"),
    Case("imp-q-deep", IMP, "question JSONL nested 10,000 deep",
         ("questions", "import", "{file}"), ("q_deep.jsonl line 1", "nested deeper"),
         file="q_deep.jsonl"),
    Case("imp-q-finar-deep", IMP, "FinAR JSON nested 10,000 deep",
         ("questions", "import", "{file}"), ("q_deep.json", "nested deeper"), file="q_deep.json"),
    Case("imp-q-quote", IMP, "question CSV with an unclosed quote",
         ("questions", "import", "{file}"), ("q_quote.csv line 2", "quotes"), file="q_quote.csv"),
    Case("imp-r-1gb", IMP, "run JSONL with a 1 GB line", ("runs", "import", "{file}"),
         ("r_1gb.jsonl line 2", "longer than 16 MB"), file="r_1gb.jsonl"),
    Case("imp-r-deep", IMP, "run JSONL nested 10,000 deep",
         ("runs", "import", "{file}", "--format", "jsonl"),
         ("r_deep.jsonl line 1", "nested deeper"), file="r_deep.jsonl"),
    Case("imp-r-bomb", IMP, "a zip bomb posing as an inspect .eval", ("runs", "import", "{file}"),
         ("r_bomb.eval samples/1_epoch_1.json", "expands to 257 MB", "over 256 MB"),
         file="r_bomb.eval"),
    Case("imp-r-inspect-deep", IMP, "inspect .json log nested 10,000 deep",
         ("runs", "import", "{file}"), ("r_deep.json sample #1", "not a JSON object"),
         file="r_deep.json"),
    Case("imp-r-empty", IMP, "a run file of blank lines", ("runs", "import", "{file}"),
         ("r_empty.jsonl", "is empty"), file="r_empty.jsonl"),
    Case("imp-r-score", IMP, "a run's rubric score 9", ("runs", "import", "{file}"),
         ("line 1", "accuracy", "1-5"), file="r_scores.jsonl"),
]  # fmt: skip


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A config, a workspace holding Q1 (so nothing imports the seeds) and one run."""
    d = tmp_path_factory.mktemp("bad")
    store = STORE if HAS_STORE else d / "no-store.duckdb"
    (d / "config.yaml").write_text(
        f"bundle: {ROOT.parent / 'shared' / 'data'}\nstore: {store}\nworkspace: {d / 'ws.duckdb'}\n"
    )
    with open_workspace(d / "ws.duckdb") as ws:
        save_questions(ws, [_q("Q1")])
    (d / "one-run.jsonl").write_text(json.dumps(RUN) + "\n")
    done = CliRunner().invoke(main, ["--config", str(d / "config.yaml"), "runs", "import",
                                     str(d / "one-run.jsonl")])  # fmt: skip
    assert done.exit_code == 0, done.output
    return d


def _sums(d: Path) -> dict[str, Any]:
    """What is stored: the workspace and config by sha256, the store by size and mtime (it is
    hashed once per module below: 250 MB per case would cost seconds)."""
    out: dict[str, Any] = {}
    for p in sorted(d.iterdir()):
        if p.is_file() and (p.name.startswith("ws.duckdb") or p.name == "config.yaml"):
            out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    if HAS_STORE:
        st = STORE.stat()
        out["store"] = (st.st_size, st.st_mtime_ns)
    return out


def _config(env: Path, case: Case, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not case.config:
        return env / "config.yaml"
    path = env / f"cfg-{case.id}.yaml"
    base = (env / "config.yaml").read_text()
    if case.config == "unreadable":
        path.write_text(base)
        path.chmod(0)
        if os.geteuid() == 0:  # root reads anything: make the read fail as it would for others
            real = Path.read_text

            def denied(self: Path, *a: Any, **k: Any) -> str:
                if self == path:
                    raise PermissionError(13, "Permission denied")
                return real(self, *a, **k)

            monkeypatch.setattr(Path, "read_text", denied)
        return path
    # a key the case sets replaces the base config's line (YAML would keep the last silently)
    extra = case.config.replace("{dir}", str(env))
    keys = {line.split(":")[0] for line in extra.splitlines() if line and line[0] != " "}
    kept = [line for line in base.splitlines() if line.split(":")[0] not in keys]
    text = "\n".join(kept) + "\n" + extra
    path.write_bytes(text.encode("utf-8", "surrogateescape"))  # \udcff -> the byte 0xff
    return path


def _fails_cleanly(result: Any, needles: tuple[str, ...]) -> str:
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out and isinstance(result.exception, SystemExit), out
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    line = lines[0]
    assert line.startswith("error: ") and "(fix: " in line, line
    for n in needles:
        assert n in line, (n, line)
    return line


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_and_changes_nothing(
    case: Case, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if case.store and not HAS_STORE:
        pytest.skip("no current store at data/fintrade.duckdb")
    cfg = _config(env, case, monkeypatch)
    args = list(case.args)
    if case.file:
        bad = env / case.file
        if not bad.exists():
            FILES[case.file](bad)
        args = [str(bad) if a == "{file}" else a for a in args]
    before = _sums(env)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    result = CliRunner().invoke(main, ["--config", str(cfg), *args])
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
    _fails_cleanly(result, case.needles)
    assert _sums(env) == before
    if case.file.endswith(("1gb.jsonl", ".eval")):
        assert grew_mb < 200, f"peak RSS grew {grew_mb:.0f} MB"  # never the 1 GB / 257 MB


def test_the_store_is_byte_for_byte_untouched(env: Path) -> None:
    """Run last in this module (pytest keeps file order): the store's sha256 equals a copy of
    its hash taken before the corpus ran (in the fixture's first use)."""
    if not HAS_STORE:
        pytest.skip("no current store")
    assert hashlib.file_digest(STORE.open("rb"), "sha256").hexdigest() == _STORE_SHA[0]


_STORE_SHA: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _store_sha() -> None:
    if HAS_STORE:
        _STORE_SHA.append(hashlib.file_digest(STORE.open("rb"), "sha256").hexdigest())


# ---- inputs a reader should take as they are ---------------------------------------------------
@dataclass(frozen=True)
class Accepted:
    id: str
    entry: str
    input: str
    name: str
    data: bytes
    args: tuple[str, ...]
    gets: str
    extra: dict = field(default_factory=dict)


_JL = (json.dumps(RUN) + "\r\n").encode()
ACCEPTED = [
    Accepted("imp-q-bom-crlf", IMP, "question CSV with a BOM and CRLF line ends", "seed.csv",
             b"\xef\xbb\xbfquestion_id,question,golden_indicators\r\nF1,Is Apple up?,ROE\r\n",
             ("questions", "import", "{file}", "--json"),
             "imported; no BOM or CR in ids or texts"),
    Accepted("imp-q-jsonl-bom-crlf", IMP, "question JSONL with a BOM and CRLF", "q.jsonl",
             b'\xef\xbb\xbf{"id": "N1", "text": "Is Apple up?"}\r\n',
             ("questions", "import", "{file}", "--json"), "imported; clean id and text"),
    Accepted("imp-r-bom-crlf", IMP, "run JSONL with a BOM and CRLF", "runs.jsonl",
             b"\xef\xbb\xbf" + _JL + _JL.replace(b"Q1", b"Q2"),
             ("runs", "import", "{file}", "--json"), "imported; 2 runs, answers without CR"),
    Accepted("imp-r-utf8", IMP, "run JSONL with invalid UTF-8 bytes", "bytes.jsonl",
             json.dumps(RUN | {"answer": "caf@ ok"}).encode().replace(b"@", b"\xff") + b"\n",
             ("runs", "import", "{file}", "--json"),
             "imported with the warning `non-UTF-8 bytes replaced with U+FFFD`"),
]  # fmt: skip


QUESTION_FILES = [c for c in ACCEPTED if c.args[0] == "questions"]
RUN_FILES = [c for c in ACCEPTED if c.args[0] != "questions"]


@pytest.mark.parametrize("case", QUESTION_FILES, ids=[c.id for c in QUESTION_FILES])
def test_odd_but_valid_question_files_import_cleanly(
    case: Accepted, tmp_path: Path, built_store: Config
) -> None:
    _imports_cleanly(case, tmp_path, built_store.store)  # resolved against the store


@pytest.mark.parametrize("case", RUN_FILES, ids=[c.id for c in RUN_FILES])
def test_odd_but_valid_run_files_import_cleanly(case: Accepted, tmp_path: Path) -> None:
    _imports_cleanly(case, tmp_path, tmp_path / "none.duckdb")  # runs need no store


def _imports_cleanly(case: Accepted, tmp_path: Path, store: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"store: {store}\nworkspace: {tmp_path / 'ws.duckdb'}\n")
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        save_questions(ws, [_q("Q1"), _q("Q2")])
    f = tmp_path / case.name
    f.write_bytes(case.data)
    args = [str(f) if a == "{file}" else a for a in case.args]
    result = CliRunner().invoke(main, ["--config", str(cfg), *args])
    assert result.exit_code == 0, result.output
    with open_workspace(tmp_path / "ws.duckdb", read_only=True) as ws:
        texts = ws.execute("SELECT id, text FROM questions").fetchall()
        texts += ws.execute("SELECT id, answer FROM runs").fetchall()
    assert texts and not any("\ufeff" in str(t) or "\r" in str(t) for row in texts for t in row)
    if case.args[0] == "questions":
        assert {"F1", "N1"} & {i for i, _ in texts}
    else:
        summary = json.loads(result.stdout)
        added = summary["totals"]["added"]
        assert added == (1 if case.id == "imp-r-utf8" else 2), summary
        if case.id == "imp-r-utf8":
            assert "non-UTF-8 bytes replaced" in json.dumps(summary["files"][0]["warnings"])
            assert any(a == "caf\ufffd ok" for _, a in texts)
