"""Import rules between rooms (docs/architecture.md draws them): every import of one room by
another — lazy ones inside functions and TYPE_CHECKING ones included — must be an allowed
arrow. The ground floor and the record rooms reach up into nothing; models knows neither runs
nor judging; only the UI shell imports Textual. A test of the test plants each kind of
forbidden import and expects it named."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.conftest import ROOT

# fintrade_tui/<name>.py
GROUND = {"errors", "config", "config_files", "redact", "safe_text", "clock", "kill_points"}
SHELL = {"cli", "ui", "screens", "__main__"}  # the top: may import any room
# room -> the rooms it may import (besides itself and the ground floor)
ALLOWED: dict[str, set[str]] = {
    "signals": set(),
    "fundamentals": set(),
    "store": {"signals", "fundamentals"},
    "workspace": set(),
    "models": set(),
    "stats": {"workspace"},
    "imports": {"workspace"},
    "questions": {"signals", "fundamentals", "store", "workspace"},
    "retrieval": {"signals", "fundamentals", "store", "workspace", "questions"},
    "ingest": {"signals", "fundamentals", "store", "workspace", "questions", "retrieval"},
    "runs": {"signals", "fundamentals", "store", "workspace", "questions", "retrieval", "models"},
    "scoring": set(),
    "audits": {"signals", "fundamentals", "store", "workspace", "questions", "scoring"},
    "judging": {
        *("signals", "fundamentals", "store", "workspace", "questions", "retrieval", "models"),
        *("runs", "stats", "scoring", "audits"),
    },
    "reports": {
        *("signals", "fundamentals", "store", "workspace", "questions", "retrieval", "models"),
        *("runs", "stats", "scoring", "audits", "judging"),
    },
    "application": {
        *("signals", "fundamentals", "store", "workspace", "questions", "retrieval", "models"),
        *("runs", "ingest", "imports"),
    },
    "exports": {
        *("signals", "fundamentals", "store", "workspace", "questions", "retrieval", "models"),
        *("runs", "stats", "scoring", "audits", "judging", "reports", "ingest"),
    },
}
UI_ONLY = {"textual", "pytest_textual_snapshot"}


def room_of(path: Path, root: Path) -> str:
    """`store` for fintrade_tui/store/db.py, `errors` for fintrade_tui/errors.py, `screens`
    for screens/arena/screen.py."""
    rel = path.relative_to(root)
    if rel.parts[0] == "screens":
        return "screens"
    inner = rel.parts[1:]
    return inner[0] if len(inner) > 1 else inner[0].removesuffix(".py")


def _targets(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, wherever it sits."""
    return _imports(path.read_text(encoding="utf-8"))


