# The two commands of the README.  Both create .venv on first use, install the package with its
# dev, scip, dask and parquet extras pinned by requirements/constraints.txt, then run.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

DOCS   := $(VENV)/.docs-installed

.PHONY: demo test test-slow test-latest smoke lint bench notebooks docs lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml requirements/constraints.txt
	$(BIN)/python -m pip install --quiet --upgrade "pip==26.3"
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e ".[dev,scip,dask,parquet]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/clusteropt demo

test: $(STAMP)
	$(BIN)/ruff check clusteropt tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -m "not slow" -q -n 2

# The same tests on the newest versions pyproject.toml allows (what a plain `pip install .` resolves
# today, not the lock), then the solver-made slices of the record re-run there and compared with it
# (benchmarks/record_check.py --solvers: every version that differs from the lock is named).
# Not part of `make test`: it installs a second environment (.venv-latest) and takes about 15 minutes.
LATEST := .venv-latest
test-latest:
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade "pip==26.3"
	$(LATEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[dev,scip,dask,parquet]"
	$(LATEST)/bin/python -c "from clusteropt.provenance import environment, environment_text; print('newest allowed:', environment_text(environment()))"
	$(LATEST)/bin/python -m pytest -m "not slow" -q -n 2
	$(LATEST)/bin/python -m benchmarks.record_check --solvers --strict --jobs 2 --out out/test-latest

# The checks marked slow (deselected by `make test`): the benchmarks' quick modes, three notebooks,
# the large fuzz profiles and experiments, the rarer solver-state cases.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -q -n 2

# The wheel, installed (not editable) in a fresh environment outside the checkout: every kind through
# generate, build, solve with two solvers, export, solve-file, run, check, verify, and one quick
# experiment per system (.ci/smoke.py).  About 3 minutes, most of it the install.
smoke:
	PYTHON=$(PYTHON) .ci/wheel-smoke

# The manual (Sphinx: the guide, the paper pages, the CLI reference from the click commands, the
# notebooks as committed, the API reference from the docstrings); any warning fails the build.
$(DOCS): $(STAMP)
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e ".[dev,scip,dask,parquet,docs]"
	touch $(DOCS)

docs: $(DOCS)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html

lint: $(STAMP)
	$(BIN)/ruff check clusteropt tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

# Execute every notebook in quick mode and save it with its outputs (committed that way).
notebooks: $(STAMP)
	$(BIN)/python notebooks/execute.py

# Re-resolve the pins (run by hand when a dependency is to move; commit the result).
lock: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade -e ".[dev,scip,dask,parquet,docs,solvers]"
	$(BIN)/python -m pip freeze --exclude-editable --exclude clusteropt > requirements/constraints.txt

clean:
	rm -rf $(VENV) $(LATEST) .pytest_cache .ruff_cache docs/_build docs/api

# The commercial solvers for real: installs the solvers extra (the pip editions of Gurobi, CPLEX, Xpress and
# COPT, each with its bundled size-limited licence) into .venv, then runs the solver tests, those marked
# commercial among them (they skip, naming the package, where one is absent).
.PHONY: test-solvers
SOLVERS_STAMP := $(VENV)/.solvers-installed
$(SOLVERS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e ".[dev,scip,dask,parquet,solvers]"
	touch $(SOLVERS_STAMP)

test-solvers: $(SOLVERS_STAMP)
	$(BIN)/python -m pytest -m "not slow" -q -n 2 tests/solvers
