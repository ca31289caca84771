"""Textual screens (top level in the repo, installed as fintrade_tui.screens)."""
