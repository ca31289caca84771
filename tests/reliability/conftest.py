"""The SIGKILL tests' starting point (tests/reliability/test_kills_*.py): `base`, the bundle and
its store, a question file, the workspace after `questions import` and after a complete `run`, a
big question file and a big run file to import. Built once per test process (a session fixture
here, not a module one), so both kill modules start from the same build."""

from __future__ import annotations

import json

import pytest

from tests.reliability.kill_cases import (
    N_IMPORTED,
    N_QUESTIONS,
    QUARTERS,
    RUN_ARGS,
    cli_ok,
    copy_workspace,
    kill_bundle,
    kill_config,
    run_ok,
)


@pytest.fixture(scope="session")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Built once: the bundle and its store, a question file, the workspace after `questions
    import` and after a complete `run`, a big question file and a big run file to import."""
    root = tmp_path_factory.mktemp("kills")
    bundle = kill_bundle(root, QUARTERS)
    cfg = kill_config(root / "base", bundle, root / "base" / "store.duckdb")
    run_ok(["--config", str(cfg), "ingest", "--json"])
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
    cli_ok(["--config", str(cfg), "questions", "import", str(questions), "--json"])
    copy_workspace(root / "base" / "ws.duckdb", root / "ws-questions.duckdb")
    # the complete run the judge tests start from: no kill in it, so its config (rewritten)
    # answers without a delay
    cfg = kill_config(root / "base", bundle, root / "base" / "store.duckdb", delay=0)
    cli_ok(["--config", str(cfg), *RUN_ARGS])
    copy_workspace(root / "base" / "ws.duckdb", root / "ws-runs.duckdb")
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
