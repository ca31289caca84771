"""UI room: the key bindings the explorer declares, per app / screen / widget class (read by
the `tui` command's keymap check before the app starts)."""

from __future__ import annotations


def binding_scopes() -> dict[str, dict[str, str]]:
    """class name -> {binding id: keys} for the app and every screen and widget class."""
    import importlib
    import inspect
    import pkgutil

    from textual.binding import Binding

    import fintrade_tui.screens as screens
    import fintrade_tui.ui as ui

    scopes: dict[str, dict[str, str]] = {}
    for pkg in (ui, screens):
        # screens that are packages (screens/arena/...) declare their keys in a submodule
        for mod in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}."):
            module = importlib.import_module(mod.name)
            for name, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ != module.__name__:
                    continue
                found = {
                    b.id: b.key
                    for b in cls.__dict__.get("BINDINGS", [])
                    if isinstance(b, Binding) and b.id
                }
                if found:
                    scopes[f"{module.__name__}.{name}"] = found
    return scopes