@functools.cache
def _imports(source: str) -> list[tuple[int, str]]:
    """`_targets` of a source text: the planted trees below copy every file, each parsed once."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from fintrade_tui import redact` names the module in the alias
            if node.module == "fintrade_tui":
                out += [(node.lineno, f"fintrade_tui.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
    return out


def violations(root: Path) -> list[str]:
    """Every import that is not an allowed arrow, as `file:line room -> room (module)`."""
    files = [*(root / "fintrade_tui").rglob("*.py"), *(root / "screens").glob("*.py")]
    found = []
    for path in sorted(files):
        src = room_of(path, root)
        for line, module in _targets(path):
            where = f"{path.relative_to(root)}:{line}"
            top = module.split(".")[0]
            if top in UI_ONLY and src not in SHELL - {"cli"}:
                found.append(f"{where} {src} -> {top} (only ui and screens import Textual)")
            if top != "fintrade_tui" or module == "fintrade_tui":
                continue
            dst = module.split(".")[1]
            if dst == "screens" or src in SHELL or dst == src or dst in GROUND:
                if src in GROUND and dst not in GROUND:
                    found.append(f"{where} {src} -> {dst} ({module})")
                continue
            if src in GROUND or dst not in ALLOWED.get(src, set()):
                found.append(f"{where} {src} -> {dst} ({module})")
    return found


def test_every_import_is_an_allowed_arrow() -> None:
    assert violations(ROOT) == []


def test_every_room_is_in_the_table() -> None:
    """A new room must be placed: a folder missing from ALLOWED would import nothing."""
    rooms = {p.name for p in (ROOT / "fintrade_tui").iterdir() if (p / "__init__.py").is_file()}
    assert rooms - SHELL - set(ALLOWED) == set()


def _plant(tmp_path: Path, rel: str, source: str) -> Path:
    """A copy of the tree's layout with one extra module."""
    for p in [*(ROOT / "fintrade_tui").rglob("*.py"), *(ROOT / "screens").glob("*.py")]:
        dest = tmp_path / p.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / rel).write_text(source, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("rel", "source", "named"),
    [
        # the store reaching up into the workspace's records (what it did before this room)
        (
            "fintrade_tui/store/planted.py",
            "from fintrade_tui.workspace.run_records import RunStore\n",
            "store -> workspace",
        ),
        # the workspace reaching up, lazily, inside a function
        (
            "fintrade_tui/workspace/planted.py",
            "def f():\n    from fintrade_tui.judging import judge\n",
            "workspace -> judging",
        ),
        ("fintrade_tui/models/planted.py", "import fintrade_tui.runs.runner\n", "models -> runs"),
        (
            "fintrade_tui/models/planted.py",
            "from fintrade_tui.judging.judge import judge_run\n",
            "models -> judging",
        ),
        ("fintrade_tui/runs/planted.py", "from textual.app import App\n", "runs -> textual"),
        ("fintrade_tui/cli/planted.py", "import textual\n", "cli -> textual"),
        # a ground-floor module (replaced here) importing a room
        (
            "fintrade_tui/safe_text.py",
            "from fintrade_tui import workspace\n",
            "safe_text -> workspace",
        ),
    ],
)
def test_a_forbidden_import_is_named(tmp_path: Path, rel: str, source: str, named: str) -> None:
    found = violations(_plant(tmp_path, rel, source))
    assert len(found) == 1 and named in found[0] and found[0].startswith(rel), found


def test_an_allowed_import_is_not_named(tmp_path: Path) -> None:
    source = "from fintrade_tui.workspace.run_records import RunStore\nimport textual\n"
    assert violations(_plant(tmp_path, "fintrade_tui/ui/planted.py", source)) == []


# --- import cycles between modules ---------------------------------------------------------------
def _module_of(path: Path, root: Path) -> str:
    """`fintrade_tui.store.db` for fintrade_tui/store/db.py; a package is its __init__."""
    rel = path.relative_to(root).with_suffix("")
    parts = ["fintrade_tui", "screens", *rel.parts[1:]] if rel.parts[0] == "screens" else rel.parts
    parts = list(parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project modules it imports (lazy ones included); `from pkg import name`
    counts as importing `pkg.name` when that is a module."""
    files = [*(root / "fintrade_tui").rglob("*.py"), *(root / "screens").glob("*.py")]
    mods = {_module_of(p, root): p for p in files}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names]
                names = [n if n in mods else node.module for n in names]
            graph[mod] |= {n for n in names if n in mods and n != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other round (Tarjan's strongly connected
    components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_itself_round_a_cycle() -> None:
    assert cycles(import_graph(ROOT)) == []


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        "fintrade_tui/scoring/planted_a.py",
        "def f():\n    from fintrade_tui.scoring import planted_b\n",
    )
    _plant(
        tmp_path,
        "fintrade_tui/scoring/planted_b.py",
        "from fintrade_tui.scoring.planted_a import f\n",
    )
    assert ["fintrade_tui.scoring.planted_a", "fintrade_tui.scoring.planted_b"] in cycles(
        import_graph(tmp_path)
    )
