"""API keys never reach the workspace, exports, case studies or output: fake keys in the
environment (a model's `api_key_env`, two deployments' own keys, a judge's, and an unrelated
`*_TOKEN` variable), a scripted provider that echoes the key it receives into its streamed
answer (split across deltas, and base64-encoded), a tool call's arguments, error messages and
the judge's replies; then a full headless `run`, `judge`, every export and the case studies,
and a scan of every byte written (DuckDB read raw and queried column by column, Parquet read
back) for each key and its base64. The echo is checked to have happened: `***` stands where
each key was.
"""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui import redact
from fintrade_tui.cli import main
from fintrade_tui.config import Config
from tests.conftest import BUNDLE, needs_bundle, write_config

pytestmark = needs_bundle

KEY_VARS = {
    "keyed": "FT_SCAN_API_KEY",
    "d1": "FT_SCAN_DEPLOY_ONE",  # names not ending in _KEY: only the registry says they are keys
    "d2": "FT_SCAN_DEPLOY_TWO",
    "judge": "FT_SCAN_JUDGE_SECRET",
    "other": "FT_SCAN_OTHER_TOKEN",  # named by no model: caught by its name's ending
}
CONFIG = """
models:
  keyed: {model: echo/keyed, api_key_env: FT_SCAN_API_KEY, tools: native}
  pooled:
    model: echo/pooled
    tools: router
    deployments:
      - {name: d1, api_key_env: FT_SCAN_DEPLOY_ONE, rpm: 60}  # paced: both deployments answer
      - {name: d2, api_key_env: FT_SCAN_DEPLOY_TWO, rpm: 60}
  judge: {model: echo/judge, api_key_env: FT_SCAN_JUDGE_SECRET}
runs: {default_model: keyed, retries: 0, backoff: 0.01}
judging: {model: judge, retries: 1}
"""
CONDITIONS = "no_rag,oracle,indicator_rag,tool_use"
RECEIVED: list[str] = []  # every api_key the provider was handed
MIN_SHOWN = 6  # no delta shows even the first six characters of a key


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _tag(messages: list) -> str:
    text = json.dumps([m.get("content") for m in messages], default=str)
    tools = any(m.get("role") == "tool" for m in messages)
    return "none" if "You are given no " in text and not tools else "other"


def _provider():
    """echo/<model>: streams an answer holding the key it got, split across deltas, and the
    other token; keyed no_rag prompts fail with the key in the message; keyed tool rounds call
    a tool with the key in its arguments; echo/judge judges with the key in its reasons, fails
    pooled oracle answers with the key in the error and answers other pooled ones with
    invalid output holding the key."""
    import os

    import litellm
    from litellm import CustomLLM

    from fintrade_tui.models import llm, providers

    class Echo(CustomLLM):
        async def astreaming(self, model: str, messages: list, api_key=None, **_):
            RECEIVED.append(api_key)
            name = model.split("/", 1)[-1]
            tag = _tag(messages)
            if name == "keyed" and tag == "none":
                raise litellm.BadRequestError(f"bad key {api_key} refused", model, "echo")
            other = os.environ[KEY_VARS["other"]]
            # the Oracle's items alone state a figure "for the quarter ended ..." or "at the
            # close of ..." (runs/conditions.py `_oracle_text`)
            said = json.dumps(messages, default=str)
            cond = "oracle" if " ended 20" in said or "at the close of 20" in said else tag
            for part in (
                f"Answer of model={name} cond={cond} key=",
                api_key[:5],
                api_key[5:11],
                api_key[11:] + " b64=",
                _b64(api_key) + " other=",
                other + " end.",
            ):
                yield providers.stream_chunk(part)
            yield providers.stream_chunk("", finished=True)

        async def acompletion(self, model: str, messages: list, api_key=None, **_):
            RECEIVED.append(api_key)
            if model.split("/")[-1] == "judge":  # litellm hands over the name, or all of it
                return _judge_reply(model, messages, api_key)
            if messages[-1].get("role") == "tool":  # the tool answered: no more calls
                return litellm.ModelResponse(choices=[{"message": {"content": "done"}}])
            call = {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "get_fundamental",
                    "arguments": json.dumps({"ticker": "AAPL", "name": "roe", "note": api_key}),
                },
            }
            msg = {"role": "assistant", "content": None, "tool_calls": [call]}
            return litellm.ModelResponse(choices=[{"message": msg, "finish_reason": "tool_calls"}])

    def _judge_reply(model: str, messages: list, key: str):
        text = json.dumps(messages, default=str)
        if "model=pooled cond=oracle" in text:
            raise litellm.BadRequestError(f"judge key {key} over quota", model, "echo")
        if "model=pooled" in text:
            content = f"no JSON here, only {key}"
        else:
            dim = {"score": 4, "justification": f"fine, judged with {key}"}
            content = json.dumps(
                {
                    **{d: dim for d in ("accuracy", "completeness", "relevance", "clarity")},
                    "metrics_used": ["roe", key],
                    "fundamental_integration": 3,
                    "trading_signal_integration": 2,
                    "reasoning_depth": 3,
                }
            )
        return litellm.ModelResponse(choices=[{"message": {"content": content}}])

    llm.litellm()
    providers.register_provider("echo", Echo())


