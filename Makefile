# Two entry points: `make lesson` (set up and open the lesson) and `make test` (set up and run every test).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: lesson test setup system-deps bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# Debian packages the tests drive for real: Chromium (browser tests) and bubblewrap (the grader's sandbox).
system-deps:
	@bash scripts/system-deps.sh

lesson: $(STAMP)
	$(VENV)/bin/chainrule lesson

test: $(STAMP) system-deps
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
