# `make run` and `make test` work on a fresh machine with only Python 3.11 and pip:
# each creates .venv if it is missing and installs the project into it first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: docs-site docs-regret docs-figure2 docs-regret-tune run test test-all test-slow check typecheck lint lint-imports bench docs install clean

$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,distributed,docs]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/dpkit report --out reports/out

# Two tiers (pytest-xdist spreads each over every core; the 15 slowest tests are printed):
#   make test      the static checks and the fast tier (every module's fast tests, pytest -m 'not slow'): <= 5 min
#   make test-all  the static checks and both tiers: the fast one and the second (the statistical audits, slow
#                  cross-checks, whole reports and the browser test, marked slow); .ci/run runs it
#   make test-slow the second tier alone
# (Not `python -P`: the process-pool and Dask tests pickle test functions, which their workers import from the
# repository root; tests/test_packaging.py checks the installed layout from another directory instead.)
PYTEST := $(BIN)/python -m pytest -q -n auto --dist loadscope --durations=15 --durations-min=1

# The fast tier runs a quarter of each property test's Hypothesis examples (tests/support/tiers.py); EXAMPLES=full
# runs them all (.ci/run does), as the second tier always does.
EXAMPLES ?= fast

test: $(STAMP) check
	@echo "make test: the static checks and the fast tier (pytest -m 'not slow', $(EXAMPLES) Hypothesis examples); make test-all adds the second tier"
	DPKIT_EXAMPLES=$(EXAMPLES) $(PYTEST) -m "not slow"

test-all: $(STAMP) check
	@command -v chromium >/dev/null || test -x /usr/bin/chromium || echo "notice: no Chromium here: the browser tests skip; .ci/run installs it"
	@echo "make test-all: the static checks and both tiers (the fast one and the slow one)"
	$(PYTEST)

test-slow: $(STAMP)
	@echo "make test-slow: the second tier alone (pytest -m slow)"
	$(PYTEST) -m slow

# the static checks of `make test`: ruff (lint and format), mypy (strict on the accountant) and the layers
check: lint typecheck lint-imports

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy reads the installed layout (dpkit.accountant, …): link the folders into .typecheck/dpkit first
typecheck: $(STAMP)
	rm -rf .typecheck && mkdir -p .typecheck/dpkit
	for f in dpkit/*; do ln -s ../../$$f .typecheck/dpkit/; done
	for p in accountant algorithms audits reports; do ln -s ../../$$p .typecheck/dpkit/$$p; done
	$(BIN)/mypy .typecheck/dpkit

# the import-linter contracts of pyproject.toml (layers, no cycles) on the installed layout: grimp walks folders and
# follows no links, so the sources are copied into .layout/dpkit, and lint-imports runs there (it puts its working
# directory first on sys.path)
lint-imports: $(STAMP)
	rm -rf .layout && mkdir -p .layout/dpkit
	cp -r dpkit/. .layout/dpkit/
	for p in accountant algorithms audits reports; do cp -r $$p .layout/dpkit/$$p; done
	find .layout -name __pycache__ -prune -exec rm -rf {} +
	cd .layout && ../$(BIN)/lint-imports ../pyproject.toml --no-cache

docs: $(STAMP)
	$(BIN)/python docs/make_ledgers.py
	$(BIN)/python docs/make_audits.py
	$(BIN)/python docs/make_one_run.py

# the documentation site (mkdocs.yml; the pages are docs/): strict, so a warning or a broken link fails the build.
# The command pages are generated from `dpkit COMMAND --help` at build time (docs/hooks.py). Open build/site/index.html.
docs-site: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# the regret curves (every part; `python docs/make_regret.py --only PART` for one, `--render` to re-render the
# page from docs/regret_data/) and LDP-UCRL-VTR's drift (~3 min). REGRET_ARGS go to make_regret.py: on a Dask
# cluster, `make docs-regret REGRET_ARGS="--executor dask --scheduler tcp://HOST:8786"` (docs/how-to/dask.md)
REGRET_ARGS ?=
docs-regret: $(STAMP)
	$(BIN)/python docs/make_regret.py $(REGRET_ARGS)
	$(BIN)/python docs/make_drift.py

# seed 000's Figure 2 alone, at every S the page reports (S = 2 to 5: ~10 min on a quiet 2-core machine; the
# time is in docs/regret.md's closing note), re-rendering the page; on Dask as above (REGRET_ARGS)
docs-figure2: $(STAMP)
	$(BIN)/python docs/make_regret.py --only seed000 $(REGRET_ARGS)

# seed 000's grid search of its bonus constants c (writes docs/regret_tuning.json, which docs-regret reads)
docs-regret-tune: $(STAMP)
	$(BIN)/python docs/make_regret.py --tune

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
	$(BIN)/python bench/rl_throughput.py
	$(BIN)/python bench/regret.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache .typecheck .layout reports/out