@pytest.fixture(scope="module")
def store(built_store: Config) -> Path:
    return built_store.store


def _scan_bytes(folder: Path, needles: dict[str, str]) -> list[str]:
    """`file: what` for every needle found in the raw bytes of any file under `folder`."""
    hits = []
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            hits += [f"{p}: {what}" for what, n in needles.items() if n.encode() in data]
    return hits


def _scan_tables(con: duckdb.DuckDBPyConnection, tables: list[str], needles: dict) -> list[str]:
    """Every column of every table, as text, searched for every needle."""
    hits = []
    for t in tables:
        cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()]
        for c in cols:
            for what, n in needles.items():
                sql = f'SELECT count(*) FROM {t} WHERE contains(CAST("{c}" AS VARCHAR), ?)'
                if con.execute(sql, [n]).fetchone()[0]:
                    hits.append(f"{t}.{c}: {what}")
    return hits


def _scan_duckdb(path: Path, needles: dict[str, str]) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [
            f'"{s}"."{t}"'
            for s, t in con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT internal"
            ).fetchall()
        ]
        return _scan_tables(con, tables, needles)


def _scan_parquet(path: Path, needles: dict[str, str]) -> list[str]:
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE p AS SELECT * FROM read_parquet('{path}')")
        return [f"{path.name} {h}" for h in _scan_tables(con, ["p"], needles)]


def _needles(keys: dict[str, str]) -> dict[str, str]:
    out = {}
    for name, key in keys.items():
        out[name] = key
        out[f"{name} base64"] = _b64(key).rstrip("=")
    return out


def test_scanners_find_a_planted_key(tmp_path: Path) -> None:
    """The scans below can fail: a key in a file, a DuckDB column or Parquet is found."""
    key = "sk-planted-" + secrets.token_hex(8)
    needles = _needles({"planted": key})
    (tmp_path / "x.txt").write_text(f"echo {_b64(key)}")
    with duckdb.connect(str(tmp_path / "x.duckdb")) as con:
        con.execute("CREATE TABLE t (a INTEGER, b VARCHAR[])")
        con.execute("INSERT INTO t VALUES (1, ['a', ?])", [f"x{key}y"])
        con.execute(f"COPY t TO '{tmp_path / 'x.parquet'}' (FORMAT parquet)")
    assert any("x.txt: planted base64" in h for h in _scan_bytes(tmp_path, needles))
    assert _scan_duckdb(tmp_path / "x.duckdb", needles) == ['"main"."t".b: planted']
    assert _scan_parquet(tmp_path / "x.parquet", needles) == ["x.parquet p.b: planted"]


