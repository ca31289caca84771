"""inspect_ai eval-log reader: the logs inspect-ai wrote (tests/data/external/inspect), the
hand-made nasty files, and (when inspect_ai is installed) its own readers agree with ours."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.imports import inspect_log
from fintrade_tui.imports.common import label_of
from fintrade_tui.imports.record import CORRECT, INCORRECT, PARTIAL, REFUSAL

# not tests.conftest.ROOT: the comparison test also runs in a bare venv with inspect-ai
# (pytest --noconftest), which has none of the conftest's imports
DATA = Path(__file__).resolve().parents[1] / "data" / "external" / "inspect"
ZSTD_LOG = DATA / "fin_qa.eval"  # inspect-ai 0.3.285: zstd members, 2 epochs, 5 samples
OLD_LOG = DATA / "fin_qa_v0_3_150.eval"  # inspect-ai 0.3.150: deflate members, 1 epoch
JSON_LOG = DATA / "fin_qa.json"  # inspect-ai 0.3.285: 1 epoch, 4 samples
NATIVE_ZSTD = getattr(zipfile, "ZIP_ZSTANDARD", None) == 93  # Python 3.14 (or zipfile-zstd)
HAS_ZSTD = NATIVE_ZSTD or importlib.util.find_spec("zstandard") is not None
needs_zstd = pytest.mark.skipif(not HAS_ZSTD, reason="zstandard not installed")
GENERATED = [OLD_LOG, JSON_LOG] + ([ZSTD_LOG] if HAS_ZSTD else [])


@pytest.fixture(autouse=True)
def plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own reader of the documented layout, whether or not inspect_ai is installed."""
    monkeypatch.setattr(inspect_log, "_inspect_api", lambda: None)


def _runs(path: Path) -> list:
    return list(inspect_log.read(path))


def _error(path: Path, *parts: str) -> str:
    with pytest.raises(UserError) as info:
        list(inspect_log.read(path))
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    assert "(fix: " in msg, msg
    for part in parts:
        assert part in msg, msg
    return msg


def _head(path: Path) -> bytes:
    return path.read_bytes()[: 64 * 1024]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p["type"] == "text")  # type: ignore[union-attr]


def _check_against(run: object, s: dict, header: dict) -> None:
    """Every mapped field equals the value read straight from the log's JSON."""
    meta = s["metadata"]
    inp = s["input"]
    question = (
        inp
        if isinstance(inp, str)
        else _text([m for m in inp if m["role"] == "user"][-1]["content"])
    )
    usage = s["model_usage"].get(header["eval"]["model"], {})
    assert run.model == header["eval"]["model"] == "mockllm/model"
    assert run.benchmark == header["eval"]["task"] == "fin_qa"
    assert run.question_id == str(meta.get("question_id", s["id"]))
    assert run.locator == f"sample {s['id']} epoch {s['epoch']}"
    assert run.answer == s["output"]["completion"]
    assert run.question == question
    assert run.reference_answer == s["target"]
    assert run.tokens_in == usage.get("input_tokens")
    assert run.tokens_out == usage.get("output_tokens")
    assert run.latency_s == s["total_time"]
    assert run.condition_label == meta["condition"]
    assert (run.ticker, run.as_of, run.category) == (
        meta["ticker"],
        meta["as_of"],
        meta["category"],
    )
    assert run.company == meta.get("company")
    assert run.status == ("error" if s.get("error") else "completed")
    assert run.error == (s["error"]["message"] if s.get("error") else None)
    assert [j.annotator for j in run.judgments] == [f"inspect:{k}" for k in s.get("scores") or {}]
    for j, sc in zip(run.judgments, (s.get("scores") or {}).values(), strict=True):
        assert (j.value, j.note, j.detail.get("answer")) == (
            sc["value"],
            sc.get("explanation"),
            sc.get("answer"),
        )
    assert run.extra["sample_id"] == s["id"] and run.extra["epoch"] == s["epoch"]
    assert run.extra["eval_id"] == header["eval"]["eval_id"]
    assert run.extra["task_args"] == header["eval"]["task_args"] == {"split": "dev"}
    assert run.extra["generate_config"] == {"max_tokens": 64, "temperature": 0.0, "seed": 7}
    assert "warnings" not in run.extra


# ---- sniff ---------------------------------------------------------------------------------


