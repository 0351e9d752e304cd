# SAN Desktop — the two commands of the README's quick start, plus benchmarks and lint.
#   make run    install into .venv (first time or when pyproject.toml changed) and start the app
#   make test   install the same way, then lint, type-check and run the whole test suite
#   make bench  run the benchmarks under bench/ and print a table
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "SAN Desktop needs Python 3.11 or newer; set PYTHON=python3.x")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/san-desktop $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m bench