def test_stream_redaction_holds_a_key_split_across_deltas(monkeypatch) -> None:
    key = "tok-" + secrets.token_hex(10)
    monkeypatch.setenv("FT_SPLIT_API_KEY", key)
    text = f"a {key} b {key[:6]}{key[6:]} c {key[:9]}"
    for step in (1, 3, 7, len(text)):
        s = redact.Stream()
        out = [s.feed(text[i : i + step]) for i in range(0, len(text), step)] + [s.flush()]
        assert key[:MIN_SHOWN] not in "".join(out)
        assert "".join(out) == "a *** b *** c ***"  # the cut-off start of a key too
        assert all(key[:MIN_SHOWN] not in o for o in out)
    # a short value is not a key: ordinary text stays as it is
    monkeypatch.setenv("FT_SHORT_KEY", "abc")
    assert redact.text("abc abc") == "abc abc"


def test_run_records_blank_keys_however_they_arrive(tmp_path: Path, monkeypatch) -> None:
    """records.py is a redaction point of its own: a key in a row written directly, in an
    end state, in an imported row and in a Ray shard landed in bulk is stored as `***`."""
    from fintrade_tui.workspace.run_records import RunStore, insert_runs

    key = "sk-rec-" + secrets.token_hex(10)
    monkeypatch.setenv("FT_REC_API_KEY", key)
    con = duckdb.connect(str(tmp_path / "ws.duckdb"))
    store = RunStore(con)
    rid = store.start({"question_id": "Q", "model": "m", "prompt": f"p {key}"})
    store.finish(rid, status="error", error=f"E: {key}", answer=key, extra={key: [key]})
    with store.transaction() as cur:
        insert_runs(cur, [{"id": "imp", "answer": f"imported {key}", "batch": "import:x"}])
    shard = tmp_path / "shard.parquet"
    con.execute(
        f"COPY (SELECT 'ray1' AS id, 'k1' AS batch_key, 'completed' AS status,"
        f" 'shard ' || ? AS answer, now()::TIMESTAMP AS started_at) TO '{shard}' (FORMAT parquet)",
        [key],
    )
    assert store.load_shards([str(shard)]) == (1, 0)
    got = {r["id"]: r for r in store.list(limit=10)}
    assert got[rid]["prompt"] == "p ***" and got[rid]["error"] == "E: ***"
    assert got[rid]["answer"] == "***" and got[rid]["extra"] == {"***": ["***"]}
    assert got["imp"]["answer"] == "imported ***" and got["ray1"]["answer"] == "shard ***"
    con.close()
    shard.unlink()  # the shard holds the key (a worker of an older version wrote it)
    assert _scan_bytes(tmp_path, _needles({"key": key})) == []