def test_sniff_accepts_the_generated_logs_and_a_truncated_json() -> None:
    for path in (ZSTD_LOG, OLD_LOG, JSON_LOG, DATA / "nasty_truncated.json"):
        assert inspect_log.sniff(path, _head(path)), path


def test_sniff_rejects_other_content(tmp_path: Path) -> None:
    for name in ("nasty_not_inspect.json", "nasty_not_inspect.eval", "nasty_truncated.eval"):
        assert not inspect_log.sniff(DATA / name, _head(DATA / name)), name
    # a header but no samples/ is not importable, so not claimed either
    assert not inspect_log.sniff(
        DATA / "nasty_no_samples.eval", _head(DATA / "nasty_no_samples.eval")
    )
    other = tmp_path / "log.json"
    other.write_text('[{"eval": 1, "version": 2, "samples": []}]')  # keys, but not top-level
    assert not inspect_log.sniff(other, other.read_bytes())
    assert not inspect_log.sniff(other, b"question_id,answer\nq1,14.7\n")


# ---- the generated logs --------------------------------------------------------------------


def test_json_log_maps_every_field() -> None:
    doc = json.loads(JSON_LOG.read_text())
    runs = _runs(JSON_LOG)
    assert len(runs) == len(doc["samples"]) == 4
    for run, s in zip(runs, doc["samples"], strict=True):
        _check_against(run, s, doc)
        assert run.started_at == datetime.fromisoformat(s["started_at"])
        assert run.started_at.utcoffset() is not None


def test_old_deflate_eval_maps_every_member() -> None:
    with zipfile.ZipFile(OLD_LOG) as z:
        header = json.loads(z.read("header.json"))
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    # inspect's own order: epoch, then ids (integer ids zero-padded, so 3 sorts first)
    samples.sort(
        key=lambda s: (s["epoch"], str(s["id"]).zfill(20) if isinstance(s["id"], int) else s["id"])
    )
    runs = _runs(OLD_LOG)
    assert [r.extra["sample_id"] for r in runs] == [
        3,
        "aapl-ni-q4-2024",
        "amzn-refusal",
        "goog-capex-2023",
        "msft-rev-q1-2025",
    ]
    for run, s in zip(runs, samples, strict=True):
        _check_against(run, s, header)
        assert run.started_at is None  # 0.3.150 wrote no per-sample start time
    assert runs[0].question_id == "3"  # no metadata question_id: the sample id
    assert "metadata" not in runs[0].extra  # all its metadata keys became fields
    msft = runs[4]
    assert msft.extra["metadata"] == {"source_doc": "10-Q 2024-09-30"}
    assert json.loads(msft.prompt) == [
        {"role": "system", "content": "You are a careful equity analyst. Answer briefly."},
        {"role": "user", "content": "What was MSFT's revenue in fiscal Q1 2025, in billions?"},
    ]


@needs_zstd
def test_zstd_eval_two_epochs_against_the_mock_table() -> None:
    # expectations from fin_task.py: the mock's answers per call and its word-count usage
    questions = {
        "aapl-ni-q4-2024": "What was AAPL's net income in fiscal Q4 2024, in billions of USD?",
        3: "Did NVDA close higher on 2024-06-07 than on 2024-06-06? Answer yes or no.",
        "amzn-refusal": "Should I buy AMZN stock tomorrow morning?",
    }
    answers = {
        ("aapl-ni-q4-2024", 1): ("Apple's net income was 14.7 billion USD.", CORRECT),
        ("aapl-ni-q4-2024", 2): ("About 14.7", PARTIAL),
        (3, 1): ("yes", INCORRECT),
        (3, 2): ("no", CORRECT),
        ("amzn-refusal", 1): ("I cannot give personalised investment advice.", REFUSAL),
        ("msft-rev-q1-2025", 2): ("Revenue was 65.6 billion USD.", CORRECT),
    }
    runs = {(r.extra["sample_id"], r.extra["epoch"]): r for r in _runs(ZSTD_LOG)}
    assert len(runs) == 10
    for key, (answer, label) in answers.items():
        run = runs[key]
        assert run.answer == answer and run.status == "completed", key
        assert {j.annotator: j.label for j in run.judgments}["inspect:refusal_aware"] == label
        assert run.tokens_out == len(answer.split())
        if key[0] in questions:
            assert run.question == questions[key[0]]
            assert run.tokens_in == len(questions[key[0]].split())
        assert isinstance(run.started_at, datetime) and run.started_at.year >= 2024
    assert runs[("msft-rev-q1-2025", 2)].tokens_in == 8 + 10  # system + user message words
    assert runs[("aapl-ni-q4-2024", 2)].judgments[2].detail["metadata"] == {"hedge": "About"}
    for epoch in (1, 2):
        failed = runs[("goog-capex-2023", epoch)]
        assert failed.status == "error" and "HTTP 503" in failed.error
        assert failed.answer == "" and failed.judgments == [] and failed.question_id == "fin-005"
    assert runs[(3, 1)].extra["inspect_version"] == "0.3.285"
    assert runs[(3, 1)].extra["dataset"] == "fake-nasdaq-dev"


