"""Structure rules: the core never imports Textual; every package folder is installed."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import ROOT

UI_ROOMS = {"ui"}  # the only place in fintrade_tui/ allowed to import textual


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_core_does_not_import_textual() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "fintrade_tui").rglob("*.py")
        if not (set(p.relative_to(ROOT / "fintrade_tui").parts[:-1]) & UI_ROOMS)
        and "textual" in _imports(p)
    ]
    assert offenders == []


def test_importing_the_core_loads_no_heavy_modules() -> None:
    code = (
        "import sys, fintrade_tui.cli, fintrade_tui.store.queries, fintrade_tui.ingest.pipeline;"
        "heavy = {'textual', 'torch', 'sentence_transformers', 'litellm', 'lancedb', 'ray'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_package_folder_is_listed_in_pyproject() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "fintrade_tui").rglob("__init__.py")
    }
    assert found <= listed
    assert conf["package-dir"]["fintrade_tui.screens"] == "screens"
    assert (ROOT / "screens" / "__init__.py").is_file()


def test_screens_is_installed_inside_the_package_namespace() -> None:
    import fintrade_tui.screens

    assert Path(fintrade_tui.screens.__file__).resolve().parent == (ROOT / "screens").resolve()
    code = "import importlib.util; print(importlib.util.find_spec('screens'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    assert out.stdout.strip() == "None"