def test_no_key_reaches_db_exports_case_studies_or_output(
    store: Path, tmp_path: Path, monkeypatch, capfd
) -> None:
    keys = {n: f"sk-{n}-{secrets.token_hex(12)}" for n in KEY_VARS}
    for n, var in KEY_VARS.items():
        monkeypatch.setenv(var, keys[n])
    work = tmp_path / "work"
    cfg_path = write_config(work, BUNDLE, store, f"workspace: {work}/ws.duckdb\n{CONFIG}")
    RECEIVED.clear()
    _provider()
    out = work / "out"
    out.mkdir()

    def cli(name: str, *args: str, code: int = 0) -> str:
        res = CliRunner().invoke(main, ["--config", str(cfg_path), *args])
        (out / f"{name}.txt").write_text(res.output + str(res.exception or ""))
        assert res.exit_code == code, res.output
        return res.output

    run = ["run", "-q", "F1,T1", "-m", "keyed,pooled", "-c", CONDITIONS, "--batch", "scan"]
    cli("run", *run, "--json", code=3)  # keyed no_rag runs fail (the key in their error)
    cli("judge", "judge", "--batch", "scan", "--json")
    listed = json.loads(cli("runs-list", "runs", "list", "--batch", "scan", "--json"))
    # judged again for the text output: one run of each kind of judge reply (the key in its
    # reasons, in its error, in its invalid output) shows that output each way
    kinds = (("keyed", "oracle"), ("pooled", "oracle"), ("pooled", "no_rag"))
    again = [next(r["id"] for r in listed if (r["model"], r["condition"]) == k) for k in kinds]
    cli("judge-text", "judge", "--batch", "scan", "--force", "--runs", ",".join(again))
    for fmt in ("jsonl", "csv", "parquet"):
        cli(f"runs-{fmt}", "runs", "export", str(out / f"runs.{fmt}"), "--json")
        cli(f"scores-{fmt}", "scores", "export", str(out / f"scores.{fmt}"), "--history")
    report = ("report", "--baseline", "oracle")  # no_rag: failed or judged invalid
    cli("report-csv", *report, "--csv", str(out / "report.csv"), "--lanes-csv", str(out / "l.csv"))
    cli("report-parquet", *report, "--parquet", str(out / "report.parquet"))
    cli("report-md", *report, "--markdown")
    cli("report-json", *report, "--json")
    for r in listed:
        cli(f"show-{r['id']}", "runs", "show", r["id"], "--json")

    from fintrade_tui.config import load_config
    from fintrade_tui.exports.case_study import write_case_study
    from fintrade_tui.exports.runs_table import write_view
    from fintrade_tui.reports.failures import failure_cases
    from fintrade_tui.workspace.connection import open_workspace

    cfg = load_config(cfg_path)
    with open_workspace(cfg.workspace) as ws:
        ids = [r["id"] for r in listed]
        cases = failure_cases(ws, None, cfg.judging.disagreement)
        (out / "failures.json").write_text(json.dumps(cases, default=str))
        for case in cases[:5]:
            write_case_study(cfg, ws, case["run_ids"], out / f"case-{case['key']}.md")
        write_case_study(cfg, ws, ids, out / "case-all.md")
        write_case_study(cfg, ws, ids[:1])  # the default place, beside the store
        write_view(out, ws, ids, None)
    captured = capfd.readouterr()
    (out / "captured.txt").write_text(captured.out + captured.err)

    # the provider really was handed every key, and echoed it
    assert {keys["keyed"], keys["d1"], keys["d2"], keys["judge"]} <= set(RECEIVED)
    needles = _needles(keys)
    folders = {work, store.parent}
    hits = [h for f in folders for h in _scan_bytes(f, needles)]
    hits += _scan_duckdb(cfg.workspace, needles)
    hits += [h for p in sorted(out.glob("*.parquet")) for h in _scan_parquet(p, needles)]
    assert not hits, hits

    # ... and `***` stands where each key was
    with duckdb.connect(str(cfg.workspace), read_only=True) as con:
        runs = con.execute(
            "SELECT model, condition, status, answer, error, tool_calls FROM runs"
            " WHERE batch = 'scan'"
        ).fetchall()
        scores = con.execute(
            "SELECT r.model, s.status, s.detail FROM scores s JOIN runs r ON r.id = s.run_id"
            " WHERE r.batch = 'scan'"
        ).fetchall()
    assert len(runs) == 16
    for model, cond, status, answer, error, tools in runs:
        if (model, cond) == ("keyed", "no_rag"):
            assert status == "error" and "bad key *** refused" in error
            continue
        assert status == "completed", error
        assert answer.startswith(f"Answer of model={model} ")
        assert answer.endswith("key=*** b64=*** other=*** end."), answer
        if (model, cond) == ("keyed", "tool_use"):
            assert json.loads(tools)[0]["arguments"]["note"] == "***"
    dep_keys = {k for k in RECEIVED if k in (keys["d1"], keys["d2"])}
    assert dep_keys, "the pooled model went through its deployments"
    details = [(m, s, json.loads(d)) for m, s, d in scores]
    ok = [d for m, s, d in details if m == "keyed" and s == "ok"]
    assert ok and all(
        d["justifications"]["accuracy"] == "fine, judged with ***" and "***" in d["metrics_used"]
        for d in ok
    )
    failed = [d for m, s, d in details if m == "pooled"]
    assert any("judge key *** over quota" in (d.get("error") or "") for d in failed)
    assert any("no JSON here, only ***" in d["raw_outputs"] for d in failed)
    assert "***" in (out / "case-all.md").read_text()
    assert "key=***" in (out / "runs.jsonl").read_text()
