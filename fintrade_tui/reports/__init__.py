"""Reports room: what the records add up to for a reader — failure cases and their filters
(`failures.py`) and the one accuracy-table builder `report`, the Results screen and the HTML
view report share (`accuracy.py`)."""
