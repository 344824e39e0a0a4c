# Two entry points: `make lesson` (set up what the lesson needs, then open it) and `make test` (set up
# everything the tests need, then run them all). Both use one virtual environment, .venv/, with a stamp per
# target: `make lesson` installs chainrule alone (no test tools), `make test` adds the test extra. Run in
# either order, each installs only what is missing; editing pyproject.toml makes both reinstall.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LESSON_STAMP := $(VENV)/.installed-lesson
TEST_STAMP := $(VENV)/.installed-test

.PHONY: lesson test test-fast lint setup setup-lesson system-deps bench clean

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(None if sys.version_info >= (3, 11) else "chainrule needs Python 3.11 or newer; this is " + sys.version.split()[0] + ". Run make again with PYTHON=python3.11 (or newer).")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# chainrule and its runtime dependencies only: what `pip install .` gives a user.
$(LESSON_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

# Everything the tests use (PyTorch, micrograd, Playwright, ...); it includes the lesson's install.
$(TEST_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	# micrograd's source distribution holds its own test file, which the drop-in's tests run.
	$(PY) -m pip download --quiet micrograd==0.1.0 --no-deps --no-binary :all: -d $(VENV)/reference
	touch $@ $(LESSON_STAMP)

setup-lesson: $(LESSON_STAMP)

setup: $(TEST_STAMP)

# System packages the tests drive for real: Chromium (browser tests), bubblewrap (the grader's sandbox) and
# Node.js (the JavaScript and TypeScript exercises); installed with apt-get where that is possible.
system-deps:
	@bash scripts/system-deps.sh

# Options of `chainrule lesson` go in ARGS: make lesson ARGS="--no-browser --port 8800 --data-dir /tmp/x".
lesson: $(LESSON_STAMP)
	$(VENV)/bin/chainrule lesson $(ARGS)

# The suite runs on every core (pytest-xdist), with one worker more than there are cores (at most 8, see
# scripts/test-workers.sh): many tests spend part of their time waiting on a browser, a server or a sandbox.
# Each test file runs whole on one worker (--dist loadfile), so what a file shares is set up once.
# PYTEST_WORKERS=0 runs it in this one process.
# The suite starts hundreds of Python processes (servers, the CLI, workers): they keep compiled modules in
# __pycache__ (ignored by git) even where PYTHONDONTWRITEBYTECODE is set, so chainrule is compiled once.
PYTEST_WORKERS ?= $(shell bash scripts/test-workers.sh)

# ruff (pyflakes, pycodestyle, import order, bugbear, complexity) on everything, then mypy on the package, as
# pyproject.toml's [tool.ruff] and [tool.mypy] say; `make test` runs it first, so CI does too. mypy keeps its
# cache in the virtual environment, never beside the source.
lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy --cache-dir $(VENV)/mypy-cache

test: $(TEST_STAMP) system-deps lint
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The edit-test loop: the engine's, the grader's and the progress store's tests (SQLite and PostgreSQL), about
# 50 s of CPU time spread over the workers. A list of files, not a marker: pytest then imports only these (the whole suite's collection
# alone imports PyTorch, Playwright and every helper), and a file is the unit a change is made in. It checks
# less than `make test`, which CI and the README run (docs/architecture.md, "Running a fast subset").
FAST_TESTS := tests/test_engine_behaviour.py tests/test_engine_protocol.py tests/test_engine_second_order.py \
	tests/test_engine_torch.py tests/test_op_table.py tests/test_compile.py \
	tests/test_grading.py tests/test_grading_cli.py tests/test_grading_diagnoses.py tests/test_grading_feedback.py \
	tests/test_progress_store.py tests/test_progress_backends.py

test-fast: $(TEST_STAMP) system-deps
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(FAST_TESTS) $(PYTEST_ARGS)

bench: $(TEST_STAMP)
	$(PY) benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
