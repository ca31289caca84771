"""Scoring room: pure functions over text — the one figures reader (`figures.py`), answer
matching by reference kind and benchmark rule (FinQA, TAT-QA, tolerance), FinQA programs
(`finqa/`: parse, execute, trace, read from prose) and FinAR's RMS table metric. No I/O, no
model, no other room."""
