"""fintrade-tui: a terminal explorer for financial-reasoning benchmarks."""