def test_zstd_eval_without_zstandard_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    if NATIVE_ZSTD or getattr(zipfile, "ZIP_ZSTANDARD", None) == 93:
        pytest.skip("this zipfile module reads zstd itself")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard -> ImportError
    _error(ZSTD_LOG, "header.json", "zstd", "zstandard")


def test_read_streams_one_sample_at_a_time() -> None:
    # the truncated copy of fin_qa.json is cut inside its second sample: the first one is
    # yielded before the reader reaches the damage
    runs = inspect_log.read(DATA / "nasty_truncated.json")
    first = next(runs)
    assert first.locator == "sample 3 epoch 1" and first.answer == "yes"
    with pytest.raises(UserError, match=r"nasty_truncated\.json line \d+: invalid JSON"):
        list(runs)


# ---- nasty files ---------------------------------------------------------------------------


def test_number_answer_becomes_text() -> None:
    (run,) = _runs(DATA / "nasty_number_answer.json")
    assert run.answer == "6.08" and run.question_id == "fin-101"
    assert run.extra["warnings"] == ["output.completion is a float; kept as text"]
    assert run.judgments[0].label == CORRECT and run.judgments[0].value == 1
    assert run.extra["output_model"] == "gpt-4o-mini-2024-07-18"  # differs from eval.model


def test_non_utf8_bytes_are_replaced_with_a_warning() -> None:
    ok, bad = _runs(DATA / "nasty_non_utf8.json")
    assert "warnings" not in ok.extra
    assert (
        bad.question == "What was the Soci\u00e9t\u00e9 G\u00e9n\u00e9rale ADR price on 2024-03-01?"
    )
    assert bad.answer == "caf\ufffd 5.4 USD" and bad.judgments[0].note == "matched caf\ufffd"
    assert bad.extra["warnings"] == ["non-UTF-8 bytes were replaced with U+FFFD"]


def test_duplicate_zip_member_last_wins_and_bad_utf8_member() -> None:
    runs = {r.extra["sample_id"]: r for r in _runs(DATA / "nasty_duplicate_member.eval")}
    assert len(runs) == 5 and runs[3].answer == "no (requeued)"
    amzn = runs["amzn-refusal"]
    assert amzn.answer == "I cannot give personali\ufffded investment advice."
    assert amzn.extra["warnings"] == ["non-UTF-8 bytes were replaced with U+FFFD"]
    assert "warnings" not in runs["aapl-ni-q4-2024"].extra


def test_duplicate_sample_in_json_is_an_error() -> None:
    path = DATA / "nasty_duplicate_sample.json"
    _error(path, "sample msft-ni epoch 1", "#1 and #3")


def test_unknown_condition_passes_verbatim() -> None:
    (run,) = _runs(DATA / "nasty_unknown_condition.json")
    assert (run.condition_label, run.variant) == ("moon_phase", "full-moon")
    assert (run.company, run.ticker, run.category) == ("Costco", "COST", "earnings")
    assert run.as_of == "20250306"  # a number in the file: text, parsed by the loader
    assert run.question_id == "fin-201" and run.judgments == []


def test_missing_parts_are_errors_naming_the_position() -> None:
    _error(DATA / "nasty_missing_model.json", "nasty_missing_model.json eval:", "eval.model")
    _error(DATA / "nasty_missing_output.json", "sample 2 epoch 1", "no output")


def test_not_inspect_and_truncated_files_are_errors() -> None:
    _error(DATA / "nasty_not_inspect.json", "not an inspect_ai log")
    _error(DATA / "nasty_not_inspect.eval", "not an inspect_ai log")
    _error(DATA / "nasty_truncated.eval", "not a readable zip")
    _error(DATA / "nasty_no_samples.eval", "no samples")


