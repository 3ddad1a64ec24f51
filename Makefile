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

PEERS_VENV := bench/.venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed

$(PEERS_STAMP): bench/peers/requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet -r bench/peers/requirements.txt
	touch $(PEERS_STAMP)

# Regenerates every benchmark figure; the tables land in bench/results/ and docs/.
bench: setup $(PEERS_STAMP)
	mkdir -p bench/results
	$(PY) bench/overhead.py | tee bench/results/overhead.md
	$(PY) bench/peers/run.py --peers-python $(PEERS_VENV)/bin/python \
		--out bench/results/peers.json --chart docs/overhead-vs-n.png | tee bench/results/peers.md
	for script in bench/scrub.py bench/store.py bench/scale.py bench/server_load.py; do \
		if [ -f $$script ]; then $(PY) $$script | tee bench/results/$$(basename $$script .py).md; fi; \
	done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
