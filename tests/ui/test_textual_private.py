"""Textual's private API is used in one module only (fintrade_tui/ui/textual_private.py), read
against the Textual minor release pyproject.toml pins: no `_`-prefixed Textual name is used
anywhere else in fintrade_tui/, screens/ or tests/ (tests/ui/textual_scan.py finds them), every
private name the module uses still exists on the installed Textual, and each of its functions
still does what its callers rely on. A test of the scan plants each kind of use and expects it
named, and our own private names left alone."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import textual
from textual import events
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Input

from fintrade_tui.ui import textual_private as adapter
from fintrade_tui.ui.streaming import InPlaceBulletList, StreamingMarkdown
from tests.conftest import ROOT
from tests.ui.conftest import until
from tests.ui.test_frames import handled
from tests.ui.textual_scan import Tree, private_names, textual_object, violations

ADAPTER = "fintrade_tui/ui/textual_private.py"
SKIP = ("tests/data/",)  # third-party code kept as test data


def test_no_private_textual_name_is_used_outside_the_adapter() -> None:
    found = violations(Tree(ROOT, SKIP), skip=(ADAPTER,))
    assert not found, "use ui/textual_private.py for these:\n" + "\n".join(found)


def test_the_adapter_is_read_against_the_pinned_textual() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [d.split("#")[0].strip() for d in deps if d.startswith("textual>")]
    major, minor = (int(x) for x in adapter.CHECKED_ON.split("."))
    assert pin == f"textual>={major}.{minor},<{major}.{minor + 1}"
    assert textual.__version__.startswith(f"{adapter.CHECKED_ON}.")


def test_every_private_name_the_adapter_uses_still_exists() -> None:
    """Each `x._name` in the adapter, where `x` is a parameter annotated with a Textual class
    (or the class itself), names a private attribute of that class, and each name imported
    from a private module is there."""
    module = ast.parse((ROOT / ADAPTER).read_text())
    namespace = vars(adapter)
    checked = []
    for func in ast.walk(module):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        kinds = {}  # parameter -> the class its annotation names
        for arg in func.args.args:
            if arg.annotation is not None:
                kinds[arg.arg] = namespace.get(ast.unparse(arg.annotation).split("[")[0])
        for node in ast.walk(func):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                receiver = ast.unparse(node.value)
                cls = kinds.get(receiver) or namespace.get(receiver)
                if isinstance(cls, type) and cls.__module__.startswith("textual"):
                    assert node.attr in private_names(cls), f"{cls.__name__}.{node.attr}"
                    checked.append(node.attr)
    assert {"_blocks", "_copy_context", "_update_from_block", "_batch_count"} <= set(checked)
    assert {"_on_timer_update", "_dirty_widgets", "_notifications", "_driver"} <= set(checked)
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and "._" in f".{node.module}":
            for alias in node.names:
                assert textual_object(f"{node.module}.{alias.name}") is not None, alias.name
    # the hooks' names: Textual calls these on its blocks and screens
    assert "_update_from_block" in private_names(adapter.MarkdownBulletList)
    assert "_update_timer" in private_names(Screen)


class _Streamed(App):
    def compose(self) -> ComposeResult:
        yield Input(id="box")
        yield StreamingMarkdown(id="md")


async def test_the_adapter_does_what_its_callers_rely_on() -> None:
    app = _Streamed()
    async with app.run_test(size=(60, 20)) as pilot:
        md = app.query_one(StreamingMarkdown)
        # a parsed list keeps its items until composed; Markdown.append reaches our hook
        block = md.get_block_class("bullet_list_open")
        assert block is InPlaceBulletList
        await md.append("- one\n- two\n")
        await pilot.pause()
        grown = md.query_one(InPlaceBulletList)
        await md.append("- three\n")
        await pilot.pause()
        assert md.query_one(InPlaceBulletList) is grown  # updated through AppendHook
        assert len(grown.query(adapter.MarkdownBullet)) == 3
        # batch_open, paint_pending, paint_now: a change taken by the screen inside a batch
        # waits; Textual's own tick paints it once the batch is closed
        box = app.query_one("#box", Input)
        assert not adapter.batch_open(app)
        with app.batch_update():
            assert adapter.batch_open(app)
            box.value = "typed"
            await handled(box)
            await handled(app.screen)
            assert adapter.paint_pending(app.screen)
        assert not adapter.batch_open(app)
        adapter.paint_now(app.screen)  # nothing awaited since: this paints it
        assert not adapter.paint_pending(app.screen)
        # notifications and a message delivered as the terminal does
        app.notify("hello there")
        await handled(app)
        assert [n.message for n in adapter.notifications(app)] == ["hello there"]
        app.set_focus(box)
        await pilot.pause()
        event = events.Key("x", "x")
        event.set_sender(app)
        adapter.send_as_terminal(app, event)
        await until(pilot, lambda: app.query_one("#box", Input).value == "typedx", what="key")


# -- the scan, on planted files ------------------------------------------------------------

# the first planted line imports a private Textual module; it is assembled, so that a search of
# this tree for imports of private names finds the real ones only
PRIVATE_IMPORT = "from textual import _" + "time"
PLANTED = (
    PRIVATE_IMPORT
    + """
from textual.screen import Screen
from textual.widgets import DataTable
from textual.widgets._markdown import MarkdownBullet
from textual.widgets.markdown import MarkdownBlock


def poke(table: DataTable) -> None:
    table._on_idle(None)
    getattr(table, "_require_update_dimensions", False)


async def replace(block, new) -> None:
    await MarkdownBlock._update_from_block(block, new)


class Laid(Screen):
    def _on_idle(self, event) -> None:
        self._refresh_layout()


class Mixin:
    def timer(self):
        return self._update_timer


class Mixed(Mixin, Screen):
    pass


class Own:
    def __init__(self) -> None:
        self._render = "ours"


def ours() -> str:
    own = Own()
    return own._render


class Fine(Screen):
    def act(self) -> None:
        self._error("ours: Screen has no _error")
        self.app._store = None
"""
)


def test_the_scan_names_each_kind_of_use_and_leaves_ours_alone(tmp_path: Path) -> None:
    (tmp_path / "screens").mkdir()
    (tmp_path / "screens" / "planted.py").write_text(PLANTED)
    found = violations(Tree(tmp_path))
    assert found == [
        "screens/planted.py:1: imports textual._time",
        "screens/planted.py:4: imports from the private module textual.widgets._markdown",
        "screens/planted.py:9: uses table._on_idle",
        "screens/planted.py:10: uses getattr(..., '_require_update_dimensions')",
        "screens/planted.py:14: uses MarkdownBlock._update_from_block",
        "screens/planted.py:18: overrides Textual's _on_idle",
        "screens/planted.py:19: uses self._refresh_layout",
        "screens/planted.py:24: uses self._update_timer",
    ]
    # a file that reaches no Textual is not read for it
    (tmp_path / "fintrade_tui" / "store").mkdir(parents=True)
    (tmp_path / "fintrade_tui" / "store" / "core.py").write_text("def f(x):\n    x._on_idle()\n")
    assert violations(Tree(tmp_path)) == found
