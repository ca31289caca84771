"""Docs: the generated reference pages (keys, CLI) are what the code generates and name every
binding id and command; the site stays offline; the README stays a short front page."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click
import pytest
import yaml
from textual.binding import Binding
from textual.screen import Screen

from fintrade_tui.cli import main
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs/gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _all_paths(cmd: click.Command, path: str) -> set[str]:
    """Every command path, walked through click's own `commands` maps (not the generator's)."""
    found = {path}
    for name, sub in getattr(cmd, "commands", {}).items():
        found |= _all_paths(sub, f"{path} {name}")
    return found


def test_committed_reference_pages_are_what_the_code_generates(gen) -> None:
    assert gen.problems() == []


def test_the_cli_page_holds_every_command_and_its_help(gen) -> None:
    paths = _all_paths(main, "fintrade-tui")
    assert set(gen.command_paths()) == paths
    assert {"fintrade-tui runs import", "fintrade-tui export html", "fintrade-tui serve"} <= paths
    page = (ROOT / "docs/reference/cli.md").read_text(encoding="utf-8")
    for path in paths:
        assert f"## `{path}`" in page, path
    # the help text itself, not only the headings: runs import's options
    section = page.split("## `fintrade-tui runs import`")[1].split("\n## ")[0]
    assert "--dry-run" in section and "Usage: fintrade-tui runs import" in section


def test_the_keys_page_holds_every_binding_id_with_its_key(gen) -> None:
    page = (ROOT / "docs/reference/keys.md").read_text(encoding="utf-8")
    ids = set(gen.binding_ids())
    assert {"app.quit", "app.back", "arena.retry", "results.export_view", "universe.open"} <= ids
    row = re.compile(r"\| `([^`]+)` \| [^|]+ \| `([^`]+)` \|")  # keymap name | what | id
    rows = {m.group(2): m.group(1) for m in row.finditer(page)}
    assert ids <= set(rows)
    # rows as the bindings declare them: (key name as keymap writes it, id)
    assert rows["arena.retry"] == "R" and rows["app.keys"] == "question_mark"
    assert rows["company.prev_quarter"] == "left"


class FakeScreen(Screen):
    """A screen a developer just added."""

    BINDINGS = [Binding("z", "noop", "Fake action", id="fake.action")]


def test_a_binding_missing_from_the_keys_page_is_reported(gen) -> None:
    found = gen.problems(classes=[*gen.binding_classes(), FakeScreen])
    assert "docs/reference/keys.md lacks binding id fake.action" in found
    assert any(p.startswith("docs/reference/keys.md differs") for p in found)
    assert not any("cli.md" in p for p in found)


def test_a_command_missing_from_the_cli_page_is_reported(gen) -> None:
    runs = main.commands["runs"]
    fake_runs = click.Group("runs", commands={**runs.commands, "purge": click.Command("purge")})
    fake = click.Group(
        "fintrade-tui",
        commands={**main.commands, "runs": fake_runs, "fake": click.Command("fake", help="New.")},
    )
    found = gen.problems(group=fake)
    assert "docs/reference/cli.md lacks command fintrade-tui fake" in found
    assert "docs/reference/cli.md lacks command fintrade-tui runs purge" in found
    assert any(p.startswith("docs/reference/cli.md differs") for p in found)


def test_a_stale_page_on_disk_is_reported(gen, tmp_path: Path) -> None:
    for page, text in gen.pages().items():
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(text.replace("`arena.retry`", "`arena.rerun_failed`"))
    found = gen.problems(docs=tmp_path)
    assert "docs/reference/keys.md lacks binding id arena.retry" in found


def test_the_site_loads_nothing_from_the_network() -> None:
    conf = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert conf["theme"]["font"] is False  # no Google fonts
    plugins = {p if isinstance(p, str) else next(iter(p)) for p in conf.get("plugins", [])}
    assert plugins <= {"search"}  # privacy/social fetch at build time, offline adds a CDN shim
    assert conf["strict"] is True


def test_the_readme_is_a_short_front_page_whose_links_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    first_block = text.split("```")[1]
    commands = [ln.split("#")[0].strip() for ln in first_block.splitlines()[1:] if ln.strip()]
    assert commands == ["make demo", "make test"]
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the docs"
    assert [link for link in local if not (ROOT / link).exists()] == []
