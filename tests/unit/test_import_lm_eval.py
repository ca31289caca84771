"""lm-evaluation-harness reader against files the real lm_eval 0.4.13 wrote (make_fixtures.sh)
and hand-made nasty ones. Expectations come from the files themselves, read here with json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.imports import lm_eval

DATA = Path(__file__).resolve().parents[1] / "data" / "external" / "lm_eval"
RESULTS = next(DATA.glob("results_*.json"))
GEN = next(DATA.glob("samples_fintrade_fin_gen_*.jsonl"))
MC = next(DATA.glob("samples_fintrade_fin_mc_*.jsonl"))


def rows(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln]


def head(path: Path) -> bytes:
    return path.read_bytes()[: lm_eval.HEAD]


def verdicts(run) -> list[tuple[str, str | None, object]]:
    return [(j.annotator, j.label, j.value) for j in run.judgments]


def test_sniff_tells_lm_eval_files_from_others(tmp_path: Path) -> None:
    for path in (GEN, MC, RESULTS, DATA / "nasty_old_format.jsonl"):
        assert lm_eval.sniff(path, head(path)), path
    for name in ("nasty_not_lm_eval.jsonl", "nasty_not_lm_eval.json", "make_fixtures.sh"):
        assert not lm_eval.sniff(DATA / name, head(DATA / name)), name
    # a first line longer than the head (a long filing in the doc) is judged by its start
    big = json.dumps({"doc_id": 0, "doc": {"question": "x" * 100_000}, "resps": [["a"]]})
    assert lm_eval.sniff(tmp_path / "s.jsonl", big.encode()[: lm_eval.HEAD])
    assert not lm_eval.sniff(tmp_path / "s.jsonl", b'{"id": 0, "doc": "' + b"x" * lm_eval.HEAD)
    # a results file longer than the head: its first key and lm-eval's own keys decide
    pad = ', "pad": "' + "y" * 70_000 + '"'
    res = RESULTS.read_text(encoding="utf-8").replace(
        '"group_subtasks": {}', '"group_subtasks": {}' + pad
    )
    assert res.startswith('{\n  "results": {') and len(res) > lm_eval.HEAD
    assert lm_eval.sniff(tmp_path / "r.json", res.encode()[: lm_eval.HEAD])
    other = json.dumps({"results": {"accuracy": 0.8}, "pad": "y" * 70_000}).encode()
    assert not lm_eval.sniff(tmp_path / "r.json", other[: lm_eval.HEAD])


def test_generate_until_samples() -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    expected = rows(GEN)
    runs = list(lm_eval.read(GEN))
    assert len(runs) == len(expected) == 10  # 5 docs x 2 filters
    for n, (run, row) in enumerate(zip(runs, expected, strict=True), start=1):
        doc = row["doc"]
        assert run.locator == f"line {n}"
        assert run.model == results["config"]["model"] == "dummy"
        assert run.benchmark == "fintrade_fin_gen"
        assert run.question_id == doc["question_id"]
        assert run.question == doc["question"]  # doc_to_text: question
        assert run.answer == row["filtered_resps"][0]
        assert run.reference_answer == row["target"]
        assert run.prompt == row["arguments"]["gen_args_0"]["arg_0"]
        assert (run.condition_label, run.ticker, run.category) == (
            doc["condition"],
            doc["ticker"],
            doc["category"],
        )
        assert run.as_of == doc["as_of"].split(" ")[0]  # datasets made "2024-11-01" a timestamp
        assert verdicts(run) == [("lm-eval:exact_match", "incorrect", row["exact_match"])]
        assert run.variant == (None if row["filter"] == "none" else row["filter"])
        assert run.extra["filter"] == row["filter"]
        assert run.extra["doc_id"] == row["doc_id"]
        assert run.extra["doc_hash"] == row["doc_hash"]
        assert run.extra["prompt_hash"] == row["prompt_hash"]
        assert run.extra["target_hash"] == row["target_hash"]
        assert run.extra["lm_eval_version"] == results["lm_eval_version"]
        assert run.extra["task_config"]["doc_to_text"] == "question"
        assert "warnings" not in run.extra
        if row["filter"] != "none":  # the regex filter found no number in what the model said
            assert run.extra["raw_response"] == row["resps"][0][0] != run.answer


def test_multiple_choice_samples_pick_the_likeliest_choice() -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    runs = list(lm_eval.read(MC))
    expected = rows(MC)
    assert len(runs) == len(expected) == 5
    for run, row in zip(runs, expected, strict=True):
        lls = [float(pair[0]) for pair in row["filtered_resps"]]
        pick = lls.index(max(lls))
        choices = row["doc"]["choices"]
        assert run.answer == choices[pick]
        assert run.reference_answer == choices[int(row["target"])]
        assert run.prompt == row["arguments"]["gen_args_0"]["arg_0"]
        assert run.question == row["doc"]["question"]  # doc_to_text is a template here
        assert run.extra["choice_index"] == pick
        assert run.extra["target"] == row["target"]
        label = "correct" if row["acc"] == 1.0 else "incorrect"
        assert verdicts(run) == [
            ("lm-eval:acc", label, row["acc"]),
            (
                "lm-eval:acc_norm",
                "correct" if row["acc_norm"] == 1.0 else "incorrect",
                1.0 * row["acc_norm"],
            ),
        ]
        assert (pick == int(row["target"])) == (row["acc"] == 1.0)
    correct = sum(run.judgments[0].label == "correct" for run in runs)
    assert correct / len(runs) == results["results"]["fintrade_fin_mc"]["acc,none"]


def test_results_file_imports_every_samples_file_it_names() -> None:
    runs = list(lm_eval.read(RESULTS))
    configs = json.loads(RESULTS.read_text(encoding="utf-8"))["configs"]
    assert {r.benchmark for r in runs} == set(configs)
    assert len(runs) == len(rows(GEN)) + len(rows(MC))
    # the loader names the results file, so each locator names its samples file
    assert runs[0].locator in (f"{GEN.name} line 1", f"{MC.name} line 1")
    assert len({r.locator for r in runs}) == len(runs)
    assert [r.answer for r in runs if r.benchmark == "fintrade_fin_mc"] == [
        r.answer for r in lm_eval.read(MC)
    ]


def test_samples_without_results_still_import(tmp_path: Path) -> None:
    copy = tmp_path / MC.name
    shutil.copy(MC, copy)
    runs = list(lm_eval.read(copy))
    assert {r.model for r in runs} == {"unknown"}
    assert all("no results_*.json" in r.extra["warnings"][0] for r in runs)
    # without the task config the choices come from the scored continuations, same answers
    assert [r.answer for r in runs] == [r.answer for r in lm_eval.read(MC)]
    assert {r.extra["output_type"] for r in runs} == {"multiple_choice"}


def test_results_of_another_run_are_used_with_a_warning(tmp_path: Path) -> None:
    shutil.copy(RESULTS, tmp_path / RESULTS.name)
    other = tmp_path / "samples_fintrade_fin_gen_2027-01-01T00-00-00.000000.jsonl"
    shutil.copy(GEN, other)
    run = next(lm_eval.read(other))
    assert run.model == "dummy"
    assert f"results taken from {RESULTS.name}" in run.extra["warnings"][0]


@pytest.mark.parametrize(
    ("model_args", "model"),
    [
        ("pretrained=EleutherAI/pythia-160m,dtype=float32", "EleutherAI/pythia-160m"),
        ({"model": "gpt-4o-mini", "base_url": "http://localhost"}, "gpt-4o-mini"),
        ({"pretrained": "base", "peft": "org/fin-lora"}, "org/fin-lora"),
    ],
)
def test_model_comes_from_model_args(tmp_path: Path, model_args: object, model: str) -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    results["config"]["model_args"] = model_args
    (tmp_path / RESULTS.name).write_text(json.dumps(results), encoding="utf-8")
    shutil.copy(GEN, tmp_path / GEN.name)
    assert next(lm_eval.read(tmp_path / GEN.name)).model == model


def test_number_answer_and_metric_values() -> None:
    (run,) = lm_eval.read(DATA / "nasty_number_answer.jsonl")
    assert run.answer == "14.74"
    assert verdicts(run) == [
        ("lm-eval:exact_match", "correct", True),
        ("lm-eval:half_credit", "partial", 0.5),
        ("lm-eval:f1", None, 0.73),
    ]


def test_non_utf8_bytes_are_replaced_and_noted() -> None:
    (run,) = lm_eval.read(DATA / "nasty_non_utf8.jsonl")
    assert run.answer == "14,74 Mrd \u20ac \ufffd 0,1"
    assert any("non-UTF-8" in w for w in run.extra["warnings"])


def test_unknown_condition_is_kept_verbatim() -> None:
    (run,) = lm_eval.read(DATA / "nasty_unknown_condition.jsonl")
    assert run.condition_label == "moon_phase_rag"
    assert run.judgments[0].label == "correct"


def test_old_format_list_arguments_and_no_metrics_key() -> None:
    (run,) = lm_eval.read(DATA / "nasty_old_format.jsonl")
    assert run.question_id == "4711"  # doc.id
    assert run.question == "Q: What was AMZN's AWS operating income in Q3 2024?"  # doc.query
    assert run.prompt == "Q: What was AMZN's AWS operating income in Q3 2024?\nA:"
    assert run.answer == "$10.4 billion"
    assert verdicts(run) == [("lm-eval:exact_match", "correct", 1.0)]
    assert run.variant is None and run.benchmark == "nasty_old_format"


def test_question_id_falls_back_to_task_and_doc_id(tmp_path: Path) -> None:
    row = rows(GEN)[0]
    del row["doc"]["question_id"]
    path = tmp_path / "samples_fin_x_2026-01-01T00-00-00.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert next(lm_eval.read(path)).question_id == f"fin_x-{row['doc_id']}"


@pytest.mark.parametrize(
    ("name", "position", "words"),
    [
        ("nasty_missing_doc.jsonl", "line 2", 'no "doc"'),
        ("nasty_missing_resps.jsonl", "line 2", "no resps"),
        ("nasty_duplicate.jsonl", "line 3", "already came on line 1"),
        ("nasty_truncated.jsonl", "line 3", "not valid JSON"),
        ("nasty_not_lm_eval.jsonl", "line 1", 'no "doc_id"'),
    ],
)
def test_bad_samples_name_file_and_line(name: str, position: str, words: str) -> None:
    path = DATA / name
    with pytest.raises(UserError) as err:
        list(lm_eval.read(path))
    assert str(err.value).startswith(f"{path} {position}: ")
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_truncated_file_yields_whole_lines_first() -> None:
    runs = lm_eval.read(DATA / "nasty_truncated.jsonl")
    assert [next(runs).question_id, next(runs).question_id] == [
        "fin-aapl-q4-2024-ni",
        "fin-msft-q1-2025-rev",
    ]
    with pytest.raises(UserError):
        next(runs)


def test_bad_results_files(tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        list(lm_eval.read(DATA / "nasty_not_lm_eval.json"))
    assert str(err.value).startswith(f"{DATA / 'nasty_not_lm_eval.json'}: ")
    assert "no samples file" in str(err.value)
    cut = tmp_path / RESULTS.name
    cut.write_bytes(RESULTS.read_bytes()[:900])
    with pytest.raises(UserError) as err:
        list(lm_eval.read(cut))
    assert str(err.value).startswith(f"{cut}: is not valid JSON")
    empty = tmp_path / "samples_t_2026.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match="holds no samples"):
        list(lm_eval.read(empty))
