"""The Arena's view-model (`ui/arena_model.py`, no Textual): condition toggling and cycling,
blind letters and order, pane labels, status lines, evidence rows, judge/human disagreements;
and that it (with the faults' text, `ui/faults.py`) imports without Textual."""

from __future__ import annotations

import subprocess
import sys

from fintrade_tui.ui import arena_model as core

CONDITIONS = ["no_rag", "indicator_rag", "oracle"]


def test_core_helpers() -> None:
    assert core.toggle(["oracle", "no_rag"], "tool_use") == ["no_rag", "tool_use", "oracle"]
    assert core.toggle(["no_rag", "tool_use"], "tool_use") == ["no_rag"]
    assert core.cycle(core.LEVELS, "L6") == "L1" and core.cycle(["a", "b"], "zz") == "a"
    assert [core.letter(i) for i in (0, 2, 26)] == ["A", "C", "A2"]
    order = core.blind_order(CONDITIONS, "s|q")
    assert sorted(order) == sorted(CONDITIONS) and order == core.blind_order(CONDITIONS, "s|q")
    assert core.pane_label("oracle", True, False, 1) == "B"
    assert core.pane_label("oracle", True, True, 1) == "B = Oracle"
    line = core.status_line("completed", 0.5, 12.34, 3.21)
    assert line == "completed · ttft 0.50 s · 12.3 tok/s · 3.2 s"
    assert core.status_line("error", 0.5, None, 1.0, "boom", hide_timings=True) == "error — boom"
    ev = {
        "items": [
            {
                "id": "c1",
                "track": "filing",
                "title": "AAPL 10-K",
                "available_from": "2024-11-01",
                "meta": {"scores": {"rrf": 0.0312}, "parent_text": "the parent"},
            },
            {"id": "tool:1:get_signal", "track": "tool", "title": "get_signal", "meta": {}},
        ],
        "notes": ["n1"],
    }
    calls = [{"n": 1, "name": "get_signal", "arguments": {"ticker": "AAPL"}, "result": {"v": 1}}]
    rows = core.evidence_rows(ev, calls)
    assert [r.kind for r in rows] == ["item", "tool", "note"]
    assert rows[0].line == "[filing]  AAPL 10-K  2024-11-01  rrf 0.031"
    assert rows[0].body == "the parent"
    assert rows[1].line.startswith('[call 1] get_signal({"ticker": "AAPL"}) -> {"v": 1}')
    assert core.disagreements({"accuracy": 5, "clarity": 3}, {"accuracy": 3, "clarity": 2}, 2) == {
        "accuracy": (5, 3)
    }


def test_the_view_model_imports_without_textual() -> None:
    """It moved out of the runs core into the UI layer, still free of Textual: a fresh
    interpreter importing it (and the faults' text) loads no Textual module."""
    code = (
        "import sys, fintrade_tui.ui.arena_model, fintrade_tui.ui.faults;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    import importlib.util

    assert importlib.util.find_spec("fintrade_tui.runs.arena_core") is None  # not in the core
