"""UI room: the Textual app, its widgets and messages. The only place in the package that
imports Textual; screens live in the top-level `screens/` folder (fintrade_tui.screens)."""
