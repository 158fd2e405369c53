# The two commands a newcomer needs:  make demo  and  make test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
export FAIRMON_DATA_DIR ?= $(abspath ../shared/datasets)
PYTEST_ARGS ?=

.PHONY: venv demo test test-fast lint typecheck bench-smoke clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $@

## run the demo monitoring cycle (embedded Postgres unless FAIRMON_DATABASE_URL / DB is set)
demo: venv
	$(BIN)/fairmon demo $(if $(DB),--db $(DB),)

## lint, type-check and run the whole test suite (starts PostgreSQL if needed)
test: venv
	./scripts/ensure-services.sh
	./scripts/ensure-system-deps.sh
	./scripts/ensure-mlflow.sh
	$(BIN)/ruff check fairmon fairmon_airflow dags tests benchmarks
	$(BIN)/mypy fairmon fairmon_airflow
	$(BIN)/pytest -q --doctest-modules fairmon
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/pytest $(PYTEST_ARGS)

## the fast subset for development (seconds)
test-fast: venv
	$(BIN)/pytest -m "not slow and not airflow" -x -q $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check fairmon fairmon_airflow dags tests benchmarks

typecheck: venv
	$(BIN)/mypy fairmon fairmon_airflow

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
