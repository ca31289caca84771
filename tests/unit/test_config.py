"""config.yaml is validated at load; overrides come from the env and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import load_config
from fintrade_tui.errors import UserError


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("FINTRADE_BUNDLE", raising=False)
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.yaml").write_text("bundle: ../bundle\nstore: data/x.duckdb\n")
    monkeypatch.chdir("/")
    cfg = load_config(tmp_path / "cfg" / "config.yaml")
    assert cfg.bundle == (tmp_path / "bundle").resolve()
    assert cfg.store == (tmp_path / "cfg" / "data" / "x.duckdb").resolve()


def test_env_selects_config_and_bundle(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "other.yaml"
    path.write_text("store: s.duckdb\n")
    monkeypatch.setenv("FINTRADE_CONFIG", str(path))
    monkeypatch.setenv("FINTRADE_BUNDLE", str(tmp_path / "b"))
    cfg = load_config()
    assert cfg.source_file == path
    assert cfg.bundle == (tmp_path / "b").resolve()
    # --bundle beats the environment
    assert load_config(bundle=tmp_path / "c").bundle == (tmp_path / "c").resolve()


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("bundel: x\n", "unknown key `bundel`"),
        ("prices:\n  ratio_tolerance: lots\n", "prices.ratio_tolerance"),
        ("prices: [1, 2\n", "line"),
        ("- just\n- a list\n", "mapping"),
    ],
)
def test_malformed_config_is_one_line_naming_the_key(tmp_path: Path, text: str, names: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_config(path)
    msg = str(err.value)
    assert names in msg and str(path) in msg and "\n" not in msg and "fix:" in msg


def test_cli_bad_config_exits_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("store: [unterminated\n")
    res = CliRunner().invoke(
        main, ["--config", str(path), "snapshot", "AAPL", "--as-of", "2024-01-02"]
    )
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert str(path) in res.output


def test_missing_bundle_path_is_named(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"bundle: {tmp_path / 'nowhere'}\nstore: {tmp_path / 's.duckdb'}\n")
    res = CliRunner().invoke(main, ["--config", str(path), "ingest"])
    assert res.exit_code == 2
    assert "nowhere" in res.output and "FINTRADE_BUNDLE" in res.output
    assert not (tmp_path / "s.duckdb").exists()
