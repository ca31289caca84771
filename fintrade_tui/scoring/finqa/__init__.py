"""FinQA-program sub-room of scoring: the DSL (`dsl.py`), execution traces (`trace.py`),
arithmetic read from prose (`prose.py`) and what callers import (`program.py`)."""