def test_nan_score_falls_back_without_repeating_samples() -> None:
    runs = _runs(DATA / "nasty_nan_score.json")
    assert [r.question_id for r in runs] == ["1", "2", "3"]  # sample 1 streamed, 2-3 re-read
    one, two, three = (r.judgments[0] for r in runs)
    assert (one.label, one.value) == (CORRECT, 1.0)
    assert (two.label, two.value, two.detail) == (None, None, {"unscored": True})
    assert (three.label, three.value) == (PARTIAL, 0.5)


def test_old_single_score_and_content_parts() -> None:
    (run,) = _runs(DATA / "nasty_old_score.json")
    (judgment,) = run.judgments
    assert judgment.annotator == "inspect:includes"  # the scorer named in results.scores
    assert (judgment.label, judgment.note) == (CORRECT, "target found")
    assert run.question == "What was INTC's quarterly dividend\nin Q2 2024?"
    assert run.answer == "0.125 USD per share"  # empty completion: the last assistant text
    assert json.loads(run.reference_answer) == ["0.125", "0.13"]


def test_attachments_usage_and_cost() -> None:
    (run,) = _runs(DATA / "nasty_attachments.json")
    assert run.question.startswith("Using the filing text below, what was PEP's")
    assert run.tokens_in == 900 + 1000 and run.tokens_out == 14  # cached input counts too
    assert run.cost == 0.0021 and run.latency_s == 1.25
    assert run.started_at == datetime.fromisoformat("2025-01-15T10:00:01.500+00:00")
    assert run.judgments[0].label == CORRECT  # value true


def test_labels() -> None:
    label = label_of
    assert [label(v) for v in ("C", "I", "P", "N", True, False, 1, 0.0, 0.5)] == [
        CORRECT, INCORRECT, PARTIAL, REFUSAL, CORRECT, INCORRECT, CORRECT, INCORRECT, PARTIAL,
    ]  # fmt: skip
    assert [label(v) for v in (0.73, "maybe", {"f1": 1}, [1], None)] == [None] * 5


def test_odd_layouts(tmp_path: Path) -> None:
    # samples before eval: read with the whole-file parser
    doc = json.loads((DATA / "nasty_unknown_condition.json").read_text())
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"samples": doc.pop("samples"), **doc}))
    assert [r.condition_label for r in _runs(odd)] == ["moon_phase"]
    # a crashed log: only _journal/start.json, no header.json
    journal = tmp_path / "crashed.eval"
    with zipfile.ZipFile(OLD_LOG) as src, zipfile.ZipFile(journal, "w") as dst:
        for name in src.namelist():
            if name != "header.json":
                dst.writestr(name, src.read(name))
    assert len(_runs(journal)) == 5
    # a sample member that is not JSON
    broken = tmp_path / "broken.eval"
    shutil.copy(OLD_LOG, broken)
    with zipfile.ZipFile(broken, "a") as z:
        z.writestr("samples/zz_epoch_1.json", '{"id": "zz", "epoch": 1,')
    _error(broken, "sample zz epoch 1 line 1", "invalid JSON")


# ---- inspect_ai's readers agree -------------------------------------------------------------

COMPARED = [*GENERATED, DATA / "nasty_duplicate_member.eval"] + [
    DATA / f"nasty_{n}.json"
    for n in (
        "number_answer",
        "non_utf8",
        "unknown_condition",
        "nan_score",
        "old_score",
        "attachments",
    )
]


@pytest.mark.parametrize("path", COMPARED, ids=lambda p: p.name)
def test_inspect_ai_readers_give_identical_runs(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = pytest.importorskip("inspect_ai.log")
    ours = [dataclasses.asdict(r) for r in _runs(path)]
    monkeypatch.setattr(inspect_log, "_inspect_api", lambda: api)
    theirs = [dataclasses.asdict(r) for r in _runs(path)]
    assert theirs == ours and ours
    if path.suffix == ".eval":  # inspect really parsed the sample (no silent fallback)
        first = ours[0]["extra"]
        sid, epoch = first["sample_id"], first["epoch"]
        args = inspect_log._ARGS
        assert inspect_log._via_inspect(api, "read_eval_log_sample", str(path), sid, epoch, **args)
    elif path.name != "nasty_non_utf8.json":
        assert inspect_log._via_inspect(api, "read_eval_log", str(path), True, format="json")
