"""Structure rules: the core loads no heavy module on import; every package folder is installed
(the import rules between rooms, Textual's included: test_rooms.py)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import ROOT


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
