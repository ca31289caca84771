"""An install as a tool: the wheel built from a copy of the checkout, installed into a fresh
virtual environment outside it (its dependencies read from this environment's site-packages,
the package itself only from the wheel), run from another folder with a home of its own:
`config init` writes the user's config with the data in the user's data folder, and the
commands then read it (`config path`, `questions import`, `questions list --json`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from fintrade_tui.config import Config
from tests.conftest import ROOT, needs_bundle

SEEDS = "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"


def _copy_checkout(dest: Path) -> Path:
    """What the wheel is built from: the package folders and the files pyproject.toml names
    (built in a copy: no build/ or egg-info left in the checkout)."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("fintrade_tui", "screens"):
        shutil.copytree(ROOT / folder, dest / folder, symlinks=True, ignore=skip)
    for name in ("pyproject.toml", "README.md", "config.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.mark.long  # builds a wheel and a virtual environment, runs the installed binary
@needs_bundle
def test_the_wheel_installed_elsewhere_runs_from_the_users_config(
    built_store: Config, tmp_path: Path
) -> None:
    src = _copy_checkout(tmp_path / "src")
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    build = [*pip, "wheel", str(src), "--no-deps", "--no-build-isolation", "-w", str(wheels)]
    subprocess.run(build, check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = wheels.glob("fintrade_tui-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(install, check=True, capture_output=True)
    # the dependencies from this environment (a plain path: its .pth files, the checkout's
    # editable install among them, are not read), the package from the wheel alone
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FINTRADE_", "XDG_"))}
    env |= {"HOME": str(home), "FINTRADE_EMBED_EXPORTS": os.environ["FINTRADE_EMBED_EXPORTS"]}

    def tool(*args: str) -> subprocess.CompletedProcess:
        out = subprocess.run(
            [str(venv / "bin" / "fintrade-tui"), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=elsewhere,
        )
        assert out.returncode == 0, (args, out.stderr[-2000:])
        return out

    where = subprocess.run(
        [str(python), "-c", "import fintrade_tui; print(fintrade_tui.__file__)"],
        check=True, capture_output=True, text=True, env=env, cwd=elsewhere,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(purelib)  # the wheel's copy, not the checkout's

    made = json.loads(tool("config", "init", "--bundle", str(built_store.bundle), "--json").stdout)
    config, data = home / ".config/fintrade-tui/config.yaml", home / ".local/share/fintrade-tui"
    assert made == {"config": str(config), "data": str(data), "bundle": str(built_store.bundle)}
    text = config.read_text()
    assert f"store: {data}/fintrade.duckdb" in text and f"index: {data}/lancedb" in text
    assert f"bundle: {built_store.bundle}" in text and "# the DuckDB store" in text  # annotated
    again = subprocess.run(
        [str(venv / "bin" / "fintrade-tui"), "config", "init"], capture_output=True, text=True,
        env=env, cwd=elsewhere,
    )  # fmt: skip
    assert again.returncode == 2 and "already exists" in again.stderr

    assert json.loads(tool("config", "path", "--json").stdout)["config"] == str(config)
    # a store built already (as `ingest` would leave it in the data folder)
    config.write_text(text.replace(f"store: {data}/fintrade.duckdb", f"store: {built_store.store}"))
    tool("questions", "import", str(built_store.bundle / SEEDS))
    listed = json.loads(tool("questions", "list", "--json").stdout)
    assert len(listed) == 150 and listed[0]["id"] in {"F1", "FT1", "T1"}
    assert (data / "workspace.duckdb").is_file()
    assert not (elsewhere / "data").exists()  # nothing written where it was run from
