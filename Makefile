# The two commands: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# The suite in one test process per core (pytest-xdist; at most 4), a file's tests
# together so its module-wide worlds are built once. TEST_WORKERS= runs it in one process.
TEST_WORKERS ?= -n auto --maxprocesses=4 --dist loadfile
AXE := tests/browser/axe/node_modules/axe-core/axe.min.js
# The tests' key: long enough for the served mode's rule (workbench.settings.MIN_SECRET_KEY).
TEST_SECRET_KEY := tests-only-not-a-secret-tests-only-not-a-secret-0123456789

.PHONY: run test test-fast migrate demo install clean axe messages workflow-search bench

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

migrate: $(VENV)/.installed
	$(BIN)/python manage.py migrate --no-input

demo: migrate
	$(BIN)/python manage.py load_demo

# Embedded default: SQLite under var/, Celery tasks in-process, no service needed.
run: demo
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C stops)"
	$(BIN)/python manage.py runserver $(HOST):$(PORT) --noreload

# The declared layers first (import-linter; contracts in pyproject.toml), then the whole
# suite. DATABASE_URL and REDIS_URL, when set, put it on PostgreSQL
# with a real Celery worker on Redis; without them it runs on SQLite, tasks eager.
# Tests keep their uploads and exports under var/test, away from the demo's.
test: $(VENV)/.installed-dev $(AXE)
	$(BIN)/lint-imports
	rm -rf var/test
	DJANGO_SECRET_KEY=$${DJANGO_SECRET_KEY:-$(TEST_SECRET_KEY)} \
	WORKBENCH_VAR_DIR=$${WORKBENCH_VAR_DIR:-var/test} \
	  $(BIN)/python -m pytest $(TEST_WORKERS) $(PYTEST_ARGS)

# Every benchmark at SCALE items (10k, 100k or 1m), one process each, then one table of
# every target met or missed, written into docs/performance.md between its markers.
# PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) as for `make test`; the scripts that need
# them are skipped without. Not run by `make test` (which runs each at its smallest size).
SCALE ?= 10k
bench: $(VENV)/.installed-dev
	DJANGO_SECRET_KEY=$${DJANGO_SECRET_KEY:-$(TEST_SECRET_KEY)} \
	  $(BIN)/python benchmarks/suite.py --scale $(SCALE) --write docs/performance.md

# axe-core (npm) for the accessibility browser tests; no browser download.
$(AXE): tests/browser/axe/package.json tests/browser/axe/package-lock.json
	cd tests/browser/axe && npm ci --no-audit --no-fund --silent
	touch $@
axe: $(AXE)

# The translation catalogs (locale/): refresh from the code, then compile the .mo files
# that are committed beside them (xgettext and msgfmt from gettext are needed here only).
messages: $(VENV)/.installed
	$(BIN)/python manage.py makemessages -l zh_Hans --no-location --ignore=.venv --ignore=var \
	  --ignore=tests --ignore=benchmarks
	$(BIN)/python manage.py compilemessages --ignore=.venv

# Everything but the browser tests, for a quick loop.
test-fast: $(VENV)/.installed-dev
	$(BIN)/lint-imports
	DJANGO_SECRET_KEY=$${DJANGO_SECRET_KEY:-$(TEST_SECRET_KEY)} \
	WORKBENCH_VAR_DIR=$${WORKBENCH_VAR_DIR:-var/test} \
	  $(BIN)/python -m pytest -m "not browser" $(TEST_WORKERS) $(PYTEST_ARGS)

# A longer search of the whole-workflow property test than make test's (random seeds).
WORKFLOW_EXAMPLES ?= 300
workflow-search: $(VENV)/.installed-dev
	DJANGO_SECRET_KEY=$${DJANGO_SECRET_KEY:-$(TEST_SECRET_KEY)} \
	WORKBENCH_VAR_DIR=$${WORKBENCH_VAR_DIR:-var/test} WORKFLOW_SEARCH=1 \
	WORKFLOW_EXAMPLES=$(WORKFLOW_EXAMPLES) \
	  $(BIN)/python -m pytest tests/test_workflow_properties.py -p no:xdist \
	  --hypothesis-show-statistics -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var build *.egg-info
