# `make run` and `make test` work on a fresh machine with only Python 3.11 and pip:
# each creates .venv if it is missing and installs the project into it first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: docs-regret run test test-slow check typecheck lint bench docs install clean

$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,distributed]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/dpkit report --out reports/out

# The slow checks (the README's full report, which `make run` reproduces) run with `make test-slow`.
# (Not `python -P`: the process-pool and Dask tests pickle test functions, which their workers import from the
# repository root; tests/test_packaging.py checks the installed layout from another directory instead.)
test: $(STAMP) check
	@command -v chromium >/dev/null || test -x /usr/bin/chromium || echo "notice: no Chromium here: the browser test of report.html (tests/reports/test_browser.py) skips; .ci/run installs it"
	@echo "make test: the fast tier (pytest -m 'not slow'); the slow tier, tests marked slow, runs with make test-slow"
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: $(STAMP)
	@echo "make test-slow: the slow tier (pytest -m slow: the README's full report and the long grids)"
	$(BIN)/python -m pytest -q -m slow

# the static checks of `make test`: ruff (lint and format) and mypy (strict on the accountant)
check: lint typecheck

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy reads the installed layout (dpkit.accountant, …): link the folders into .typecheck/dpkit first
typecheck: $(STAMP)
	rm -rf .typecheck && mkdir -p .typecheck/dpkit
	for f in dpkit/*; do ln -s ../../$$f .typecheck/dpkit/; done
	for p in accountant algorithms audits reports; do ln -s ../../$$p .typecheck/dpkit/$$p; done
	$(BIN)/mypy .typecheck/dpkit

docs: $(STAMP)
	$(BIN)/python docs/make_ledgers.py
	$(BIN)/python docs/make_audits.py
	$(BIN)/python docs/make_one_run.py

# the regret curves (~20 min on 2 cores) and LDP-UCRL-VTR's drift (~3 min)
docs-regret: $(STAMP)
	$(BIN)/python docs/make_regret.py
	$(BIN)/python docs/make_drift.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(BIN)/python bench/calibration.py
	$(BIN)/python bench/subsampled.py
	$(BIN)/python bench/audit.py
	$(BIN)/python bench/audit_scale.py
	$(BIN)/python bench/sequential.py
	$(BIN)/python bench/false_alarms.py
	$(BIN)/python bench/one_run.py
	$(BIN)/python bench/one_run_target.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/speed.py
	$(BIN)/python bench/regret.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache .typecheck reports/out
