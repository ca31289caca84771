"""`python -m fintrade_tui` runs the CLI (same as the `fintrade-tui` script)."""

from fintrade_tui.cli import main

main()
