"""The scan behind tests/ui/test_textual_private.py: every use of a `_`-prefixed Textual name
in a tree of Python files, read from their syntax (nothing is imported but Textual itself).

A use is: a private Textual module or name imported; `x._name` where `_name` is private to
one of the Textual classes the app touches (App, Screen, the widgets, Timer, Pilot, ...); the
same through getattr/hasattr/setattr/delattr; and a class defining (overriding) a private name
of the Textual classes it derives from. `self._name` and `cls._name` count only when `_name` is
private to the class's own Textual bases (a mixin without one: those of the classes that mix it
in), and `x._name` does not count when `x` was made by a class of ours in the same function, so
our own private names stay ours wherever they do not shadow Textual's.

Files are scanned only where Textual can be: under fintrade_tui/ui, screens/ and tests/ui, or
importing textual, the UI (fintrade_tui.ui, fintrade_tui.screens) or a sibling screen.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

FACING_DIRS = ("fintrade_tui/ui/", "screens/", "tests/ui/")
FACING_IMPORTS = ("textual", "fintrade_tui.ui", "fintrade_tui.screens", "screens")
FACING_TEXT = re.compile(r"\b(textual|fintrade_tui\.ui|fintrade_tui\.screens|screens)\b")
CHECKERS = {"getattr", "hasattr", "setattr", "delattr"}


@cache
def textual_classes() -> frozenset[type]:
    """The Textual classes the app and its tests touch, and their bases."""
    from textual import containers, events, messages
    from textual import widgets as exported
    from textual.app import App
    from textual.content import Content
    from textual.driver import Driver
    from textual.notifications import Notification, Notifications
    from textual.pilot import Pilot
    from textual.screen import ModalScreen, Screen
    from textual.strip import Strip
    from textual.timer import Timer
    from textual.widget import Widget
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    found: set[type] = {App, Screen, ModalScreen, Widget, Timer, Pilot, Worker, WorkerManager}
    found |= {Content, Strip, Driver, Notification, Notifications, MarkdownStream}
    found |= {getattr(exported, name) for name in exported.__all__}
    found |= set(Markdown.BLOCKS.values())
    for module in (containers, events, messages):
        found |= {v for v in vars(module).values() if inspect.isclass(v) and _is_textual(v)}
    return frozenset(found)


def _is_textual(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "textual"


@cache
def private_names(cls: type) -> frozenset[str]:
    """`_name`s of a Textual class: its and its Textual bases' attributes, and what their
    code sets or reads on `self` (instance attributes)."""
    return frozenset().union(*(_declared(base) for base in cls.__mro__ if _is_textual(base)))


@cache
def _declared(cls: type) -> frozenset[str]:
    on_self = _self_attributes(cls.__module__).get(cls.__name__, frozenset())
    return frozenset({a for a in vars(cls) if _private(a)} | on_self)


@cache
def _self_attributes(module: str) -> dict[str, frozenset[str]]:
    """Per class of a Textual module, the `self._name`s its code touches (parsed once)."""
    path = getattr(sys.modules.get(module), "__file__", None)
    if not path or not path.endswith(".py"):
        return {}
    found: dict[str, frozenset[str]] = {}
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.ClassDef):
            found[node.name] = frozenset(
                a.attr
                for a in ast.walk(node)
                if isinstance(a, ast.Attribute)
                and isinstance(a.value, ast.Name)
                and a.value.id == "self"
                and _private(a.attr)
            )
    return found


@cache
def common_names() -> frozenset[str]:
    return frozenset().union(*(private_names(c) for c in textual_classes()))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def _private_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "textual" and any(_private(p) for p in parts)


@cache
def textual_object(qualified: str) -> Any:
    """The Textual module, class or function a dotted name means (None if it means none)."""
    parts = qualified.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
        return obj
    return None


class Tree:
    """The Python files under `root` (fintrade_tui/, screens/, tests/), each parsed when first
    needed, with what each name they import means."""

    def __init__(self, root: Path, skip: tuple[str, ...] = ()) -> None:
        self.root = root
        self.paths = {
            p.relative_to(root).as_posix(): p
            for top in ("fintrade_tui", "screens", "tests")
            for p in sorted((root / top).rglob("*.py"))
        }
        self.paths = {rel: p for rel, p in self.paths.items() if not rel.startswith(skip)}
        self.modules = {self.module_of(rel): rel for rel in self.paths}
        self._parsed: dict[str, tuple[ast.Module, dict[str, str], dict[str, ast.ClassDef]]] = {}
        self._ancestry: dict[tuple[str, int], tuple[frozenset[type], frozenset[Any]]] = {}
        self._mixins: dict[int, frozenset[type]] | None = None

    def parsed(self, rel: str) -> tuple[ast.Module, dict[str, str], dict[str, ast.ClassDef]]:
        """A file's syntax, its imported names (name -> dotted name) and its classes."""
        if rel not in self._parsed:
            module = ast.parse(self.paths[rel].read_text(), rel)
            classes = {n.name: n for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
            self._parsed[rel] = (module, self._imports(rel, module), classes)
        return self._parsed[rel]

    def imports(self, rel: str) -> dict[str, str]:
        return self.parsed(rel)[1]

    def classes(self, rel: str) -> dict[str, ast.ClassDef]:
        return self.parsed(rel)[2]

    @staticmethod
    def module_of(rel: str) -> str:
        """`fintrade_tui.screens.company` for screens/company.py (it installs there)."""
        parts = rel.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(["fintrade_tui", *parts] if parts[0] == "screens" else parts)

    def _imports(self, rel: str, tree: ast.Module) -> dict[str, str]:
        names: dict[str, str] = {}
        package = self.module_of(rel).rsplit(".", 0 if rel.endswith("__init__.py") else 1)[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    names[a.asname or top] = a.name if a.asname else top
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    module = f"{base}.{module}" if module else base
                for a in node.names:
                    names[a.asname or a.name] = f"{module}.{a.name}"
        return names

    def facing(self, rel: str) -> bool:
        """Whether Textual can be in the file (read only when its text names an import of
        Textual or of the UI)."""
        if rel.startswith(FACING_DIRS):
            return True
        if not FACING_TEXT.search(self.paths[rel].read_text()):
            return False
        return any(q.startswith(FACING_IMPORTS) for q in self.imports(rel).values())

    def qualified(self, rel: str, expr: ast.expr) -> str | None:
        """The dotted name an expression means in a file: an import, a class of the file."""
        if isinstance(expr, ast.Name):
            if expr.id in self.imports(rel):
                return self.imports(rel)[expr.id]
            if expr.id in self.classes(rel):
                return f"{self.module_of(rel)}.{expr.id}"
            return None
        if isinstance(expr, ast.Attribute):
            head = self.qualified(rel, expr.value)
            return f"{head}.{expr.attr}" if head else None
        return None

    def meaning(self, qualified: str, seen: int = 0) -> tuple[str, Any] | None:
        """("textual", object) or ("ours", (file, ClassDef)) for a dotted name."""
        if qualified.split(".")[0] == "textual":
            obj = textual_object(qualified)
            return ("textual", obj) if obj is not None else None
        module, _, name = qualified.rpartition(".")
        rel = self.modules.get(module)
        if rel is None or seen > 8:
            return None
        if name in self.classes(rel):
            return ("ours", (rel, self.classes(rel)[name]))
        if name in self.imports(rel):  # a name the module imports and hands on
            return self.meaning(self.imports(rel)[name], seen + 1)
        return None

    def bases(self, rel: str, node: ast.ClassDef) -> tuple[frozenset[type], frozenset[Any]]:
        """A class's Textual bases (all the way up) and its own ancestors, as (file, ClassDef)."""
        key = (rel, id(node))
        if key not in self._ancestry:
            self._ancestry[key] = (frozenset(), frozenset())  # a cycle ends here
            textual: set[type] = set()
            ours: set[Any] = set()
            for base in node.bases:
                found = self.meaning(self.qualified(rel, base) or "")
                if found and found[0] == "textual" and inspect.isclass(found[1]):
                    textual.add(found[1])
                elif found and found[0] == "ours":
                    ours.add(found[1])
                    more = self.bases(*found[1])
                    textual |= more[0]
                    ours |= more[1]
            self._ancestry[key] = (frozenset(textual), frozenset(ours))
        return self._ancestry[key]

    def privates_of(self, rel: str, node: ast.ClassDef) -> frozenset[str]:
        """Private names of a class's Textual bases; for a mixin without any, of the Textual
        bases of the classes that mix it in."""
        textual = self.bases(rel, node)[0] or self._mixed_into().get(id(node), frozenset())
        return frozenset().union(*(private_names(c) for c in textual))

    def _mixed_into(self) -> dict[int, frozenset[type]]:
        """For each class of ours, the Textual bases of the classes deriving from it."""
        if self._mixins is None:
            into: dict[int, set[type]] = {}
            for rel in filter(self.facing, self.paths):
                for node in self.classes(rel).values():
                    textual, ours = self.bases(rel, node)
                    for _, ancestor in ours:
                        into.setdefault(id(ancestor), set()).update(textual)
            self._mixins = {k: frozenset(v) for k, v in into.items()}
        return self._mixins


def violations(tree: Tree, skip: tuple[str, ...] = ()) -> list[str]:
    """`file:line: what` for every use of a private Textual name, outside `skip`."""
    found: list[str] = []
    for rel in tree.paths:
        if rel.startswith(skip) or not tree.facing(rel):
            continue
        found += [f"{rel}:{line}: {what}" for line, what in _uses(tree, rel, tree.parsed(rel)[0])]
    return found


def _uses(tree: Tree, rel: str, module: ast.Module) -> Iterator[tuple[int, str]]:
    for node, klass, made in _walk(tree, rel, module, None, {}):
        if isinstance(node, ast.ImportFrom) and not node.level:
            mod = node.module or ""
            if _private_module(mod):
                yield node.lineno, f"imports from the private module {mod}"
            elif mod.split(".")[0] == "textual":
                for a in node.names:
                    if _private(a.name):
                        yield node.lineno, f"imports {mod}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _private_module(a.name):
                    yield node.lineno, f"imports the private module {a.name}"
        elif isinstance(node, ast.ClassDef):
            own = tree.privates_of(rel, node)
            for item in node.body:
                for name in _defined(item):
                    if name in own:
                        yield item.lineno, f"overrides Textual's {name}"
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            if _textual_use(tree, rel, node.value, node.attr, klass, made):
                yield node.lineno, f"uses {ast.unparse(node)}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = node.args
            if node.func.id in CHECKERS and len(args) >= 2 and isinstance(args[1], ast.Constant):
                name = args[1].value
                if isinstance(name, str) and _private(name) and name in common_names():
                    yield node.lineno, f"uses {node.func.id}(..., {name!r})"


def _walk(
    tree: Tree, rel: str, node: ast.AST, klass: ast.ClassDef | None, made: dict[str, Any]
) -> Iterator[tuple[ast.AST, ast.ClassDef | None, dict[str, Any]]]:
    """Every node with the class it is in and, per function, the local names assigned an
    instance of one of our classes (`x = Ours(...)`)."""
    yield node, klass, made
    if isinstance(node, ast.ClassDef):
        klass = node
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        made = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call):
                found = tree.meaning(tree.qualified(rel, sub.value.func) or "")
                for target in sub.targets:
                    if found and found[0] == "ours" and isinstance(target, ast.Name):
                        made[target.id] = found[1]
    for child in ast.iter_child_nodes(node):
        yield from _walk(tree, rel, child, klass, made)


def _defined(item: ast.stmt) -> list[str]:
    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
        return [item.name] if _private(item.name) else []
    targets = item.targets if isinstance(item, ast.Assign) else []
    if isinstance(item, ast.AnnAssign):
        targets = [item.target]
    return [t.id for t in targets if isinstance(t, ast.Name) and _private(t.id)]


def _textual_use(
    tree: Tree, rel: str, receiver: ast.expr, name: str, klass: ast.ClassDef | None, made: dict
) -> bool:
    is_super = isinstance(receiver, ast.Call) and getattr(receiver.func, "id", "") == "super"
    if klass is not None and (is_super or getattr(receiver, "id", "") in ("self", "cls")):
        return name in tree.privates_of(rel, klass)
    if isinstance(receiver, ast.Name) and receiver.id in made:
        return name in tree.privates_of(*made[receiver.id])
    found = tree.meaning(tree.qualified(rel, receiver) or "")
    if found and found[0] == "textual":
        obj = found[1]
        if isinstance(obj, ModuleType):
            return True  # textual.<module>._name
        if inspect.isclass(obj):
            return name in private_names(obj)
    if found and found[0] == "ours":
        return name in tree.privates_of(*found[1])
    return name in common_names()
