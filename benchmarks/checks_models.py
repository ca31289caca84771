"""The model paths of `make bench-checks --llm N`: on N FinanceBench answers people called
correct or incorrect (judging/calibration.sample), side by side — the answer checks' rules alone,
the offline verdict an analyst sees by default (the rules, then the local model's extraction of
the answer's conclusion where they defer) and the LLM judge (accuracy 4 or 5 read as correct).
Agreement counts an undecided answer as a miss; κ is over the answers each path decided. The
judge's measurement is saved to the configured workspace, as `fintrade-tui calibrate-judge`
saves it, so the explorer shows it beside the judge's scores."""

from __future__ import annotations

from pathlib import Path

from benchmarks import harness


def model_paths(bundle: Path, n: int, model: str | None, config: str | None) -> None:
    from benchmarks.people_verdicts import question
    from fintrade_tui.config import load_config
    from fintrade_tui.judging.calibration import (
        DEFAULT_SET,
        agreement,
        load,
        measure_judge,
        offline_verdicts,
        sample,
    )
    from fintrade_tui.judging.rescore import label_of
    from fintrade_tui.scoring.answer_checks import check_match
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.judge_agreement import AgreementStore

    cfg = load_config(config, bundle)
    items = sample(load(bundle / DEFAULT_SET), n)
    people = [i.person == "correct" for i in items]

    def tick(i: int, total: int, line: str) -> None:
        harness.log(f"[{i}/{total}] {line}")

    rules = [
        label_of(check_match(question({"question_id": i.id, "question": i.question,
                                       "reference": i.reference}), i.answer).verdict)
        for i in items
    ]  # fmt: skip
    offline, how = offline_verdicts(cfg, items, model, tick)
    judged = measure_judge(cfg, items, model, "FinanceBench", tick)
    with open_workspace(cfg.workspace) as ws:
        AgreementStore(ws).save(judged)
    rows = []
    for name, said, secs in (
        ("rules alone", rules, None),
        (f"rules, then extraction ({how['model']}, {how['extracted']} answers)", offline,
         how["seconds_per_extraction"]),
    ):  # fmt: skip
        s = agreement([None if v is None else v == "correct" for v in said], people)
        rows.append(_row(name, s, secs))
    rows.append(_row(f"LLM judge ({judged.judge_model}), accuracy ≥ 4", judged.detail,
                     judged.seconds_per_answer))  # fmt: skip
    cols = ["path", "answers", "decided", "agreement", "agreement (decided)", "κ", "s / answer"]
    harness.report(f"Verdicts vs FinanceBench's people on {len(items)} answers (correct or "
                   "incorrect, every k-th)", cols, rows)  # fmt: skip


def _row(name: str, s: dict, secs: float | None) -> list[object]:
    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    return [name, s["n"], s["decided"], f(s["agreement"]), f(s["agreement_decided"]),
            f(s["kappa"]), "—" if secs is None else f"{secs:.1f}"]  # fmt: skip
