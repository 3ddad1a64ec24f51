# loopwright: `make demo` and `make test` each do all their own set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WHEELS := $(HOME)/.cache/loopwright/wheels

.PHONY: demo test lint typecheck unit setup setup-local bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/loopwright run "Say hello through the echo tool" --model scripted:examples/echo.json --tools echo

lint: setup
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/ruff format --check src tests bench examples

typecheck: setup
	$(VENV)/bin/mypy

unit: setup
	$(VENV)/bin/pytest -q

test: lint typecheck unit

bench: setup
	$(PY) bench/overhead.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
