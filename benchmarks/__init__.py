"""The project's benchmarks: scripts that measure the product side by side with a baseline in one
run, so a drift in machine load hits both alike (docs/benchmarks.md has the figures).

Run each from the project root as a module, e.g. `.venv/bin/python -m benchmarks.bench_store`;
`--help` lists a bench's options. `harness` holds what the benches share (the common options,
timing and spread, fresh processes per measurement, the machine's load, the one results table);
`synthetic_runs` and `finqa_programs` are helpers the benches and the tests import.
"""
